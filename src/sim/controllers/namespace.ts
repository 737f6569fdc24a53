/**
 * The namespace controller and the NamespaceLifecycle admission, as a real
 * cluster has them: a deleted namespace is Terminating (deletionTimestamp,
 * phase) while its content is removed, then it goes; nothing new may be
 * created in it meanwhile, nor in a namespace that does not exist. Started by
 * the simulator under `--rbac` only (the demo deletes a namespace at once).
 */
import type { StoreEvent } from "../store.js";
import { R } from "../storage-names.js";
import type { SimCluster } from "../cluster.js";
import { RESOURCES, storageName } from "../apiserver/resources.js";

/** Simulated time a namespace stays Terminating before its content and it are removed. */
export const NAMESPACE_TERMINATION_MS = 2000;

export class NamespaceController {
  private readonly pending = new Set<string>();

  constructor(private readonly cluster: SimCluster) {}

  start(): void {
    this.cluster.store.subscribe((e: StoreEvent) => {
      if (e.resource !== R.namespaces || e.type === "DELETED" || !e.entry.obj.metadata.deletionTimestamp) return;
      const name = e.entry.obj.metadata.name;
      if (this.pending.has(name)) return;
      this.pending.add(name);
      this.cluster.later(NAMESPACE_TERMINATION_MS, () => this.finalize(name));
    });
  }

  /** Mark a namespace Terminating (what DELETE of a namespace does); its content goes later. */
  terminate(name: string): void {
    this.cluster.update(R.namespaces, name, (ns) => {
      ns.metadata.deletionTimestamp ??= this.cluster.clock.iso();
      ns.status = { ...((ns.status as object | undefined) ?? {}), phase: "Terminating" };
    });
  }

  private finalize(name: string): void {
    this.pending.delete(name);
    const store = this.cluster.store;
    for (const def of RESOURCES) {
      if (!def.namespaced || def.virtual) continue;
      const table = storageName(def);
      for (const e of [...store.list(table, name)]) store.remove(table, e.key);
    }
    store.remove(R.namespaces, name);
  }
}
