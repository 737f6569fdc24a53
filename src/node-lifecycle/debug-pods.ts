/**
 * Debugging pods: the pod `kubectl debug node/NAME --image IMAGE` makes (its legacy profile: the
 * host's PID, network and IPC namespaces, the host's root filesystem at /host, pinned to the node
 * by nodeName, tolerating every taint, restartPolicy Never, named node-debugger-NODE-xxxxx),
 * marked with its expiry. Every replica that records a cluster's history sweeps that cluster's
 * expired debugging pods, so a pod outlives its TTL by at most a sweep even when the replica
 * that made it is gone.
 */
import { randomInt } from "node:crypto";
import type { Principal } from "../auth/principal.js";
import type { ClusterRegistry } from "../cluster/cluster-registry.js";
import { isNotFound } from "../cluster/kube-client.js";
import type { CachedNode } from "../cluster/model.js";
import type { Database } from "../db/database.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import type { InventoryService } from "../inventory/inventory-service.js";
import { PeriodicTask } from "../lifecycle/periodic-task.js";
import type { Logger } from "../log/logger.js";
import { checkReason, kube } from "../maintenance/maintenance-service.js";
import type { PubSub } from "../pubsub/pubsub.js";

/** Marks the pods made here: the sweep lists only these. */
export const DEBUG_POD_LABEL = "node-inventory.io/debug-pod";
export const DEBUG_EXPIRES_ANNOTATION = "node-inventory.io/debug-expires-at";
export const DEBUG_REQUESTER_ANNOTATION = "node-inventory.io/debug-requested-by";

export const DEBUG_TTL = { defaultSeconds: 3600, minSeconds: 60, maxSeconds: 86_400 } as const;
const MAX_IMAGE_LENGTH = 512;
/** Debugging pods listed per node or swept per cluster and run at most. */
const LIST_LIMIT = 500;

/** k8s.io/apimachinery/pkg/util/rand's alphabet: no vowels, no look-alike digits. */
const ALPHABET = "bcdfghjklmnpqrstvwxz2456789";

/** utilrand.String(n), as kubectl names a node debugger. */
export function randomSuffix(n = 5): string {
  let out = "";
  for (let i = 0; i < n; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

export interface DebugPodView {
  namespace: string;
  name: string;
  image: string;
  expiresAt: Date;
  requestedBy: string | null;
  attachCommand: string;
}

/** kubectl's node debugger pod (debug.go generateNodeDebugPod, legacy profile), with our marks. */
export function debugPodManifest(node: string, image: string, namespace: string, suffix: string, expiresAt: Date, requestedBy: string): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: `node-debugger-${node}-${suffix}`,
      namespace,
      labels: { [DEBUG_POD_LABEL]: "true" },
      annotations: { [DEBUG_EXPIRES_ANNOTATION]: expiresAt.toISOString(), [DEBUG_REQUESTER_ANNOTATION]: requestedBy },
    },
    spec: {
      containers: [{ name: "debugger", image, resources: {}, terminationMessagePolicy: "File", volumeMounts: [{ name: "host-root", mountPath: "/host" }] }],
      hostIPC: true,
      hostNetwork: true,
      hostPID: true,
      nodeName: node,
      restartPolicy: "Never",
      tolerations: [{ operator: "Exists" }],
      volumes: [{ name: "host-root", hostPath: { path: "/" } }],
    },
  };
}

/** The line that attaches a shell to the debugger, as kubectl's own `-it` would. */
export function attachCommand(cluster: string, namespace: string, name: string): string {
  return `kubectl --context ${shellWord(cluster)} exec -it -n ${shellWord(namespace)} ${shellWord(name)} -c debugger -- sh`;
}

/** A word safe to paste into a POSIX shell. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9@%+=:,./_-]+$/.test(text) ? text : `'${text.replace(/'/g, `'"'"'`)}'`;
}

type Json = Record<string, any>;

function viewOf(cluster: string, raw: Json): DebugPodView | undefined {
  const annotations = (raw.metadata?.annotations ?? {}) as Record<string, string>;
  const expires = Date.parse(annotations[DEBUG_EXPIRES_ANNOTATION] ?? "");
  if (!Number.isFinite(expires)) return undefined;
  const namespace = String(raw.metadata?.namespace ?? "");
  const name = String(raw.metadata?.name ?? "");
  return {
    namespace,
    name,
    image: String(raw.spec?.containers?.[0]?.image ?? ""),
    expiresAt: new Date(expires),
    requestedBy: annotations[DEBUG_REQUESTER_ANNOTATION] ?? null,
    attachCommand: attachCommand(cluster, namespace, name),
  };
}

export interface DebugPodsOptions {
  clusters: ClusterRegistry;
  inventory: InventoryService;
  database: Database;
  pubsub: PubSub;
  logger: Logger;
  /** Whether this replica records `cluster`'s history (and so sweeps it). */
  leads(cluster: string): boolean;
  /** Where debugging pods are made (kubectl's: the current namespace). */
  namespace?: string;
  /** Between sweeps (default 15 s). */
  sweepMs?: number;
  /** Kubernetes calls for a caller carry Impersonate-User: <subject>. */
  impersonate: boolean;
}

export class DebugPods {
  private readonly sweeper: PeriodicTask;
  private readonly namespace: string;

  constructor(private readonly o: DebugPodsOptions) {
    this.namespace = o.namespace ?? "default";
    this.sweeper = new PeriodicTask({
      run: () => this.sweep(),
      delayMs: () => o.sweepMs ?? 15_000,
      onError: (error) => o.logger.warn({ err: (error as Error).message }, "debug pod sweep failed"),
    });
  }

  start(): void {
    this.sweeper.start();
  }

  stop(): Promise<void> {
    return this.sweeper.stop();
  }

  /** debugNode: makes the pod, records DEBUGGED, returns it. */
  async create(principal: Principal, clusterName: string | null | undefined, name: string, image: string, reason: string, ttlSeconds: number | null | undefined): Promise<DebugPodView> {
    const why = checkReason(reason);
    if (!why) throw new AppError(ErrorCode.BAD_USER_INPUT, "reason: say why the node is debugged");
    if (!image.trim() || image.length > MAX_IMAGE_LENGTH || /\s/.test(image)) throw new AppError(ErrorCode.BAD_USER_INPUT, `image: an image reference without spaces, at most ${MAX_IMAGE_LENGTH} characters`);
    const ttl = ttlSeconds ?? DEBUG_TTL.defaultSeconds;
    if (!Number.isInteger(ttl) || ttl < DEBUG_TTL.minSeconds || ttl > DEBUG_TTL.maxSeconds) throw new AppError(ErrorCode.BAD_USER_INPUT, `ttlSeconds: between ${DEBUG_TTL.minSeconds} and ${DEBUG_TTL.maxSeconds}, got ${ttl}`);
    const node = this.o.inventory.node(clusterName, name);
    const client = this.o.clusters.get(node.cluster)!.client;
    const expiresAt = new Date(Date.now() + ttl * 1000);
    const manifest = debugPodManifest(node.name, image, this.namespace, randomSuffix(), expiresAt, principal.subject);
    const headers: Record<string, string> = this.o.impersonate ? { "Impersonate-User": principal.subject } : {};
    const created = await kube(node.cluster, () => client.request<Json>("POST", `/api/v1/namespaces/${encodeURIComponent(this.namespace)}/pods`, {}, manifest, { headers }));
    const view = viewOf(node.cluster, created)!;
    this.o.logger.info({ cluster: node.cluster, node: node.name, actor: principal.subject, pod: `${view.namespace}/${view.name}`, image, ttlSeconds: ttl }, "debug pod created");
    await this.record(node, principal, why, view, ttl);
    // This replica deletes it on time if it is still here; the sweep of any leader otherwise.
    setTimeout(() => void this.remove(node.cluster, view, true), ttl * 1000).unref();
    return view;
  }

  /** The node's debugging pods, from the API (the cache keeps neither their image nor their expiry). */
  async list(node: CachedNode): Promise<DebugPodView[]> {
    const client = this.o.clusters.get(node.cluster)?.client;
    if (!client) return [];
    const list = await kube(node.cluster, () =>
      client.getJson<{ items: Json[] }>("/api/v1/pods", { labelSelector: `${DEBUG_POD_LABEL}=true`, fieldSelector: `spec.nodeName=${node.name}`, limit: LIST_LIMIT }, 15_000),
    );
    return list.items
      .filter((raw) => !raw.metadata?.deletionTimestamp)
      .map((raw) => viewOf(node.cluster, raw))
      .filter((v): v is DebugPodView => v !== undefined)
      .sort((a, b) => a.expiresAt.getTime() - b.expiresAt.getTime());
  }

  /** Deletes every expired debugging pod of the clusters this replica leads. */
  async sweep(): Promise<void> {
    for (const cache of this.o.clusters.all()) {
      if (!this.o.leads(cache.name)) continue;
      const list = await cache.client.getJson<{ items: Json[] }>("/api/v1/pods", { labelSelector: `${DEBUG_POD_LABEL}=true`, limit: LIST_LIMIT }, 15_000);
      for (const raw of list.items) {
        const view = viewOf(cache.name, raw);
        if (view && view.expiresAt.getTime() <= Date.now() && !raw.metadata?.deletionTimestamp) await this.remove(cache.name, view, false);
      }
    }
  }

  private async remove(cluster: string, view: DebugPodView, own: boolean): Promise<void> {
    // The replica that made it may delete its own on time; otherwise only the cluster's leader, checked here.
    if (!own && !this.o.leads(cluster)) return;
    const client = this.o.clusters.get(cluster)?.client;
    if (!client) return;
    try {
      await client.request("DELETE", `/api/v1/namespaces/${encodeURIComponent(view.namespace)}/pods/${encodeURIComponent(view.name)}`, {}, { gracePeriodSeconds: 0 });
      this.o.logger.info({ cluster, pod: `${view.namespace}/${view.name}` }, "debug pod deleted at its expiry");
    } catch (error) {
      if (!isNotFound(error)) this.o.logger.warn({ cluster, pod: `${view.namespace}/${view.name}`, err: (error as Error).message }, "could not delete an expired debug pod");
    }
  }

  private async record(node: CachedNode, principal: Principal, reason: string, view: DebugPodView, ttl: number): Promise<void> {
    const row = await this.o.database.prisma.maintenanceEvent.create({
      data: {
        cluster: node.cluster,
        node: node.name,
        kind: "DEBUGGED",
        actor: principal.subject,
        reason,
        at: new Date(),
        pod: `${view.namespace}/${view.name}`,
        detail: `image=${view.image} ttlSeconds=${ttl}`,
        dedupeKey: `debug:${node.cluster}/${view.namespace}/${view.name}`,
      },
      select: { id: true },
    });
    await this.o.pubsub
      .publish({ cluster: node.cluster, node: node.name, transitions: [], maintenance: [String(row.id)], at: new Date().toISOString() })
      .catch((error) => this.o.logger.warn({ err: (error as Error).message }, "could not publish a debug event"));
  }
}
