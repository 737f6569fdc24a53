/**
 * The Deployment controller: a new Deployment gets its first ReplicaSet, every
 * ReplicaSet follows the Deployment's replicas, and the Deployment's status
 * sums its ReplicaSets'. (One template revision: no rollouts.)
 */
import type { StoreEvent } from "../store.js";
import { R } from "../storage-names.js";
import { replicaSetFor } from "../workloads.js";
import type { ClusterContext } from "./context.js";
import { WorkQueue } from "./work-queue.js";

type Obj = Record<string, any>;

export class DeploymentController {
  private readonly queue = new WorkQueue();

  constructor(private readonly ctx: ClusterContext) {}

  observe(e: StoreEvent): void {
    this.queue.addChanged(e, { resource: R.deployments, kind: "Deployment", owns: R.replicasets });
  }

  sync(): void {
    const { store } = this.ctx;
    this.queue.drain((key) => {
      const d = store.get(R.deployments, key)?.obj;
      if (!d) return;
      const spec = d.spec as Obj;
      let rsKeys = [...store.byIndex(R.replicasets, "owner", d.metadata.uid!)];
      if (rsKeys.length === 0) {
        // A new Deployment (say, from kubectl create): its first ReplicaSet.
        rsKeys = [this.ctx.create(R.replicasets, replicaSetFor(d, this.ctx.rng)).key];
      }
      let replicas = 0,
        ready = 0,
        available = 0;
      for (const rsKey of rsKeys) {
        const rs = store.get(R.replicasets, rsKey)?.obj;
        if (!rs) continue;
        if ((rs.spec as Obj).replicas !== spec.replicas) {
          this.ctx.update(R.replicasets, rsKey, (c) => void ((c.spec as Obj).replicas = spec.replicas));
        }
        const st = (rs.status ?? {}) as Obj;
        replicas += st.replicas ?? 0;
        ready += st.readyReplicas ?? 0;
        available += st.availableReplicas ?? 0;
      }
      const status: Obj = {
        observedGeneration: d.metadata.generation,
        replicas,
        updatedReplicas: replicas,
        readyReplicas: ready,
        availableReplicas: available,
        ...(replicas - available > 0 ? { unavailableReplicas: replicas - available } : {}),
        conditions: (d.status as Obj | undefined)?.conditions,
      };
      if (!status.readyReplicas) delete status.readyReplicas;
      if (!status.availableReplicas) delete status.availableReplicas;
      this.ctx.update(R.deployments, key, (c) => {
        c.status = status;
      });
    });
  }
}
