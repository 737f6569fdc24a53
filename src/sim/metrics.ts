/**
 * metrics.k8s.io, as metrics-server computes it: usage is not stored but derived from the pods'
 * requests and the simulated time, so it moves smoothly and correlates with what is scheduled.
 * A node's usage is what metrics-server last scraped (NodeUsageScrapes): at most two
 * resolutions old, and again at once when a pod on it changes.
 */
import type { KObject, StoreEvent } from "./store.js";
import type { ClusterContext } from "./controllers/context.js";
import { R } from "./storage-names.js";
import { cpuMillicores, bytes } from "../k8s/quantity.js";

type Obj = Record<string, any>;

/** A stable number in [0,1) from a string (FNV-1a). */
function hash01(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) / 4294967296;
}

/** Utilisation of requests in (0, 1.3): a slow daily wave plus a faster wobble, per object. */
function utilisation(id: string, tSec: number, base: number): number {
  return utilisationOf(hash01(id), tSec, base);
}

/** {@link utilisation} of an object whose hash01(id) is `p`. */
function utilisationOf(p: number, tSec: number, base: number): number {
  const daily = Math.sin((2 * Math.PI * tSec) / 86_400 + p * 6.283);
  const wobble = Math.sin((2 * Math.PI * tSec) / (600 + p * 1800) + p * 40);
  return Math.max(0.02, base + 0.25 * daily * base + 0.15 * wobble * base);
}

interface Usage {
  cpuNano: number;
  memBytes: number;
}

/** What a container's usage is computed from that does not change with time: its requests and its hashes. */
interface ContainerConstants {
  cpuText: unknown;
  memoryText: unknown;
  cpuRequest: number;
  memoryRequest: number;
  /** hash01 of the container's id, of id + "c" and of id + "m". */
  hash: number;
  hashC: number;
  hashM: number;
}

/**
 * Per container object, so a metrics read of 150,000 pods costs a few sines per container rather
 * than string building and hashing (it blocked the simulator's event loop, and every watch it
 * serves, for ~0.7 s per NodeMetrics list). A container whose requests were edited in place is
 * computed again.
 */
const constants = new WeakMap<Obj, ContainerConstants>();

function constantsOf(pod: KObject, c: Obj): ContainerConstants {
  const req = c.resources?.requests ?? {};
  const known = constants.get(c);
  if (known && known.cpuText === req.cpu && known.memoryText === req.memory) return known;
  const id = `${pod.metadata.uid}/${c.name}`;
  const computed: ContainerConstants = {
    cpuText: req.cpu,
    memoryText: req.memory,
    cpuRequest: req.cpu ? cpuMillicores(req.cpu) : 10,
    memoryRequest: req.memory ? bytes(req.memory) : 32 * 1024 * 1024,
    hash: hash01(id),
    hashC: hash01(id + "c"),
    hashM: hash01(id + "m"),
  };
  constants.set(c, computed);
  return computed;
}

function containerUsage(pod: KObject, c: Obj, tSec: number): Usage {
  const k = constantsOf(pod, c);
  const cpu = k.cpuRequest * utilisationOf(k.hash, tSec, 0.2 + k.hashC * 0.6);
  const mem = k.memoryRequest * Math.min(1.1, utilisationOf(k.hashM, tSec / 8, 0.5 + k.hashM * 0.4));
  return { cpuNano: Math.round(cpu * 1e6), memBytes: Math.round(mem) };
}

function fmtCpu(nano: number): string {
  return `${Math.max(0, Math.round(nano))}n`;
}

function fmtMem(b: number): string {
  return `${Math.max(0, Math.round(b / 1024))}Ki`;
}

function isRunning(pod: KObject): boolean {
  return (pod.status as Obj | undefined)?.phase === "Running";
}

function nodeReady(node: KObject): boolean {
  return ((node.status as Obj).conditions as Obj[]).some((c) => c.type === "Ready" && c.status === "True");
}

/** What the metrics read of the cluster, so this module needs no import of the cluster itself. */
export type MetricsCluster = Pick<ClusterContext, "clock" | "store"> & {
  get(resource: string, name: string, namespace?: string): KObject | undefined;
  readonly nodeUsage: NodeUsageScrapes;
};

/** NodeMetrics of one node, or undefined when metrics-server would have none (not Ready). */
export function nodeMetrics(cluster: MetricsCluster, node: KObject): object | undefined {
  if (!nodeReady(node)) return undefined;
  const now = cluster.clock.now();
  const scraped = cluster.nodeUsage.of(node, now);
  return {
    metadata: { name: node.metadata.name, creationTimestamp: cluster.clock.iso(now), labels: node.metadata.labels ?? {} },
    timestamp: cluster.clock.iso(scraped.at - 7_000),
    window: "20.043s",
    usage: { cpu: fmtCpu(scraped.cpuNano), memory: fmtMem(scraped.memBytes) },
  };
}

/** metrics-server's --metric-resolution: how often it scrapes each kubelet. */
export const METRIC_RESOLUTION_MS = 15_000;

/** A node's usage as scraped at `at` (simulated ms). */
interface ScrapedUsage {
  at: number;
  cpuNano: number;
  memBytes: number;
}

/**
 * Each node's usage as metrics-server last scraped it. Summing 150,000 pods' containers on every
 * NodeMetrics read held the simulator's event loop, and every watch it was streaming, for
 * 0.6-2 s; metrics-server answers from what it scraped. The cluster's tick scrapes the oldest
 * nodes, as many per tick as keeps every node within a resolution; a read scrapes a node again
 * only when its usage is two resolutions old or a pod on it changed.
 */
export class NodeUsageScrapes {
  /** By node name, oldest scrape first. */
  private readonly scraped = new Map<string, ScrapedUsage>();
  private lastRefresh: number | undefined;

  constructor(private readonly cluster: Omit<MetricsCluster, "nodeUsage">) {}

  /** A change of a pod, or of a node's capacity, makes that node's usage scraped again at the next read. */
  observe(e: StoreEvent): void {
    if (e.resource === R.nodes) {
      const capacity = (e.entry.obj.status as Obj | undefined)?.capacity;
      const before = (e.prev?.obj.status as Obj | undefined)?.capacity;
      if (e.type === "DELETED" || capacity?.cpu !== before?.cpu || capacity?.memory !== before?.memory) this.scraped.delete(e.entry.key);
      return;
    }
    if (e.resource !== R.pods) return;
    this.scraped.delete(nodeNameOf(e.entry.obj));
    if (e.prev) this.scraped.delete(nodeNameOf(e.prev.obj));
  }

  /** `node`'s usage: as last scraped, or scraped now. */
  of(node: KObject, now: number): ScrapedUsage {
    const name = node.metadata.name;
    const known = this.scraped.get(name);
    if (known && now - known.at < 2 * METRIC_RESOLUTION_MS) return known;
    return this.scrape(node, now);
  }

  /** Scrapes every node whose usage is a resolution old, oldest first, as many as `now` - the last call's share of a resolution. */
  refresh(now: number): void {
    const last = this.lastRefresh ?? now;
    this.lastRefresh = now;
    let budget = Math.ceil((this.scraped.size * (now - last)) / METRIC_RESOLUTION_MS);
    for (const [name, usage] of this.scraped) {
      if (budget-- <= 0 || now - usage.at < METRIC_RESOLUTION_MS) return;
      const node = this.cluster.get(R.nodes, name);
      if (node) this.scrape(node, now);
      else this.scraped.delete(name);
    }
  }

  /** Every node at once, as a metrics-server that has been running has them. */
  scrapeAll(): void {
    const now = this.cluster.clock.now();
    for (const { obj } of this.cluster.store.list(R.nodes)) this.scrape(obj, now);
  }

  private scrape(node: KObject, now: number): ScrapedUsage {
    const tSec = now / 1000;
    let cpu = 0;
    let mem = 0;
    for (const { obj: pod } of this.cluster.store.byIndexEntries(R.pods, "nodeName", node.metadata.name)) {
      if (!isRunning(pod)) continue;
      for (const c of (pod.spec as Obj).containers as Obj[]) {
        const u = containerUsage(pod, c, tSec);
        cpu += u.cpuNano;
        mem += u.memBytes;
      }
    }
    // The system itself (kubelet, runtime, page cache) uses some too.
    const capCpu = cpuMillicores((node.status as Obj).capacity.cpu);
    const capMem = bytes((node.status as Obj).capacity.memory);
    cpu += capCpu * 1e6 * 0.03 * utilisation(node.metadata.uid!, tSec, 1);
    mem += capMem * 0.08 * Math.min(1.2, utilisation(node.metadata.uid! + "m", tSec / 8, 1));
    const usage = { at: now, cpuNano: Math.min(cpu, capCpu * 1e6), memBytes: Math.min(mem, capMem) };
    // Delete first: the map stays in scrape order.
    this.scraped.delete(node.metadata.name);
    this.scraped.set(node.metadata.name, usage);
    return usage;
  }
}

function nodeNameOf(pod: KObject): string {
  return ((pod.spec as Obj | undefined)?.nodeName as string | undefined) ?? "";
}

/** PodMetrics of one running pod. */
export function podMetrics(cluster: MetricsCluster, pod: KObject): object | undefined {
  if (!isRunning(pod)) return undefined;
  const now = cluster.clock.now();
  const tSec = now / 1000;
  return {
    metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace, creationTimestamp: cluster.clock.iso(now), labels: pod.metadata.labels ?? {} },
    timestamp: cluster.clock.iso(now - 9_000),
    window: "16.337s",
    containers: ((pod.spec as Obj).containers as Obj[]).map((c) => {
      const u = containerUsage(pod, c, tSec);
      return { name: c.name, usage: { cpu: fmtCpu(u.cpuNano), memory: fmtMem(u.memBytes) } };
    }),
  };
}

/** The resources the metrics API lists. */
export const METRICS_SOURCES = { nodes: R.nodes, pods: R.pods };
