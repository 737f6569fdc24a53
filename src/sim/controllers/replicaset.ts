/**
 * The ReplicaSet controller: keeps `spec.replicas` live pods from the
 * template (scaling down the not-ready ones first) and reports them in status.
 */
import { objectKey, type KObject, type StoreEvent } from "../store.js";
import { R } from "../storage-names.js";
import { isReadyPod, isTerminal, podFromTemplate } from "../workloads.js";
import type { ClusterContext } from "./context.js";
import { WorkQueue } from "./work-queue.js";

type Obj = Record<string, any>;

export class ReplicaSetController {
  private readonly queue = new WorkQueue();

  constructor(private readonly ctx: ClusterContext) {}

  observe(e: StoreEvent): void {
    this.queue.addChanged(e, { resource: R.replicasets, kind: "ReplicaSet", owns: R.pods });
  }

  sync(): void {
    const { store, rng, clock } = this.ctx;
    this.queue.drain((key) => {
      const rs = store.get(R.replicasets, key)?.obj;
      if (!rs) return;
      const spec = rs.spec as Obj;
      const active: KObject[] = [];
      for (const { obj: p } of store.byIndexEntries(R.pods, "owner", rs.metadata.uid!)) {
        if (!p.metadata.deletionTimestamp && !isTerminal(p)) active.push(p);
      }
      const want = spec.replicas ?? 1;
      for (let i = active.length; i < want; i++) {
        this.ctx.create(R.pods, podFromTemplate(rs, spec.template, rng, clock));
      }
      if (active.length > want) {
        // Scale down: unscheduled and not-ready pods go first, as the controller prefers.
        const sorted = active.sort((a, b) => Number(isReadyPod(a)) - Number(isReadyPod(b)));
        for (const p of sorted.slice(0, active.length - want)) this.ctx.deletePod(objectKey(p.metadata.namespace, p.metadata.name), undefined);
      }
      const ready = active.filter(isReadyPod).length;
      this.ctx.update(R.replicasets, key, (c) => {
        const st: Obj = { replicas: active.length, fullyLabeledReplicas: active.length, observedGeneration: c.metadata.generation };
        if (ready) {
          st.readyReplicas = Math.min(ready, want);
          st.availableReplicas = Math.min(ready, want);
        }
        c.status = st;
      });
    });
  }
}
