/**
 * The kubelets, node side: registering a node (Node, kube-node-lease Lease,
 * events), renewing the lease every 10 s, posting node status heartbeats every
 * five minutes, reporting conditions with their taints, and stopping (a node
 * that goes silent) and starting again. Node leases and node Events live here.
 */
import { objectKey, type KObject, type StoreEvent } from "../store.js";
import { R } from "../storage-names.js";
import { buildLease, buildNode, conditionTaint, conditionText, setTaints, READY_TAINT_KEYS, CONTROL_PLANE_POOL, POOLS, ZONES, type NodePlan } from "../nodes.js";
import type { ClusterContext } from "./context.js";

type Obj = Record<string, any>;

const LEASE_RENEW_MS = 10_000;

/** The reason of the kubelet's event when a pressure condition becomes True or False. */
const PRESSURE_EVENTS: Record<string, Record<string, string>> = {
  MemoryPressure: { True: "NodeHasInsufficientMemory", False: "NodeHasSufficientMemory" },
  DiskPressure: { True: "NodeHasDiskPressure", False: "NodeHasNoDiskPressure" },
  PIDPressure: { True: "NodeHasInsufficientPID", False: "NodeHasSufficientPID" },
};
const NODE_STATUS_REPORT_MS = 5 * 60_000;

export interface AddNodeOptions {
  pool?: string;
  zone?: string;
  name?: string;
  /** Creation time of a node that has been there all along (no registration events). */
  createdMs?: number;
}

export class Kubelets {
  private readonly leaseDue = new Map<string, number>();
  private readonly heartbeatDue = new Map<string, number>();
  /** Nodes whose kubelet has stopped posting (churn or test). */
  readonly stopped = new Set<string>();
  /** Nodes seen with a new boot ID, and that ID: their Rebooted event is due. */
  private readonly rebooted = new Map<string, string>();
  private nodeCounter = 0;

  constructor(private readonly ctx: ClusterContext) {}

  observe(e: StoreEvent): void {
    if (e.resource !== R.nodes) return;
    const name = e.entry.obj.metadata.name;
    const now = this.ctx.clock.now();
    if (e.type === "DELETED") {
      this.leaseDue.delete(name);
      this.heartbeatDue.delete(name);
      return;
    }
    // A new boot ID is a machine that restarted: its kubelet says so when it comes back.
    const bootID = (o: KObject | undefined) => ((o?.status as Obj | undefined)?.nodeInfo as Obj | undefined)?.bootID;
    if (e.type === "MODIFIED" && bootID(e.prev?.obj) && bootID(e.prev?.obj) !== bootID(e.entry.obj)) this.rebooted.set(name, bootID(e.entry.obj));
    if (!this.leaseDue.has(name)) this.leaseDue.set(name, now + LEASE_RENEW_MS);
    if (!this.heartbeatDue.has(name)) this.heartbeatDue.set(name, now + this.ctx.rng.next() * NODE_STATUS_REPORT_MS);
  }

  /**
   * Renew leases; post node status heartbeats too when `heartbeats` (they
   * rewrite every node every five minutes, so a still cluster goes without, and
   * tests can count node events).
   */
  postStatus(now: number, heartbeats: boolean): void {
    const { store, clock } = this.ctx;
    for (const [node, bootID] of this.rebooted) {
      this.rebooted.delete(node);
      if (store.get(R.nodes, node)) this.ctx.nodeEvent(node, "Rebooted", `Node ${node} has been rebooted, boot id: ${bootID}`, "kubelet", "Warning");
    }
    for (const [node, due] of this.leaseDue) {
      if (due > now || this.stopped.has(node)) continue;
      this.leaseDue.set(node, now + LEASE_RENEW_MS);
      const key = objectKey("kube-node-lease", node);
      if (store.get(R.leases, key)) this.ctx.update(R.leases, key, (l) => void ((l.spec as Obj).renewTime = clock.microIso(now)));
    }
    if (!heartbeats) return;
    for (const [node, due] of this.heartbeatDue) {
      if (due > now || this.stopped.has(node)) continue;
      this.heartbeatDue.set(node, now + NODE_STATUS_REPORT_MS);
      this.ctx.update(R.nodes, node, (n) => {
        for (const c of (n.status as Obj).conditions as Obj[]) if (c.type !== "NetworkUnavailable") c.lastHeartbeatTime = clock.iso(now);
      });
    }
  }

  /** A new machine's kubelet registers: a Ready node, its lease and (unless it has been there all along) its events. */
  register(opts: AddNodeOptions = {}): KObject {
    const { rng, clock } = this.ctx;
    const pool = opts.pool === "control-plane" ? CONTROL_PLANE_POOL : (POOLS.find((p) => p.name === opts.pool) ?? rng.weighted(POOLS.map((p) => [p, p.weight] as const)));
    const zone = opts.zone ?? rng.pick(ZONES);
    const index = this.nodeCounter++;
    const name = opts.name ?? `${pool.name}-${zone.slice(-1)}-${rng.suffix(5)}`;
    const plan: NodePlan = { name, pool, zone, type: rng.pick(pool.instanceTypes), index, createdMs: opts.createdMs ?? clock.now() };
    const node = this.ctx.create(R.nodes, buildNode(plan, rng, clock)).obj;
    this.ctx.create(R.leases, buildLease(node, clock));
    if (opts.createdMs === undefined) {
      this.ctx.nodeEvent(name, "Starting", "Starting kubelet.");
      this.ctx.nodeEvent(name, "NodeReady", `Node ${name} status is now: NodeReady`);
      this.ctx.nodeEvent(name, "RegisteredNode", `Node ${name} event: Registered Node ${name} in Controller`, "node-controller");
    }
    return node;
  }

  /** The machine is gone: its Node and Lease are deleted. */
  remove(name: string): boolean {
    const gone = this.ctx.store.remove(R.nodes, name);
    this.ctx.store.remove(R.leases, objectKey("kube-node-lease", name));
    this.stopped.delete(name);
    return gone !== undefined;
  }

  /** Report a node condition, with the taints that belong to it (and a Ready event for Ready). */
  reportCondition(name: string, type: string, status: "True" | "False" | "Unknown", reason?: string, message?: string): KObject | undefined {
    const now = this.ctx.clock.iso();
    const text = conditionText(type, status);
    let changed = false;
    const e = this.ctx.update(R.nodes, name, (n) => {
      const conds = (n.status as Obj).conditions as Obj[];
      let c = conds.find((x) => x.type === type);
      if (!c) conds.push((c = { type }));
      changed = c.status !== status;
      if (changed) c.lastTransitionTime = now;
      c.status = status;
      c.lastHeartbeatTime = now;
      c.reason = reason ?? text.reason;
      c.message = message ?? text.message;
      const taint = conditionTaint(type, status);
      // Only the taints belonging to this condition are touched.
      const own = type === "Ready" ? READY_TAINT_KEYS : [conditionTaint(type, "True")?.key ?? ""];
      const add = taint ? [taint, ...(type === "Ready" ? [{ key: taint.key, effect: "NoExecute", timeAdded: now }] : [])] : [];
      setTaints(n, add, own);
    });
    if (e && type === "Ready") {
      const word = status === "True" ? "NodeReady" : "NodeNotReady";
      this.ctx.nodeEvent(name, word, `Node ${name} status is now: ${word}`);
    }
    // The kubelet's event for a pressure condition that changed (kubelet_node_status.go's recordNodeStatusEvent).
    const pressure = PRESSURE_EVENTS[type]?.[status];
    if (e && changed && pressure) this.ctx.nodeEvent(name, pressure, `Node ${name} status is now: ${pressure}`);
    return e?.obj;
  }

  /** The kubelet goes silent: its lease stops renewing (the node lifecycle controller notices after 40 s). */
  stop(name: string): void {
    this.stopped.add(name);
  }

  /** A stopped kubelet comes back: it renews its lease and posts Ready again. */
  start(name: string): void {
    if (!this.stopped.delete(name)) return;
    const { clock } = this.ctx;
    this.ctx.update(R.leases, objectKey("kube-node-lease", name), (l) => void ((l.spec as Obj).renewTime = clock.microIso()));
    const now = clock.iso();
    this.ctx.update(R.nodes, name, (n) => {
      for (const c of (n.status as Obj).conditions as Obj[]) {
        if (c.type === "NetworkUnavailable") continue;
        const status = c.type === "Ready" ? "True" : "False";
        if (c.status !== status) c.lastTransitionTime = now;
        c.status = status;
        c.lastHeartbeatTime = now;
        Object.assign(c, conditionText(c.type, status));
      }
      setTaints(n, [], READY_TAINT_KEYS);
    });
    this.ctx.nodeEvent(name, "NodeReady", `Node ${name} status is now: NodeReady`);
  }
}
