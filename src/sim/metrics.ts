/**
 * metrics.k8s.io, as metrics-server computes it: usage is not stored but
 * derived on read from the pods' requests and the simulated time, so it moves
 * smoothly, correlates with what is scheduled, and costs nothing between reads.
 */
import type { KObject } from "./store.js";
import type { SimCluster } from "./cluster.js";
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

/** NodeMetrics of one node, or undefined when metrics-server would have none (not Ready). */
export function nodeMetrics(cluster: SimCluster, node: KObject): object | undefined {
  if (!nodeReady(node)) return undefined;
  const now = cluster.clock.now();
  const tSec = now / 1000;
  let cpu = 0;
  let mem = 0;
  for (const { obj: pod } of cluster.store.byIndexEntries(R.pods, "nodeName", node.metadata.name)) {
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
  return {
    metadata: { name: node.metadata.name, creationTimestamp: cluster.clock.iso(now), labels: node.metadata.labels ?? {} },
    timestamp: cluster.clock.iso(now - 7_000),
    window: "20.043s",
    usage: { cpu: fmtCpu(Math.min(cpu, capCpu * 1e6)), memory: fmtMem(Math.min(mem, capMem)) },
  };
}

/** PodMetrics of one running pod. */
export function podMetrics(cluster: SimCluster, pod: KObject): object | undefined {
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
