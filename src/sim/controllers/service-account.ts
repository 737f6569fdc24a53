/**
 * The ServiceAccount controller: every namespace has a `default`
 * ServiceAccount, made when the namespace appears (and again if it is
 * deleted), so `kubectl create token default -n NS` works as on a real
 * cluster. Started by the simulator under `--rbac` only, so the demo cluster's
 * store and seeded event stream stay as they were.
 */
import type { StoreEvent } from "../store.js";
import { objectKey } from "../store.js";
import { R } from "../storage-names.js";
import type { SimCluster } from "../cluster.js";

export class ServiceAccountController {
  constructor(private readonly cluster: SimCluster) {}

  /** Make the missing default ServiceAccounts now, then keep them. */
  start(): void {
    for (const ns of this.cluster.store.list(R.namespaces)) this.ensure(ns.obj.metadata.name);
    this.cluster.store.subscribe((e: StoreEvent) => {
      const name =
        e.type === "DELETED" && e.resource === R.serviceaccounts && e.entry.obj.metadata.name === "default"
          ? e.entry.obj.metadata.namespace
          : e.type === "ADDED" && e.resource === R.namespaces
            ? e.entry.obj.metadata.name
            : undefined;
      // Not inside the store's event: the write goes in the cluster's next tick.
      if (name) this.cluster.later(0, () => this.ensure(name));
    });
  }

  private ensure(namespace: string): void {
    const store = this.cluster.store;
    if (!store.get(R.namespaces, namespace) || store.get(R.serviceaccounts, objectKey(namespace, "default"))) return;
    this.cluster.create(R.serviceaccounts, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default", namespace } });
  }
}
