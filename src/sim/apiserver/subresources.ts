/**
 * Subresources: `status` (a write that changes only .status) and `eviction`
 * (pods/eviction, with the disruption checks of the apiserver's eviction REST
 * handler). New subresources (binding, scale) go here.
 */
import type { ServerResponse } from "node:http";
import type { ClusterContext } from "../controllers/context.js";
import type { DisruptionController } from "../controllers/disruption.js";
import { objectKey, type Entry, type KObject } from "../store.js";
import { R } from "../storage-names.js";
import { isReadyPod, isTerminal } from "../workloads.js";
import { pdbConditions } from "../controllers/disruption.js";
import { badRequest, internalError, notFound, success, tooManyRequests } from "./status.js";
import { parseBody, send, type Target } from "./request.js";

type Obj = Record<string, any>;

/** The status subresource only changes status: the stored object with `next`'s status. */
export function statusUpdate(current: Entry, next: KObject): KObject {
  return { ...(JSON.parse(current.json) as KObject), status: next.status };
}

/**
 * Evict a pod: terminal or already terminating pods go at once; a ready pod
 * covered by a budget with no disruption left is refused with 429 naming the
 * budget; otherwise the budget is spent and the pod deleted gracefully.
 * Returns normally on success (201).
 */
/** What an eviction uses of the cluster, so this module needs no import of the cluster itself. */
export type EvictionCluster = ClusterContext & {
  readonly disruption: DisruptionController;
  readonly evictionListeners: Set<(pod: KObject) => void>;
  tick(): void;
};

export function evictPod(cluster: EvictionCluster, namespace: string, name: string, gracePeriodSeconds: number | undefined): void {
  const key = objectKey(namespace, name);
  const e = cluster.store.get(R.pods, key);
  if (!e) throw notFound("pods", "", name);
  const pod = e.obj;
  // Terminal or unready pods, and pods already going, need no budget.
  if (isTerminal(pod) || pod.metadata.deletionTimestamp) {
    cluster.deletePod(key, gracePeriodSeconds);
    for (const l of cluster.evictionListeners) l(pod);
    return;
  }
  const pdbs = cluster.disruption.budgetsFor(pod);
  if (pdbs.length > 1) throw internalError("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.");
  if (pdbs.length === 1 && isReadyPod(pod)) {
    const pdb = cluster.disruption.refresh(pdbs[0]!);
    const st = pdb.status as Obj;
    if ((st.disruptionsAllowed ?? 0) <= 0) {
      throw tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", [
        { reason: "DisruptionBudget", message: `The disruption budget ${pdb.metadata.name} needs ${st.desiredHealthy} healthy pods and has ${st.currentHealthy} currently` },
      ]);
    }
    cluster.update(R.pdbs, objectKey(namespace, pdb.metadata.name), (p) => {
      const s = p.status as Obj;
      s.disruptionsAllowed -= 1;
      s.disruptedPods = { ...(s.disruptedPods ?? {}), [name]: cluster.clock.iso() };
      if (s.disruptionsAllowed === 0) s.conditions = pdbConditions(false, cluster.clock.iso(), p.metadata.generation!);
    });
  }
  cluster.deletePod(key, gracePeriodSeconds);
  for (const l of cluster.evictionListeners) l(pod);
}

/** POST pods/NAME/eviction (policy/v1 or v1beta1 Eviction). */
export function serveEviction(cluster: EvictionCluster, t: Target, body: Buffer, res: ServerResponse): void {
  const ev = parseBody(body) as unknown as Obj;
  if (ev.metadata?.name && ev.metadata.name !== t.name) throw badRequest(`name in URL does not match name in Eviction object`);
  if (ev.kind && ev.kind !== "Eviction") throw badRequest(`unexpected kind ${ev.kind}, expected Eviction`);
  const grace = ev.deleteOptions?.gracePeriodSeconds as number | undefined;
  evictPod(cluster, t.namespace!, t.name!, grace);
  cluster.tick();
  send(cluster, res, 201, success(201));
}
