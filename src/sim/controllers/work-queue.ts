import { objectKey, type KObject, type StoreEvent } from "../store.js";
import { controllerOf } from "../workloads.js";

/** What a workload controller reconciles and what it owns (controller-runtime's For(...).Owns(...)). */
export interface Reconciles {
  resource: string;
  kind: string;
  owns: string;
}

/**
 * The keys a controller must look at again, as client-go's workqueue holds
 * them (deduplicated; no rate limiting: the simulated clock paces everything).
 */
export class WorkQueue {
  private readonly keys = new Set<string>();

  add(key: string): void {
    this.keys.add(key);
  }

  /** Queue the object's controller if it is a `kind` (client-go's enqueue-for-owner). */
  addOwner(obj: KObject, kind: string): void {
    const owner = controllerOf(obj);
    if (owner?.kind === kind) this.keys.add(objectKey(obj.metadata.namespace, owner.name));
  }

  /** Queue an object of `r.resource` that changed, or the owner of a dependent that changed. */
  addChanged(e: StoreEvent, r: Reconciles): void {
    if (e.resource === r.resource && e.type !== "DELETED") this.keys.add(e.entry.key);
    else if (e.resource === r.owns) this.addOwner(e.entry.obj, r.kind);
  }

  /** Hand every key queued now to `work`, once; keys queued meanwhile wait for the next drain. */
  drain(work: (key: string) => void): void {
    for (const key of [...this.keys]) {
      this.keys.delete(key);
      work(key);
    }
  }
}
