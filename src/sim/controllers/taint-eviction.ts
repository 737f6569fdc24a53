/**
 * The taint eviction controller (kube-controller-manager's taint-eviction-controller, once the
 * node lifecycle controller's taint manager): a pod on a node with NoExecute taints is deleted
 * when the shortest toleration it uses for them runs out, at once when it does not tolerate one
 * of them, never when every toleration it uses has no tolerationSeconds. The countdown starts
 * when the controller first sees the pod under the taint: the taint's timeAdded, or the pod's
 * creation if it came later. Deletion is a plain graceful DELETE (no PodDisruptionBudget), with
 * the DisruptionTarget condition the controller adds first; the pods' controllers replace them.
 */
import { objectKey, type KObject, type StoreEvent } from "../store.js";
import { R } from "../storage-names.js";
import type { ClusterContext } from "./context.js";

type Obj = Record<string, any>;

/** Toleration.ToleratesTaint of k8s.io/api/core/v1. */
function toleratesTaint(t: Obj, taint: Obj): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  if (t.operator === "Exists") return true;
  return (t.value ?? "") === (taint.value ?? "");
}

/**
 * Milliseconds after the countdown's start at which the pod goes: 0 when a taint is not
 * tolerated, undefined when it stays (getMinTolerationTime's negative).
 */
export function evictionDelayMs(pod: KObject, taints: readonly Obj[]): number | undefined {
  const tolerations = ((pod.spec as Obj).tolerations ?? []) as Obj[];
  let min: number | undefined;
  for (const taint of taints) {
    const used = tolerations.find((t) => toleratesTaint(t, taint));
    if (!used) return 0;
    if (typeof used.tolerationSeconds !== "number") continue;
    const ms = Math.max(0, used.tolerationSeconds) * 1000;
    if (min === undefined || ms < min) min = ms;
  }
  return min;
}

export class TaintEvictionController {
  /** Nodes with at least one NoExecute taint. */
  private readonly tainted = new Set<string>();

  constructor(private readonly ctx: ClusterContext) {}

  observe(e: StoreEvent): void {
    if (e.resource !== R.nodes) return;
    const name = e.entry.obj.metadata.name;
    if (e.type !== "DELETED" && noExecuteTaints(e.entry.obj).length > 0) this.tainted.add(name);
    else this.tainted.delete(name);
  }

  /** Deletes every pod whose toleration has run out by `now`. */
  sync(now: number): void {
    const { store, clock } = this.ctx;
    for (const name of this.tainted) {
      const node = store.get(R.nodes, name)?.obj;
      if (!node) continue;
      const taints = noExecuteTaints(node);
      const since = Math.min(...taints.map((t) => (t.timeAdded ? Date.parse(t.timeAdded) : now)));
      for (const entry of [...store.byIndexEntries(R.pods, "nodeName", name)]) {
        const pod = entry.obj;
        const phase = (pod.status as Obj | undefined)?.phase;
        if (pod.metadata.deletionTimestamp || phase === "Succeeded" || phase === "Failed") continue;
        const delay = evictionDelayMs(pod, taints);
        if (delay === undefined) continue;
        const start = Math.max(since, Date.parse(pod.metadata.creationTimestamp ?? "") || since);
        if (now < start + delay) continue;
        const key = objectKey(pod.metadata.namespace, pod.metadata.name);
        this.ctx.update(R.pods, key, (p) => {
          const status = (p.status ??= {}) as Obj;
          const conditions = ((status.conditions ??= []) as Obj[]).filter((c) => c.type !== "DisruptionTarget");
          conditions.push({
            type: "DisruptionTarget",
            status: "True",
            lastProbeTime: null,
            lastTransitionTime: clock.iso(now),
            reason: "DeletionByTaintManager",
            message: "Taint manager: deleting due to NoExecute taint",
          });
          status.conditions = conditions;
        });
        this.ctx.deletePod(key, undefined);
      }
    }
  }
}

function noExecuteTaints(node: KObject): Obj[] {
  return (((node.spec as Obj).taints ?? []) as Obj[]).filter((t) => t.effect === "NoExecute");
}
