/**
 * The kubelet's running configuration, read through the apiserver's node proxy
 * (GET /api/v1/nodes/NAME/proxy/configz, `get nodes/proxy`), and the arithmetic that explains a
 * node's allocatable: capacity − kubeReserved − systemReserved − evictionHard (the kubelet's
 * GetNodeAllocatableAbsolute / hardEvictionReservation, a percentage threshold taken of capacity
 * in float32 as the kubelet holds it). Read on demand only, never on the watch path, cached
 * briefly, a few at a time per cluster.
 */
import type { ClusterRegistry } from "../cluster/cluster-registry.js";
import { kubeErrorDetail } from "../cluster/kube-client.js";
import type { CachedNode } from "../cluster/model.js";
import { bytes, cpuMillicores, formatBytes, formatMillicores, parseQuantity } from "../k8s/quantity.js";

export interface KubeletConfigView {
  maxPods: number | null;
  cgroupDriver: string | null;
  kubeReserved: Readonly<Record<string, string>>;
  systemReserved: Readonly<Record<string, string>>;
  evictionHard: Readonly<Record<string, string>>;
}

/** The configuration, or why there is none (the apiserver's or kubelet's own words). */
export type KubeletConfigRead = { config: KubeletConfigView; reason: null } | { config: null; reason: string };

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : {});

/** Valid quantities only, at most a few dozen entries (a kubelet has a handful). */
function quantities(value: unknown, percentAllowed = false): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(obj(value)).slice(0, 64)) {
    if (typeof v !== "string" || key.length > 253) continue;
    if (percentAllowed && /^\d+(\.\d+)?%$/.test(v)) {
      out[key] = v;
      continue;
    }
    try {
      parseQuantity(v);
      out[key] = v;
    } catch {
      // a value the kubelet could not have loaded: left out
    }
  }
  return out;
}

/** The fields served of a /configz answer ({ kubeletconfig: KubeletConfiguration }). */
export function readConfigz(raw: unknown): KubeletConfigView {
  const c = obj(obj(raw).kubeletconfig);
  return {
    maxPods: typeof c.maxPods === "number" && Number.isSafeInteger(c.maxPods) ? c.maxPods : null,
    cgroupDriver: typeof c.cgroupDriver === "string" ? c.cgroupDriver.slice(0, 64) : null,
    kubeReserved: quantities(c.kubeReserved),
    systemReserved: quantities(c.systemReserved),
    evictionHard: quantities(c.evictionHard, true),
  };
}

/** The eviction signal that holds back each resource from allocatable. */
const EVICTION_SIGNALS: Record<string, string> = { memory: "memory.available", "ephemeral-storage": "nodefs.available" };

/** Resources whose allocatable the arithmetic explains. */
const EXPLAINED = ["cpu", "memory", "ephemeral-storage", "pods"] as const;

export interface AllocatableArithmetic {
  /** capacity − kubeReserved − systemReserved − evictionHard, per explained resource, as quantities. */
  expected: Record<string, string>;
  /** The resources whose reported allocatable differs from the expected one. */
  mismatched: string[];
}

/** The kubelet's allocatable for the node's capacity and this configuration, beside what the node reports. */
export function allocatableArithmetic(node: Pick<CachedNode, "capacity" | "allocatable">, config: KubeletConfigView): AllocatableArithmetic {
  const expected: Record<string, string> = {};
  const mismatched: string[] = [];
  for (const resource of EXPLAINED) {
    const capacity = node.capacity[resource];
    if (capacity === undefined) continue;
    const amount = resource === "cpu" ? cpuMillicores : bytes;
    const reserved = (map: Readonly<Record<string, string>>) => (map[resource] !== undefined ? amount(map[resource]!) : 0);
    let value = amount(capacity) - reserved(config.kubeReserved) - reserved(config.systemReserved);
    const threshold = EVICTION_SIGNALS[resource] && config.evictionHard[EVICTION_SIGNALS[resource]!];
    if (threshold) {
      const percent = /^(\d+(?:\.\d+)?)%$/.exec(threshold);
      value -= percent ? Math.trunc(amount(capacity) * Math.fround(Number(percent[1]) / 100)) : amount(threshold);
    }
    value = Math.max(0, value);
    expected[resource] = resource === "cpu" ? formatMillicores(value) : resource === "pods" ? String(value) : formatBytes(value);
    const reported = node.allocatable[resource];
    if (reported === undefined || amount(reported) !== value) mismatched.push(resource);
  }
  return { expected, mismatched };
}

export interface KubeletConfigReaderOptions {
  /** How long one read answers (default 30 s). */
  ttlMs?: number;
  /** Reads kept at most (default 5,000: a large cluster's nodes). */
  maxEntries?: number;
  /** Reads in flight per cluster at most (default 4). */
  concurrency?: number;
}

/** Reads and briefly caches each node's /configz; concurrent askers of one node share one request. */
export class KubeletConfigReader {
  private readonly cache = new Map<string, { at: number; read: Promise<KubeletConfigRead> }>();
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly concurrency: number;

  constructor(
    private readonly clusters: ClusterRegistry,
    options: KubeletConfigReaderOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 30_000;
    this.maxEntries = options.maxEntries ?? 5_000;
    this.concurrency = options.concurrency ?? 4;
  }

  read(node: Pick<CachedNode, "cluster" | "name">): Promise<KubeletConfigRead> {
    const key = `${node.cluster}/${node.name}`;
    const known = this.cache.get(key);
    if (known && Date.now() - known.at < this.ttlMs) return known.read;
    this.cache.delete(key);
    if (this.cache.size >= this.maxEntries) this.cache.delete(this.cache.keys().next().value!);
    const read = this.fetch(node.cluster, node.name);
    this.cache.set(key, { at: Date.now(), read });
    return read;
  }

  private async fetch(cluster: string, name: string): Promise<KubeletConfigRead> {
    const cache = this.clusters.get(cluster);
    if (!cache) return { config: null, reason: `cluster "${cluster}" is not configured` };
    await this.slot(cluster);
    try {
      const raw = await cache.client.getJson<unknown>(`/api/v1/nodes/${encodeURIComponent(name)}/proxy/configz`, {}, 10_000);
      return { config: readConfigz(raw), reason: null };
    } catch (error) {
      return { config: null, reason: kubeErrorDetail(error) };
    } finally {
      this.release(cluster);
    }
  }

  private async slot(cluster: string): Promise<void> {
    const running = this.running.get(cluster) ?? 0;
    if (running < this.concurrency) {
      this.running.set(cluster, running + 1);
      return;
    }
    await new Promise<void>((resolve) => {
      let queue = this.waiting.get(cluster);
      if (!queue) this.waiting.set(cluster, (queue = []));
      queue.push(resolve);
    });
  }

  private release(cluster: string): void {
    const next = this.waiting.get(cluster)?.shift();
    if (next) return next(); // the slot passes on
    this.running.set(cluster, (this.running.get(cluster) ?? 1) - 1);
  }
}
