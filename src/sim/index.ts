/**
 * Kubernetes API simulator: the embedded demo cluster and the test double for
 * everything that talks to Kubernetes. Programmatic API:
 *
 *   const sim = await startSimulator({ nodes: 50, seed: 1, churn: 0 });
 *   sim.url                    // "http://127.0.0.1:PORT"
 *   sim.kubeconfig()           // kubeconfig YAML whose context/cluster/user are sim.name
 *   await sim.writeKubeconfig(path)
 *   sim.cluster                // SimCluster: act directly (setNodeCondition, addNode,
 *                              // removeNode, advance(ms), stopKubelet, get/list objects)
 *   sim.adminToken             // the kubeconfig user's bearer token (cluster-admin)
 *   sim.createToken(ns, sa)    // a ServiceAccount token, as the TokenRequest API mints it
 *   sim.dropConnections()      // kill every open watch and keep-alive socket
 *   await sim.restart({ resourceVersionsBack }) // the apiserver goes and comes back
 *   sim.stats()                // request counts by "verb resource[/sub]"; sim.requestLog()
 *   await sim.stop()           // idempotent; closes every watch
 *
 * `runSimCommand(argv)` in ./sim-command.js is the `node-inventory sim` command.
 * The layout (store, controllers/, apiserver/) and where new things go: ./README.md.
 */
import { createServer, type Server } from "node:http";
import { createServer as createTlsServer } from "node:https";
import { writeFile } from "node:fs/promises";
import type { Socket } from "node:net";
import { SimCluster, R } from "./cluster.js";
import { generateCluster } from "./generator.js";
import { ApiServer, type RequestRecord } from "./apiserver/api-server.js";
import { kubeconfigYaml } from "./kubeconfig.js";
import { selfSignedCertificate } from "./tls.js";
import { BOOTSTRAP_CLUSTER_ROLES, BOOTSTRAP_CLUSTER_ROLE_BINDINGS } from "./apiserver/bootstrap-policy.js";
import { ServiceAccountController } from "./controllers/service-account.js";
import { NamespaceController } from "./controllers/namespace.js";
import { GroundTruthLog } from "./ground-truth.js";

export { SimCluster, R } from "./cluster.js";
export type { RequestRecord } from "./apiserver/api-server.js";
export type { KObject, Entry } from "./store.js";

export interface SimulatorOptions {
  host?: string;
  port?: number;
  /** Number of nodes to generate (default 50). */
  nodes?: number;
  /** Average pods per node including daemon pods (default 30). */
  podsPerNode?: number;
  seed?: number;
  /** kubeconfig context/cluster/user name (default "sim"). */
  name?: string;
  /**
   * Churn scenarios per simulated minute (default 0). At 0 nothing changes on
   * its own except kube-node-lease renewals (every 10 simulated seconds): node
   * objects stay still. Above 0, kubelets also post node status heartbeats and
   * scenarios run: condition flaps, a node going NotReady or Unknown and back,
   * kubelet upgrades, nodes added and removed. Metrics move with time regardless.
   */
  churn?: number;
  /** Simulated seconds per wall second (default 1). */
  clockSpeed?: number;
  /** Serve HTTPS with a self-signed certificate (its CA goes in the kubeconfig). */
  tls?: boolean;
  /** Start of simulated time in ms since the epoch (default: now). */
  startTime?: number;
  /** Watch history kept per resource (default 10,000 events). */
  historySize?: number;
  /** Wall ms between BOOKMARK events (default 60,000). */
  bookmarkIntervalMs?: number;
  /**
   * Enforce what a real apiserver would (default false): bearer-token
   * authentication (401) and RBAC authorization (403) from the ClusterRoles,
   * Roles and bindings in the cluster, which starts with the bootstrap policy.
   */
  rbac?: boolean;
  /**
   * Serve the watch-list protocol (sendInitialEvents), as apiservers do since 1.32 (default
   * true). false answers like a server with the WatchList feature gate off: 422.
   */
  watchList?: boolean;
  /** Append every node change, eviction and restart to this JSON-lines file (./ground-truth.ts; default off). */
  groundTruthFile?: string;
}

export interface RestartOptions {
  /** Wall ms the apiserver stays down (default 0). */
  downMs?: number;
  /** Come back with every object's resourceVersion counted again from 1 (an etcd restored from a backup). */
  resourceVersionsBack?: boolean;
}

/** A running simulator. */
export interface Simulator {
  readonly url: string;
  readonly name: string;
  readonly cluster: SimCluster;
  /** Whether authentication and RBAC are enforced. */
  readonly rbac: boolean;
  /** The administrator's bearer token (the kubeconfig's user, bound to cluster-admin). */
  readonly adminToken: string;
  /** A token for a ServiceAccount that exists, as `kubectl create token` gets it (default one hour). */
  createToken(namespace: string, serviceAccount: string, expirationSeconds?: number): string;
  kubeconfig(): string;
  writeKubeconfig(path: string): Promise<void>;
  /** Destroy every open socket: watches end, keep-alive connections drop. */
  dropConnections(): void;
  /** Request counts by "verb resource[/subresource]". */
  stats(): Record<string, number>;
  /** The most recent requests, oldest first. */
  requestLog(): readonly RequestRecord[];
  /** Stop serving, as an apiserver restarting, and serve the same state again on the same port. */
  restart(options?: RestartOptions): Promise<void>;
  stop(): Promise<void>;
}

const TICK_MS = 100;

/** Generate a cluster and serve it over HTTP(S). */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const name = options.name ?? "sim";
  const cluster = new SimCluster({
    seed: options.seed ?? 1,
    clockSpeed: options.clockSpeed ?? 1,
    churn: options.churn ?? 0,
    ...(options.startTime !== undefined ? { startTime: options.startTime } : {}),
    ...(options.historySize !== undefined ? { historySize: options.historySize } : {}),
  });
  generateCluster(cluster, { nodes: options.nodes ?? 50, ...(options.podsPerNode !== undefined ? { podsPerNode: options.podsPerNode } : {}) });
  cluster.store.sortKeys();
  // A cluster's metrics-server has scraped every node before anyone asks.
  cluster.nodeUsage.scrapeAll();
  const host = options.host ?? "127.0.0.1";
  const rbac = options.rbac ?? false;
  if (rbac) {
    for (const role of BOOTSTRAP_CLUSTER_ROLES) cluster.create(R.clusterroles, structuredClone(role));
    for (const binding of BOOTSTRAP_CLUSTER_ROLE_BINDINGS) cluster.create(R.clusterrolebindings, structuredClone(binding));
    new ServiceAccountController(cluster).start();
  }
  const namespaces = rbac ? new NamespaceController(cluster) : undefined;
  namespaces?.start();
  const router = new ApiServer(cluster, {
    listenHost: host,
    scheme: options.tls ? "https" : "http",
    rbac,
    ...(namespaces ? { namespaces } : {}),
    ...(options.bookmarkIntervalMs !== undefined ? { bookmarkIntervalMs: options.bookmarkIntervalMs } : {}),
    ...(options.watchList === false ? { watchList: false } : {}),
  });
  const adminToken = router.access.authenticator.adminToken;
  const tls = options.tls ? selfSignedCertificate(host) : undefined;
  const server: Server = tls ? createTlsServer({ key: tls.key, cert: tls.cert }, router.handle) : createServer(router.handle);
  server.keepAliveTimeout = 65_000;
  const sockets = new Set<Socket>();
  server.on(tls ? "secureConnection" : "connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  const url = `${tls ? "https" : "http"}://${host.includes(":") ? `[${host}]` : host}:${port}`;
  router.serverAddress = `${host}:${port}`;
  let ticker = setInterval(() => cluster.tick(), TICK_MS);
  ticker.unref();
  const groundTruth = options.groundTruthFile ? new GroundTruthLog(options.groundTruthFile, name, () => cluster.clock.now()) : undefined;
  if (groundTruth) {
    // The generated nodes first, as if each had just been created.
    for (const e of cluster.store.list(R.nodes)) groundTruth.observe({ type: "ADDED", resource: R.nodes, rv: e.rv, entry: e });
    cluster.store.subscribe((e) => groundTruth.observe(e));
    cluster.evictionListeners.add((pod) => groundTruth.evicted(pod));
  }
  let stopping: Promise<void> | undefined;
  const caData = tls ? Buffer.from(tls.cert).toString("base64") : undefined;
  const dropConnections = () => {
    router.closeWatches();
    for (const s of sockets) s.destroy();
  };
  return {
    url,
    name,
    cluster,
    rbac,
    adminToken,
    createToken(namespace, serviceAccount, expirationSeconds = 3600) {
      const sa = cluster.store.get(R.serviceaccounts, `${namespace}/${serviceAccount}`);
      if (!sa) throw new Error(`serviceaccounts "${serviceAccount}" not found in namespace "${namespace}"`);
      return router.access.authenticator.mint(namespace, serviceAccount, sa.obj.metadata.uid!, ["https://kubernetes.default.svc.cluster.local"], expirationSeconds).token;
    },
    kubeconfig: () => kubeconfigYaml(name, url, caData, adminToken),
    writeKubeconfig: (path) => writeFile(path, kubeconfigYaml(name, url, caData, adminToken), { mode: 0o600 }),
    dropConnections,
    stats: () => Object.fromEntries(router.counts),
    requestLog: () => router.log,
    async restart(restartOptions = {}) {
      clearInterval(ticker);
      router.closeWatches();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (restartOptions.downMs) await new Promise((r) => setTimeout(r, restartOptions.downMs));
      if (restartOptions.resourceVersionsBack) cluster.store.renumber();
      groundTruth?.restarted(cluster.store.resourceVersion, Boolean(restartOptions.resourceVersionsBack));
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve();
        });
      });
      ticker = setInterval(() => cluster.tick(), TICK_MS);
      ticker.unref();
    },
    stop() {
      stopping ??= (async () => {
        clearInterval(ticker);
        server.close();
        router.dispose();
        groundTruth?.close();
        for (const s of sockets) s.destroy();
        await new Promise<void>((resolve) => (server.listening ? server.once("close", () => resolve()) : resolve()));
      })();
      return stopping;
    },
  };
}

/** Storage names of the simulated resources, for direct reads through `cluster.get/list`. */
export const RESOURCES = R;
