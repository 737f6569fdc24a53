/**
 * Taint-based eviction as the node lifecycle controller and its taint eviction controller do it:
 * a node that is NotReady or unreachable is tainted node.kubernetes.io/not-ready:NoExecute or
 * /unreachable:NoExecute, and each of its pods is deleted when its toleration of that taint runs
 * out (tolerationSeconds; 300 s by the DefaultTolerationSeconds admission plugin). A pod that
 * does not tolerate the taint goes at once; one whose toleration has no limit (DaemonSet pods)
 * stays. Pure: computed from the cached node and its cached pods when a query asks.
 */
import { TOLERATES_FOREVER, type CachedNode, type CachedPod, type Taint } from "../cluster/model.js";
import { EVICTION_TAINT_KEYS } from "../cluster/strip.js";

export interface PodEvictionView {
  namespace: string;
  name: string;
  /** Null: tolerated forever. */
  tolerationSeconds: number | null;
  /** Null: never evicted. */
  evictAt: Date | null;
}

export interface EvictionOutlookView {
  taint: Taint;
  taintedSince: Date;
  pods: PodEvictionView[];
}

/** The NoExecute taints that start a countdown, earliest first. */
function countdownTaints(node: CachedNode): Taint[] {
  return node.taints.filter((t) => t.effect === "NoExecute" && (EVICTION_TAINT_KEYS as readonly string[]).includes(t.key)).sort((a, b) => timeOf(a, node) - timeOf(b, node));
}

/**
 * When the taint was added; a taint written without timeAdded (by hand) counts from the Ready
 * condition's last transition, which is when the controller would have set it. NaN: not known.
 */
function timeOf(taint: Taint, node: CachedNode): number {
  if (taint.timeAdded) return Date.parse(taint.timeAdded);
  const ready = node.conditions.find((c) => c.type === "Ready");
  return ready?.lastTransitionTime ? Date.parse(ready.lastTransitionTime) : NaN;
}

/** Whether the node carries a not-ready or unreachable NoExecute taint (the NodeFilter's evictionCountdown). */
export function hasEvictionCountdown(node: CachedNode): boolean {
  for (const t of node.taints) if (t.effect === "NoExecute" && (EVICTION_TAINT_KEYS as readonly string[]).includes(t.key)) return true;
  return false;
}

/**
 * The node's eviction outlook, or null when no countdown runs (or when nobody can tell when the
 * taint was added). Pods already terminating or finished are left out; the rest come soonest
 * first, those that stay last, then by namespace and name.
 */
export function evictionOutlook(node: CachedNode, pods: Iterable<CachedPod>): EvictionOutlookView | null {
  const taints = countdownTaints(node);
  const first = taints[0];
  if (!first) return null;
  const since = timeOf(first, node);
  if (!Number.isFinite(since)) return null;
  const out: PodEvictionView[] = [];
  for (const pod of pods) {
    if (pod.deletionTimestamp !== undefined || pod.phase === "Succeeded" || pod.phase === "Failed") continue;
    // getMinTolerationTime over every countdown taint the node has, counted from when the
    // controller first saw the pod under the taint: the taint's time, or the pod's creation after it.
    let seconds: number | null = null;
    for (const taint of taints) {
      const tolerated = pod.noExecuteTolerations[taint.key];
      if (tolerated === TOLERATES_FOREVER) continue;
      const s = tolerated ?? 0;
      if (seconds === null || s < seconds) seconds = s;
    }
    const start = Math.max(since, Date.parse(pod.creationTimestamp) || since);
    const evictAt = seconds === null ? null : new Date(start + seconds * 1000);
    out.push({ namespace: pod.namespace, name: pod.name, tolerationSeconds: seconds, evictAt });
  }
  out.sort((a, b) => {
    const ta = a.evictAt?.getTime() ?? Infinity;
    const tb = b.evictAt?.getTime() ?? Infinity;
    if (ta !== tb) return ta < tb ? -1 : 1;
    return a.namespace === b.namespace ? cmp(a.name, b.name) : cmp(a.namespace, b.namespace);
  });
  return { taint: first, taintedSince: new Date(since), pods: out };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
