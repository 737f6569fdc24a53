/**
 * The kubelets' pod workers: a pod bound to a node starts running two seconds
 * later; a pod given a deletionTimestamp by graceful deletion is removed once
 * its grace period has passed (the kubelet's final delete).
 */
import type { StoreEvent } from "../store.js";
import { R } from "../storage-names.js";
import { runningPod } from "../workloads.js";
import type { ClusterContext } from "./context.js";

type Obj = Record<string, any>;

const POD_START_MS = 2_000;

export class KubeletPodWorkers {
  /** Pods bound and not yet started, with when they start. */
  private readonly starting = new Map<string, number>();
  /** Pods terminating, with when their grace period ends. */
  private readonly terminating = new Map<string, number>();

  constructor(private readonly ctx: ClusterContext) {}

  observe(e: StoreEvent): void {
    if (e.resource !== R.pods) return;
    const key = e.entry.key;
    if (e.type === "DELETED") {
      this.terminating.delete(key);
      this.starting.delete(key);
      return;
    }
    if (e.type !== "MODIFIED") return;
    const meta = e.entry.obj.metadata;
    const before = e.prev!.obj;
    const now = this.ctx.clock.now();
    // The scheduler's binding.
    if (!(before.spec as Obj).nodeName && (e.entry.obj.spec as Obj).nodeName && !meta.deletionTimestamp) this.starting.set(key, now + POD_START_MS);
    // Graceful deletion set or shortened the grace period.
    if (meta.deletionTimestamp && meta.deletionGracePeriodSeconds !== undefined && meta.deletionGracePeriodSeconds !== before.metadata.deletionGracePeriodSeconds) {
      this.terminating.set(key, now + meta.deletionGracePeriodSeconds * 1000);
    }
  }

  /** Remove the pods whose grace period has ended. */
  finishTerminations(now: number): void {
    for (const [key, deadline] of [...this.terminating]) {
      if (deadline <= now) {
        this.terminating.delete(key);
        this.ctx.store.remove(R.pods, key);
      }
    }
  }

  /** Post Running for the pods whose start is due. */
  startPods(now: number): void {
    const { store, rng, clock } = this.ctx;
    for (const [key, at] of [...this.starting]) {
      if (at > now) continue;
      this.starting.delete(key);
      const e = store.get(R.pods, key);
      if (!e || e.obj.metadata.deletionTimestamp) continue;
      const node = store.get(R.nodes, (e.obj.spec as Obj).nodeName)?.obj;
      if (!node) continue;
      store.put(R.pods, runningPod(JSON.parse(e.json), node, rng, clock));
    }
  }
}
