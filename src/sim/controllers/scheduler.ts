/**
 * The scheduler: binds each pending pod to the least-allocated node that is
 * Ready, schedulable, tolerated, selected and has room for its requests (cpu,
 * memory, pods and extended resources such as nvidia.com/gpu); a pod
 * no node can take is marked Unschedulable and retried after a backoff.
 * Its cache of what is requested on each node is also the `allocated` handle.
 */
import type { Entry, KObject, StoreEvent } from "../store.js";
import { R } from "../storage-names.js";
import { claimProblem } from "./pod-dependencies.js";
import { bindPod, daemonPodNode, isTerminal, nodeAffinityFits, podRequests, selectorFits, toleratesNode, unschedulable, type PodRequests } from "../workloads.js";
import { cpuMillicores, bytes } from "../../k8s/quantity.js";
import type { ClusterContext } from "./context.js";

type Obj = Record<string, any>;

/** Requested (allocated) or allocatable (capacity) cpu millicores, memory bytes, pods and extended resources (GPUs, hugepages …). */
export interface NodeResources {
  cpu: number;
  memory: number;
  pods: number;
  extended: Record<string, number>;
}

const STANDARD = new Set(["cpu", "memory", "pods", "ephemeral-storage"]);

const UNSCHEDULABLE_BACKOFF_MS = 10_000;

export class Scheduler {
  private readonly alloc = new Map<string, NodeResources>();
  private readonly capacity = new Map<string, NodeResources>();
  private readonly pending = new Set<string>();
  /** Pods no node could take, with when to try again (the scheduler's backoff). */
  private readonly retryAt = new Map<string, number>();

  constructor(private readonly ctx: ClusterContext) {}

  observe(e: StoreEvent): void {
    const obj = e.entry.obj;
    if (e.resource === R.pods) {
      if (e.prev) this.account(e.prev.obj, -1);
      if (e.type !== "DELETED") this.account(obj, +1);
      if (e.type === "DELETED") {
        this.retryAt.delete(e.entry.key);
        this.pending.delete(e.entry.key);
      } else if (!(obj.spec as Obj).nodeName && !obj.metadata.deletionTimestamp) {
        this.pending.add(e.entry.key);
      }
    } else if (e.resource === R.nodes) {
      const name = obj.metadata.name;
      if (e.type === "DELETED") {
        this.capacity.delete(name);
      } else {
        const a = (obj.status as Obj).allocatable ?? {};
        const extended: Record<string, number> = {};
        for (const [resource, q] of Object.entries(a as Record<string, string>)) if (!STANDARD.has(resource)) extended[resource] = bytes(q);
        this.capacity.set(name, { cpu: cpuMillicores(a.cpu ?? "0"), memory: bytes(a.memory ?? "0"), pods: Number(a.pods ?? 110), extended });
      }
    }
  }

  private account(pod: KObject, sign: 1 | -1): void {
    const node = (pod.spec as Obj)?.nodeName as string | undefined;
    if (!node || isTerminal(pod)) return;
    let a = this.alloc.get(node);
    if (!a) this.alloc.set(node, (a = { cpu: 0, memory: 0, pods: 0, extended: {} }));
    const r = podRequests(pod);
    a.cpu += sign * r.cpu;
    a.memory += sign * r.memory;
    a.pods += sign;
    for (const [resource, amount] of Object.entries(r.extended)) a.extended[resource] = (a.extended[resource] ?? 0) + sign * amount;
  }

  /** Requested cpu (millicores), memory (bytes) and pod count on a node. */
  allocated(node: string): NodeResources {
    const a = this.alloc.get(node) ?? { cpu: 0, memory: 0, pods: 0, extended: {} };
    return { ...a, extended: { ...a.extended } };
  }

  private fits(pod: KObject, node: KObject, req: PodRequests): boolean {
    const spec = node.spec as Obj;
    if (spec.unschedulable) return false;
    const ready = ((node.status as Obj).conditions as Obj[]).find((c) => c.type === "Ready");
    if (ready?.status !== "True") return false;
    if (!toleratesNode(pod, node) || !selectorFits(pod, node) || !nodeAffinityFits(pod, node)) return false;
    const cap = this.capacity.get(node.metadata.name);
    const a = this.alloc.get(node.metadata.name) ?? { cpu: 0, memory: 0, pods: 0, extended: {} };
    if (!cap) return false;
    // NodeResourcesFit: an extended resource the node does not have is 0 allocatable.
    for (const [resource, amount] of Object.entries(req.extended)) {
      if (amount > 0 && (a.extended[resource] ?? 0) + amount > (cap.extended[resource] ?? 0)) return false;
    }
    return a.cpu + req.cpu <= cap.cpu && a.memory + req.memory <= cap.memory && a.pods + 1 <= cap.pods;
  }

  private score(node: string, req: { cpu: number; memory: number }): number {
    const cap = this.capacity.get(node)!;
    const a = this.alloc.get(node) ?? { cpu: 0, memory: 0, pods: 0, extended: {} };
    return (a.cpu + req.cpu) / cap.cpu + (a.memory + req.memory) / cap.memory;
  }

  /** Least-allocated feasible node; `sample` limits the nodes looked at (fast generation). */
  chooseNode(pod: KObject, sample?: KObject[]): string | undefined {
    const req = podRequests(pod);
    let best: string | undefined;
    let bestScore = Infinity;
    const consider = (n: KObject) => {
      if (!this.fits(pod, n, req)) return;
      const s = this.score(n.metadata.name, req) + this.ctx.rng.next() * 1e-6;
      if (s < bestScore) {
        bestScore = s;
        best = n.metadata.name;
      }
    };
    if (sample) sample.forEach(consider);
    else for (const e of this.ctx.store.values(R.nodes)) consider(e.obj);
    return best;
  }

  /** Bind every pending pod that can go somewhere; the kubelet starts it from there. */
  sync(): void {
    const { store, clock } = this.ctx;
    const now = clock.now();
    for (const [key, at] of this.retryAt) {
      if (at > now) continue;
      this.retryAt.delete(key);
      this.pending.add(key);
    }
    if (this.pending.size === 0) return;
    const total = store.size(R.nodes);
    for (const key of [...this.pending]) {
      this.pending.delete(key);
      const pod = store.get(R.pods, key)?.obj;
      if (!pod || (pod.spec as Obj).nodeName || pod.metadata.deletionTimestamp) continue;
      const pinned = daemonPodNode(pod);
      let target: string | undefined;
      const claims = pinned ? undefined : claimProblem(pod, store);
      if (claims) {
        // VolumeBinding: no node can take a pod whose claims are not bound, whatever their room.
        this.retryAt.set(key, now + UNSCHEDULABLE_BACKOFF_MS);
        const message = `0/${total} nodes are available: ${claims}. preemption: 0/${total} nodes are available: ${total} Preemption is not helpful for scheduling.`;
        const cond = ((pod.status as Obj).conditions ?? []) as Obj[];
        if (!cond.some((c) => c.message === message)) store.put(R.pods, unschedulable(JSON.parse((store.get(R.pods, key) as Entry).json), total, clock, message));
        continue;
      }
      if (pinned) {
        // Daemon pods ignore unschedulable (they tolerate it); they only need their node.
        target = store.get(R.nodes, pinned) ? pinned : undefined;
      } else {
        target = this.chooseNode(pod);
      }
      const fresh = (): KObject => JSON.parse((store.get(R.pods, key) as Entry).json);
      if (!target) {
        this.retryAt.set(key, now + UNSCHEDULABLE_BACKOFF_MS);
        const cond = ((pod.status as Obj).conditions ?? []) as Obj[];
        if (!cond.some((c) => c.reason === "Unschedulable")) store.put(R.pods, unschedulable(fresh(), total, clock));
        continue;
      }
      store.put(R.pods, bindPod(fresh(), target, clock));
    }
  }
}
