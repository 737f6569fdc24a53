/**
 * kube-proxy's mode (iptables, ipvs, nftables) where it can be read: the `--proxy-mode` flag of
 * the kube-proxy DaemonSet in kube-system, else the `mode` of the configuration file its
 * `--config` names, from the kube-proxy ConfigMap (kubeadm's layout; an empty mode is iptables,
 * kube-proxy's default on Linux). A node has the mode when a pod of that DaemonSet runs on it.
 * Read on demand, one read per cluster a minute; anything not readable is null, never a guess.
 */
import type { ClusterRegistry } from "../cluster/cluster-registry.js";
import type { CachedNode } from "../cluster/model.js";

type Json = Record<string, any>;

const TTL_MS = 60_000;
const MODES = new Set(["iptables", "ipvs", "nftables", "kernelspace", "userspace"]);

/** The mode a kube-proxy container's command line sets, "config" when it defers to --config, or undefined. */
export function modeFromFlags(words: readonly string[]): string | "config" | undefined {
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word.startsWith("--proxy-mode=")) return word.slice("--proxy-mode=".length) || "iptables";
    if (word === "--proxy-mode") return words[i + 1] || "iptables";
  }
  return words.some((w) => w.startsWith("--config")) ? "config" : undefined;
}

/** `mode:` of a KubeProxyConfiguration written as YAML ("" is iptables). */
export function modeFromConfig(text: string): string | undefined {
  const match = /^mode:\s*["']?([A-Za-z]*)["']?\s*$/m.exec(text);
  if (!match) return /^kind:\s*KubeProxyConfiguration/m.test(text) ? "iptables" : undefined;
  return match[1] || "iptables";
}

export class KubeProxyModes {
  private readonly cache = new Map<string, { at: number; mode: Promise<string | null> }>();

  constructor(private readonly clusters: ClusterRegistry) {}

  /** The node's kube-proxy mode, or null when no kube-proxy pod runs on it or its mode cannot be read. */
  async forNode(node: CachedNode): Promise<string | null> {
    const cache = this.clusters.get(node.cluster);
    const runsKubeProxy = [...(cache?.podsOn(node.name) ?? [])].some((p) => p.namespace === "kube-system" && p.daemonSet && p.ownerName === "kube-proxy");
    if (!runsKubeProxy) return null;
    let known = this.cache.get(node.cluster);
    if (!known || Date.now() - known.at >= TTL_MS) this.cache.set(node.cluster, (known = { at: Date.now(), mode: this.read(node.cluster) }));
    return known.mode;
  }

  private async read(cluster: string): Promise<string | null> {
    const client = this.clusters.get(cluster)?.client;
    if (!client) return null;
    try {
      const ds = await client.getJson<Json>("/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy", {}, 10_000);
      const container = ((ds.spec?.template?.spec?.containers ?? []) as Json[]).find((c) => c.name === "kube-proxy");
      const words = [...(container?.command ?? []), ...(container?.args ?? [])].filter((w): w is string => typeof w === "string");
      const flag = modeFromFlags(words);
      if (flag !== "config") return flag && MODES.has(flag) ? flag : null;
      const cm = await client.getJson<Json>("/api/v1/namespaces/kube-system/configmaps/kube-proxy", {}, 10_000);
      const text = Object.values((cm.data ?? {}) as Record<string, unknown>).find((v): v is string => typeof v === "string" && /KubeProxyConfiguration/.test(v));
      const mode = text === undefined ? undefined : modeFromConfig(text);
      return mode && MODES.has(mode) ? mode : null;
    } catch {
      // Not there, or not ours to read (the base role has no ConfigMaps): not known.
      return null;
    }
  }
}
