/**
 * The DaemonSet controller: one pod on every node the DaemonSet's pods
 * tolerate and select, none elsewhere. It creates pods pinned by node affinity
 * and leaves binding to the scheduler, as the real controller does.
 */
import { objectKey, type KObject, type StoreEvent } from "../store.js";
import { R } from "../storage-names.js";
import { daemonPodNode, isReadyPod, podFromTemplate, selectorFits, toleratesNode } from "../workloads.js";
import type { ClusterContext } from "./context.js";
import { WorkQueue } from "./work-queue.js";

type Obj = Record<string, any>;

/** The tolerations the DaemonSet controller considers its pods to have when it picks nodes. */
const ELIGIBILITY_TOLERATIONS = [
  { key: "node.kubernetes.io/unschedulable", operator: "Exists", effect: "NoSchedule" },
  { key: "node.kubernetes.io/not-ready", operator: "Exists" },
  { key: "node.kubernetes.io/unreachable", operator: "Exists" },
  { key: "node.kubernetes.io/memory-pressure", operator: "Exists", effect: "NoSchedule" },
  { key: "node.kubernetes.io/disk-pressure", operator: "Exists", effect: "NoSchedule" },
  { key: "node.kubernetes.io/pid-pressure", operator: "Exists", effect: "NoSchedule" },
];

export class DaemonSetController {
  private readonly queue = new WorkQueue();

  constructor(private readonly ctx: ClusterContext) {}

  observe(e: StoreEvent): void {
    this.queue.addChanged(e, { resource: R.daemonsets, kind: "DaemonSet", owns: R.pods });
    // A node came, went or changed its taints: every DaemonSet looks again.
    if (e.resource === R.nodes && (e.type !== "MODIFIED" || JSON.stringify((e.prev?.obj.spec as Obj)?.taints) !== JSON.stringify((e.entry.obj.spec as Obj).taints))) {
      for (const ds of this.ctx.store.values(R.daemonsets)) this.queue.add(ds.key);
    }
  }

  private eligible(ds: KObject, node: KObject): boolean {
    const template = (ds.spec as Obj).template.spec;
    const probe = { metadata: { name: "" }, spec: { tolerations: [...(template.tolerations ?? []), ...ELIGIBILITY_TOLERATIONS], nodeSelector: template.nodeSelector } } as KObject;
    return toleratesNode(probe, node) && selectorFits(probe, node);
  }

  sync(): void {
    const { store, rng, clock } = this.ctx;
    this.queue.drain((key) => {
      const ds = store.get(R.daemonsets, key)?.obj;
      if (!ds) return;
      const byNode = new Map<string, KObject>();
      for (const { obj: p } of store.byIndexEntries(R.pods, "owner", ds.metadata.uid!)) {
        if (!p.metadata.deletionTimestamp) byNode.set(daemonPodNode(p), p);
      }
      let desired = 0,
        ready = 0,
        current = 0,
        misscheduled = 0;
      for (const ne of store.values(R.nodes)) {
        const node = ne.obj;
        const eligible = this.eligible(ds, node);
        const pod = byNode.get(node.metadata.name);
        byNode.delete(node.metadata.name);
        if (eligible) {
          desired++;
          if (pod) {
            current++;
            if (isReadyPod(pod)) ready++;
          } else {
            this.ctx.create(R.pods, podFromTemplate(ds, (ds.spec as Obj).template, rng, clock, { nodeAffinity: node.metadata.name }));
            current++;
          }
        } else if (pod) {
          misscheduled++;
        }
      }
      for (const p of byNode.values()) this.ctx.deletePod(objectKey(p.metadata.namespace, p.metadata.name), undefined);
      this.ctx.update(R.daemonsets, key, (c) => {
        c.status = {
          currentNumberScheduled: current,
          desiredNumberScheduled: desired,
          numberMisscheduled: misscheduled,
          numberReady: ready,
          observedGeneration: c.metadata.generation,
          updatedNumberScheduled: current,
          numberAvailable: ready,
          ...(desired - ready > 0 ? { numberUnavailable: desired - ready } : {}),
        };
      });
    });
  }
}
