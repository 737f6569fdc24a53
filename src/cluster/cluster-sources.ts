import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { ConfigError, type ClustersConfig } from "../config/config.js";
import { DEFAULT_SERVICE_ACCOUNT_DIR, IN_CLUSTER_NAME, inClusterAvailable, inClusterKubeConfig } from "./in-cluster.js";

/** One cluster to watch: its name (the context name) and how to reach it. */
export interface ClusterSource {
  name: string;
  kubeConfig: KubeConfig;
  /** The embedded simulator, not a real cluster (`Cluster.simulated`). */
  simulated?: boolean;
}

/** Where the clusters come from, decided once at start. */
export type ClusterPlan = { kind: "kubeconfig"; sources: ClusterSource[]; files: string[] } | { kind: "in-cluster"; sources: ClusterSource[] } | { kind: "simulator"; nodes: number };

/** The embedded demo cluster: small, with gentle churn so the inventory visibly lives. */
export const DEFAULT_SIMULATED_NODES = 12;

/**
 * kubeconfig contexts if a kubeconfig is given or found, else the in-cluster service
 * account, else the embedded simulator. `--simulate` forces the simulator.
 */
export function planClusters(config: ClustersConfig, env: NodeJS.ProcessEnv = process.env): ClusterPlan {
  if (config.simulate !== undefined) return { kind: "simulator", nodes: config.simulate };
  const defaultFile = join(env.HOME ?? homedir(), ".kube", "config");
  const files = config.kubeconfigs.length ? config.kubeconfigs : existsSync(defaultFile) ? [defaultFile] : [];
  if (files.length) return { kind: "kubeconfig", sources: fromKubeconfigs(files, config.contexts), files };
  const serviceAccountDir = config.serviceAccountDir ?? DEFAULT_SERVICE_ACCOUNT_DIR;
  if (inClusterAvailable(serviceAccountDir, env)) {
    return { kind: "in-cluster", sources: [{ name: IN_CLUSTER_NAME, kubeConfig: inClusterKubeConfig(serviceAccountDir, env) }] };
  }
  if (config.simulatorFallback === false) throw new ConfigError(NO_CLUSTER);
  return { kind: "simulator", nodes: DEFAULT_SIMULATED_NODES };
}

/** Why a start without the simulator fallback (the container image) stops, and what to do. */
const NO_CLUSTER =
  "no cluster to watch: no kubeconfig (--kubeconfig / KUBECONFIG, or ~/.kube/config) and no in-cluster service account. " +
  "Mount a kubeconfig and set KUBECONFIG, run in a pod with a service account, or pass --simulate N (SIMULATE=N) to serve a simulated cluster on purpose";

/** Every context of the files (the first file defining a name wins, as kubectl merges), narrowed to `only`. */
export function fromKubeconfigs(files: string[], only: string[]): ClusterSource[] {
  const merged = new KubeConfig();
  for (const file of files) {
    if (!existsSync(file)) throw new ConfigError(`kubeconfig ${file}: no such file`);
    const one = new KubeConfig();
    try {
      one.loadFromFile(file);
    } catch (error) {
      throw new ConfigError(`kubeconfig ${file}: ${(error as Error).message.split("\n")[0]}`);
    }
    const has = (list: { name: string }[], name: string) => list.some((item) => item.name === name);
    for (const c of one.clusters) if (!has(merged.clusters, c.name)) merged.clusters.push(c);
    for (const u of one.users) if (!has(merged.users, u.name)) merged.users.push(u);
    for (const c of one.contexts) if (!has(merged.contexts, c.name)) merged.contexts.push(c);
  }
  const unknown = only.filter((name) => !merged.contexts.some((c) => c.name === name));
  if (unknown.length) {
    throw new ConfigError(`--context ${unknown.join(", ")}: not in the kubeconfig (contexts: ${merged.contexts.map((c) => c.name).join(", ") || "none"})`);
  }
  const contexts = only.length ? merged.contexts.filter((c) => only.includes(c.name)) : merged.contexts;
  if (contexts.length === 0) throw new ConfigError(`kubeconfig ${files.join(":")}: no contexts`);
  return contexts.map((context) => {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: merged.clusters.map(allowPlainHttp),
      users: merged.users,
      contexts: merged.contexts,
      currentContext: context.name,
    });
    if (!kubeConfig.getCurrentCluster()) throw new ConfigError(`kubeconfig context ${context.name}: its cluster is not defined`);
    return { name: context.name, kubeConfig };
  });
}

/**
 * client-node 1.x refuses an http:// server unless skipTLSVerify is set, although there is no
 * TLS to verify (kubectl accepts such kubeconfigs, e.g. for `kubectl proxy`). Setting it for
 * plain-HTTP servers only changes nothing else.
 */
function allowPlainHttp<C extends { server: string; skipTLSVerify?: boolean }>(cluster: C): C {
  return cluster.server.startsWith("http://") ? { ...cluster, skipTLSVerify: true } : cluster;
}

/** A single-context source from kubeconfig text (the embedded simulator writes one). */
export function sourceFromKubeconfigText(name: string, text: string): ClusterSource {
  const parsed = new KubeConfig();
  parsed.loadFromString(text);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: parsed.clusters.map(allowPlainHttp),
    users: parsed.users,
    contexts: parsed.contexts,
    currentContext: parsed.currentContext,
  });
  return { name, kubeConfig };
}
