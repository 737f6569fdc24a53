/**
 * The garbage collector: background cascading deletion. When a Deployment,
 * ReplicaSet or DaemonSet goes, what it owns goes too (ReplicaSets of a
 * Deployment; pods, gracefully, of the others).
 */
import type { KObject, StoreEvent } from "../store.js";
import { R } from "../storage-names.js";
import type { ClusterContext } from "./context.js";

const OWNERS = ["Deployment", "ReplicaSet", "DaemonSet"];

export class GarbageCollector {
  constructor(private readonly ctx: ClusterContext) {}

  /** Runs at once, inside the deletion's event: dependents go in the same write. */
  observe(e: StoreEvent): void {
    if (e.type === "DELETED" && e.resource !== R.events) this.collectDependents(e.entry.obj);
  }

  private collectDependents(owner: KObject): void {
    const uid = owner.metadata.uid;
    if (!uid || !OWNERS.includes(owner.kind ?? "")) return;
    const { store } = this.ctx;
    const resource = owner.kind === "Deployment" ? R.replicasets : R.pods;
    for (const key of [...store.byIndex(resource, "owner", uid)]) {
      if (resource === R.pods) this.ctx.deletePod(key, undefined);
      else store.remove(resource, key);
    }
  }
}
