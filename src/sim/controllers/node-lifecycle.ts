/**
 * The node lifecycle controller: keeps the unschedulable taint in step with a
 * cordon (with the kubelet's NodeSchedulable/NodeNotSchedulable event), and
 * marks a node whose lease has not been renewed for 40 s Unknown and
 * unreachable-tainted, with a NodeNotReady event.
 */
import { objectKey, type StoreEvent } from "../store.js";
import { R } from "../storage-names.js";
import { setTaints, READY_TAINT_KEYS } from "../nodes.js";
import type { ClusterContext } from "./context.js";
import { WorkQueue } from "./work-queue.js";

type Obj = Record<string, any>;

const NODE_MONITOR_GRACE_MS = 40_000;
const UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable";

export class NodeLifecycleController {
  /** Nodes cordoned or uncordoned since the last sync. */
  private readonly cordonChanged = new WorkQueue();

  /** `silent`: the nodes whose kubelet has stopped; only their leases can expire, so only they are checked. */
  constructor(
    private readonly ctx: ClusterContext,
    private readonly silent: ReadonlySet<string>,
  ) {}

  observe(e: StoreEvent): void {
    if (e.resource !== R.nodes || e.type !== "MODIFIED") return;
    if (Boolean((e.prev?.obj.spec as Obj)?.unschedulable) !== Boolean((e.entry.obj.spec as Obj).unschedulable)) this.cordonChanged.add(e.entry.obj.metadata.name);
  }

  /** What follows a cordon or uncordon. */
  syncCordons(): void {
    const { store, clock } = this.ctx;
    this.cordonChanged.drain((name) => {
      const node = store.get(R.nodes, name)?.obj;
      if (!node) return;
      const off = Boolean((node.spec as Obj).unschedulable);
      const has = (((node.spec as Obj).taints ?? []) as Obj[]).some((t) => t.key === UNSCHEDULABLE_TAINT);
      if (off !== has) {
        this.ctx.update(R.nodes, name, (n) => setTaints(n, off ? [{ key: UNSCHEDULABLE_TAINT, effect: "NoSchedule", timeAdded: clock.iso() }] : [], [UNSCHEDULABLE_TAINT]));
      }
      const word = off ? "NodeNotSchedulable" : "NodeSchedulable";
      this.ctx.nodeEvent(name, word, `Node ${name} status is now: ${word}`);
    });
  }

  /** Nodes whose lease expired become Unknown and unreachable. */
  markUnreachable(now: number): void {
    const { store, clock } = this.ctx;
    for (const node of this.silent) {
      const lease = store.get(R.leases, objectKey("kube-node-lease", node))?.obj;
      const renew = lease ? Date.parse((lease.spec as Obj).renewTime) : 0;
      if (now - renew < NODE_MONITOR_GRACE_MS) continue;
      const n = store.get(R.nodes, node)?.obj;
      if (!n) continue;
      const ready = ((n.status as Obj).conditions as Obj[]).find((c) => c.type === "Ready");
      if (ready?.status === "Unknown") continue;
      this.ctx.update(R.nodes, node, (c) => {
        for (const cond of (c.status as Obj).conditions as Obj[]) {
          if (cond.type === "NetworkUnavailable") continue;
          cond.status = "Unknown";
          cond.reason = "NodeStatusUnknown";
          cond.message = "Kubelet stopped posting node status.";
          cond.lastTransitionTime = clock.iso(now);
        }
        setTaints(
          c,
          [
            { key: "node.kubernetes.io/unreachable", effect: "NoSchedule" },
            { key: "node.kubernetes.io/unreachable", effect: "NoExecute", timeAdded: clock.iso(now) },
          ],
          READY_TAINT_KEYS,
        );
      });
      this.ctx.nodeEvent(node, "NodeNotReady", `Node ${node} status is now: NodeNotReady`, "node-controller");
    }
  }
}
