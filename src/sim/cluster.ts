/**
 * The simulated cluster: the object store plus the controllers a real cluster
 * runs around the apiserver (scheduler, kubelets, ReplicaSet, Deployment and
 * DaemonSet controllers, disruption controller, node lifecycle, pod GC), all
 * driven by the simulated clock, and the apiserver semantics the router needs
 * beyond plain storage (graceful pod deletion, eviction). Tests act on it
 * directly through the methods marked "test handle".
 */
import { ObjectStore, objectKey, Entry, type KObject, type StoreEvent } from "./store.js";
import { SimClock } from "./clock.js";
import { Rng } from "./rng.js";
import { ApiError, notFound, tooManyRequests, internalError } from "./status.js";
import { bindPod, podFromTemplate, podRequests, replicaSetFor, runningPod, selectorFits, toleratesNode, unschedulable } from "./workloads.js";
import { buildLease, buildNode, conditionTaint, conditionText, nodeEvent, CONTROL_PLANE_POOL, POOLS, ZONES, LATEST_KUBELET, type NodePlan } from "./nodes.js";
import { cpuMillicores, bytes } from "../k8s/quantity.js";
import { labelSelectorFromMatchLabels, NOTHING_SELECTOR, type LabelSelector } from "../k8s/label-selector.js";

type Obj = Record<string, any>;

/** Storage names of the resources the cluster keeps. */
export const R = {
  nodes: "nodes",
  pods: "pods",
  namespaces: "namespaces",
  events: "events",
  deployments: "apps/deployments",
  replicasets: "apps/replicasets",
  daemonsets: "apps/daemonsets",
  pdbs: "policy/poddisruptionbudgets",
  leases: "coordination.k8s.io/leases",
} as const;

export interface ClusterOptions {
  seed: number;
  /** Simulated seconds per wall second; 0 freezes the clock between advance() calls. */
  clockSpeed: number;
  /** Expected churn scenarios per simulated minute; 0 keeps the cluster still. */
  churn: number;
  /** Start of simulated time (ms since epoch); defaults to now. */
  startTime?: number;
  /** Watch history kept per resource. */
  historySize?: number;
}

interface Alloc {
  cpu: number;
  memory: number;
  pods: number;
}

interface Capacity {
  cpu: number;
  memory: number;
  pods: number;
}

interface Timer {
  at: number;
  run: () => void;
}

const LEASE_RENEW_MS = 10_000;
const NODE_STATUS_REPORT_MS = 5 * 60_000;
const NODE_MONITOR_GRACE_MS = 40_000;
const POD_START_MS = 2_000;

function isTerminal(pod: KObject): boolean {
  const phase = (pod.status as Obj | undefined)?.phase;
  return phase === "Succeeded" || phase === "Failed";
}

function isReadyPod(pod: KObject): boolean {
  return ((pod.status as Obj | undefined)?.conditions ?? []).some((c: Obj) => c.type === "Ready" && c.status === "True");
}

function controllerOf(obj: KObject): { kind: string; uid: string; name: string } | undefined {
  return obj.metadata.ownerReferences?.find((o) => o.controller);
}

/** The label selector of a workload or PDB object (null selector matches nothing). */
export function selectorOf(spec: Obj | undefined): LabelSelector {
  const sel = spec?.selector;
  if (!sel) return NOTHING_SELECTOR;
  return labelSelectorFromMatchLabels(sel.matchLabels, sel.matchExpressions);
}

/** The simulated cluster (see file comment). */
export class SimCluster {
  readonly store: ObjectStore;
  readonly clock: SimClock;
  readonly rng: Rng;
  churn: number;

  private readonly alloc = new Map<string, Alloc>();
  private readonly capacity = new Map<string, Capacity>();
  private readonly terminating = new Map<string, number>();
  private readonly starting = new Map<string, number>();
  private readonly unscheduled = new Set<string>();
  /** Pods no node could take, with when to try again (the scheduler's backoff). */
  private readonly unschedulableRetry = new Map<string, number>();
  private readonly dirtyRS = new Set<string>();
  private readonly dirtyDeploy = new Set<string>();
  private readonly dirtyDS = new Set<string>();
  private readonly dirtyPdbNs = new Set<string>();
  private readonly orphanCheck = new Set<string>();
  private readonly cordonCheck = new Set<string>();
  private readonly leaseDue = new Map<string, number>();
  private readonly heartbeatDue = new Map<string, number>();
  /** Nodes whose kubelet has stopped posting (churn or test). */
  readonly stoppedKubelets = new Set<string>();
  private timers: Timer[] = [];
  private nodeCounter = 0;
  private lastTick: number;
  private ticking = false;

  constructor(readonly options: ClusterOptions) {
    this.clock = new SimClock(options.startTime ?? Date.now(), options.clockSpeed);
    this.rng = new Rng(options.seed);
    this.churn = options.churn;
    this.store = new ObjectStore(options.historySize ?? 10_000);
    this.lastTick = this.clock.now();
    this.store.addIndex(R.pods, "nodeName", (o) => [((o.spec as Obj)?.nodeName as string) ?? ""]);
    this.store.addIndex(R.pods, "owner", (o) => (o.metadata.ownerReferences ?? []).map((r) => r.uid));
    // namespace|key=value of every pod label: PDB and selector lookups without scanning a namespace.
    this.store.addIndex(R.pods, "label", (o) => Object.entries(o.metadata.labels ?? {}).map(([k, v]) => `${o.metadata.namespace}|${k}=${v}`));
    this.store.addIndex(R.replicasets, "owner", (o) => (o.metadata.ownerReferences ?? []).map((r) => r.uid));
    this.store.subscribe((e) => this.observe(e));
  }

  // ---------------------------------------------------------------- reading

  /** Stored object of a resource by namespace and name (test handle; do not mutate). */
  get(resource: string, name: string, namespace?: string): KObject | undefined {
    return this.store.get(resource, objectKey(namespace, name))?.obj;
  }

  /** Every stored object of a resource (test handle; do not mutate). */
  list(resource: string, namespace?: string): KObject[] {
    return [...this.store.list(resource, namespace)].map((e) => e.obj);
  }

  /** Names of all nodes, sorted. */
  nodeNames(): string[] {
    return [...this.store.list(R.nodes)].map((e) => e.key);
  }

  /** Pods bound to a node. */
  podsOnNode(node: string): KObject[] {
    const out: KObject[] = [];
    for (const key of this.store.byIndex(R.pods, "nodeName", node)) {
      const e = this.store.get(R.pods, key);
      if (e) out.push(e.obj);
    }
    return out;
  }

  /** Requested cpu (millicores), memory (bytes) and pod count on a node. */
  allocated(node: string): Alloc {
    return { ...(this.alloc.get(node) ?? { cpu: 0, memory: 0, pods: 0 }) };
  }

  // ---------------------------------------------------------------- writing

  /** Create an object with server-set metadata filled in. */
  create(resource: string, obj: KObject): Entry {
    const m = obj.metadata;
    m.uid ??= this.rng.uid();
    m.creationTimestamp ??= this.clock.iso();
    if (["apps/deployments", "apps/replicasets", "apps/daemonsets", "policy/poddisruptionbudgets"].includes(resource)) m.generation ??= 1;
    return this.store.put(resource, obj);
  }

  /** Replace an object with a modified copy (the function gets a deep copy). */
  update(resource: string, key: string, fn: (copy: KObject) => KObject | void): Entry | undefined {
    const e = this.store.get(resource, key);
    if (!e) return undefined;
    const text = e.json;
    const copy = JSON.parse(text) as KObject;
    const next = fn(copy) ?? copy;
    if (JSON.stringify(next) === text) return e;
    return this.store.put(resource, next);
  }

  // ------------------------------------------------------- change tracking

  private observe(e: StoreEvent): void {
    const obj = e.entry.obj;
    const prev = e.prev?.obj;
    switch (e.resource) {
      case R.pods: {
        if (prev) this.account(prev, -1);
        if (e.type !== "DELETED") this.account(obj, +1);
        const ns = obj.metadata.namespace!;
        this.dirtyPdbNs.add(ns);
        const owner = controllerOf(obj);
        if (owner?.kind === "ReplicaSet") this.dirtyRS.add(objectKey(ns, owner.name));
        if (owner?.kind === "DaemonSet") this.dirtyDS.add(objectKey(ns, owner.name));
        if (e.type === "DELETED") {
          this.terminating.delete(e.entry.key);
          this.starting.delete(e.entry.key);
          this.unschedulableRetry.delete(e.entry.key);
          this.unscheduled.delete(e.entry.key);
        } else if (!(obj.spec as Obj).nodeName && !obj.metadata.deletionTimestamp) {
          this.unscheduled.add(e.entry.key);
        }
        break;
      }
      case R.nodes: {
        const name = obj.metadata.name;
        if (e.type === "DELETED") {
          this.capacity.delete(name);
          this.leaseDue.delete(name);
          this.heartbeatDue.delete(name);
          this.orphanCheck.add(name);
        } else {
          const a = (obj.status as Obj).allocatable ?? {};
          this.capacity.set(name, { cpu: cpuMillicores(a.cpu ?? "0"), memory: bytes(a.memory ?? "0"), pods: Number(a.pods ?? 110) });
          if (!this.leaseDue.has(name)) this.leaseDue.set(name, this.clock.now() + LEASE_RENEW_MS);
          if (!this.heartbeatDue.has(name)) this.heartbeatDue.set(name, this.clock.now() + (this.rng.next() * NODE_STATUS_REPORT_MS));
        }
        if (e.type === "MODIFIED" && Boolean((prev?.spec as Obj)?.unschedulable) !== Boolean((obj.spec as Obj).unschedulable)) this.cordonCheck.add(name);
        if (e.type !== "MODIFIED" || JSON.stringify((prev?.spec as Obj)?.taints) !== JSON.stringify((obj.spec as Obj).taints)) {
          for (const ds of this.store.values(R.daemonsets)) this.dirtyDS.add(ds.key);
        }
        break;
      }
      case R.replicasets:
        if (e.type !== "DELETED") this.dirtyRS.add(e.entry.key);
        {
          const owner = controllerOf(obj);
          if (owner?.kind === "Deployment") this.dirtyDeploy.add(objectKey(obj.metadata.namespace, owner.name));
        }
        break;
      case R.deployments:
        if (e.type !== "DELETED") this.dirtyDeploy.add(e.entry.key);
        break;
      case R.daemonsets:
        if (e.type !== "DELETED") this.dirtyDS.add(e.entry.key);
        break;
      case R.pdbs:
        if (e.type !== "DELETED") this.dirtyPdbNs.add(obj.metadata.namespace!);
        break;
    }
    if (e.type === "DELETED" && e.resource !== R.events) this.collectDependents(obj);
  }

  private account(pod: KObject, sign: 1 | -1): void {
    const node = (pod.spec as Obj)?.nodeName as string | undefined;
    if (!node || isTerminal(pod)) return;
    let a = this.alloc.get(node);
    if (!a) this.alloc.set(node, (a = { cpu: 0, memory: 0, pods: 0 }));
    const r = podRequests(pod);
    a.cpu += sign * r.cpu;
    a.memory += sign * r.memory;
    a.pods += sign;
  }

  /** Garbage collector: background deletion of objects owned by a deleted one. */
  private collectDependents(owner: KObject): void {
    const uid = owner.metadata.uid;
    if (!uid || !["Deployment", "ReplicaSet", "DaemonSet"].includes(owner.kind ?? "")) return;
    const resource = owner.kind === "Deployment" ? R.replicasets : R.pods;
    for (const key of [...this.store.byIndex(resource, "owner", uid)]) {
      if (resource === R.pods) this.deletePod(key, undefined);
      else this.store.remove(resource, key);
    }
  }

  // ------------------------------------------------------- apiserver logic

  /**
   * Graceful pod deletion: a bound pod gets deletionTimestamp and disappears
   * once its grace period has passed; unbound pods or grace 0 go at once.
   * Returns the pod as the DELETE response shows it.
   */
  deletePod(key: string, gracePeriodSeconds: number | undefined): KObject | undefined {
    const e = this.store.get(R.pods, key);
    if (!e) return undefined;
    const pod = e.obj;
    const spec = pod.spec as Obj;
    const grace = gracePeriodSeconds ?? (spec.terminationGracePeriodSeconds as number | undefined) ?? 30;
    if (!spec.nodeName || grace <= 0 || isTerminal(pod)) {
      return this.store.remove(R.pods, key)?.obj;
    }
    const current = pod.metadata.deletionGracePeriodSeconds;
    if (current !== undefined && current <= grace) return pod;
    const deadline = this.clock.now() + grace * 1000;
    const next = this.update(R.pods, key, (p) => {
      p.metadata.deletionTimestamp = this.clock.iso(deadline);
      p.metadata.deletionGracePeriodSeconds = grace;
    })!;
    this.terminating.set(key, deadline);
    return next.obj;
  }

  /** PDBs in the pod's namespace whose selector matches it. */
  pdbsFor(pod: KObject): KObject[] {
    const out: KObject[] = [];
    for (const e of this.store.list(R.pdbs, pod.metadata.namespace)) {
      if (selectorOf(e.obj.spec as Obj).matches(pod.metadata.labels)) out.push(e.obj);
    }
    return out;
  }

  /**
   * The eviction subresource, with the disruption checks of the apiserver's
   * eviction REST handler. Returns normally on success (201).
   */
  evict(namespace: string, name: string, gracePeriodSeconds: number | undefined): void {
    const key = objectKey(namespace, name);
    const e = this.store.get(R.pods, key);
    if (!e) throw notFound("pods", "", name);
    const pod = e.obj;
    // Terminal or unready pods, and pods already going, need no budget.
    if (isTerminal(pod) || pod.metadata.deletionTimestamp) {
      this.deletePod(key, gracePeriodSeconds);
      return;
    }
    const pdbs = this.pdbsFor(pod);
    if (pdbs.length > 1) throw internalError("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.");
    if (pdbs.length === 1 && isReadyPod(pod)) {
      const pdb = this.refreshPdb(pdbs[0]!);
      const st = pdb.status as Obj;
      if ((st.disruptionsAllowed ?? 0) <= 0) {
        throw tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", [
          { reason: "DisruptionBudget", message: `The disruption budget ${pdb.metadata.name} needs ${st.desiredHealthy} healthy pods and has ${st.currentHealthy} currently` },
        ]);
      }
      this.update(R.pdbs, objectKey(namespace, pdb.metadata.name), (p) => {
        const s = p.status as Obj;
        s.disruptionsAllowed -= 1;
        s.disruptedPods = { ...(s.disruptedPods ?? {}), [name]: this.clock.iso() };
        if (s.disruptionsAllowed === 0) s.conditions = pdbConditions(false, this.clock.iso(), p.metadata.generation!);
      });
    }
    this.deletePod(key, gracePeriodSeconds);
  }

  // ------------------------------------------------------------ scheduling

  private fits(pod: KObject, node: KObject, req: { cpu: number; memory: number }): boolean {
    const spec = node.spec as Obj;
    if (spec.unschedulable) return false;
    const ready = ((node.status as Obj).conditions as Obj[]).find((c) => c.type === "Ready");
    if (ready?.status !== "True") return false;
    if (!toleratesNode(pod, node) || !selectorFits(pod, node)) return false;
    const cap = this.capacity.get(node.metadata.name);
    const a = this.alloc.get(node.metadata.name) ?? { cpu: 0, memory: 0, pods: 0 };
    if (!cap) return false;
    return a.cpu + req.cpu <= cap.cpu && a.memory + req.memory <= cap.memory && a.pods + 1 <= cap.pods;
  }

  private score(node: string, req: { cpu: number; memory: number }): number {
    const cap = this.capacity.get(node)!;
    const a = this.alloc.get(node) ?? { cpu: 0, memory: 0, pods: 0 };
    return (a.cpu + req.cpu) / cap.cpu + (a.memory + req.memory) / cap.memory;
  }

  /** Least-allocated feasible node; `sample` limits the nodes looked at (fast generation). */
  chooseNode(pod: KObject, sample?: KObject[]): string | undefined {
    const req = podRequests(pod);
    let best: string | undefined;
    let bestScore = Infinity;
    const consider = (n: KObject) => {
      if (!this.fits(pod, n, req)) return;
      const s = this.score(n.metadata.name, req) + this.rng.next() * 1e-6;
      if (s < bestScore) {
        bestScore = s;
        best = n.metadata.name;
      }
    };
    if (sample) sample.forEach(consider);
    else for (const e of this.store.values(R.nodes)) consider(e.obj);
    return best;
  }

  /** Bind a pod and start it immediately (used by the generator). */
  placeRunning(pod: KObject, node: KObject, startedMs: number): Entry {
    return this.create(R.pods, runningPod(bindPod(pod, node.metadata.name, this.clock), node, this.rng, this.clock, startedMs));
  }

  // ------------------------------------------------------------ controllers

  /** Run everything due up to the current simulated time. */
  tick(): void {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const now = this.clock.now();
      this.runTimers(now);
      this.finishTerminations(now);
      this.collectOrphans();
      this.syncCordons();
      this.reconcileDeployments();
      this.reconcileReplicaSets();
      this.reconcileDaemonSets();
      this.schedulePending();
      this.startPods(now);
      this.reconcilePdbs();
      this.kubelets(now);
      this.nodeLifecycle(now);
      if (this.churn > 0) this.runChurn(now);
      this.lastTick = now;
    } finally {
      this.ticking = false;
    }
  }

  /** Move simulated time forward and let every controller catch up (test handle). */
  advance(ms: number): void {
    // Step in slices so timers and grace periods fire in order.
    const step = 1000;
    let left = ms;
    while (left > 0) {
      const d = Math.min(step, left);
      this.clock.advance(d);
      this.tick();
      left -= d;
    }
    this.tick();
  }

  /** Schedule work at a simulated time from now. */
  later(ms: number, run: () => void): void {
    this.timers.push({ at: this.clock.now() + ms, run });
  }

  private runTimers(now: number): void {
    if (this.timers.length === 0) return;
    const due = this.timers.filter((t) => t.at <= now).sort((a, b) => a.at - b.at);
    if (due.length === 0) return;
    this.timers = this.timers.filter((t) => t.at > now);
    for (const t of due) t.run();
  }

  private finishTerminations(now: number): void {
    for (const [key, deadline] of [...this.terminating]) {
      if (deadline <= now) {
        this.terminating.delete(key);
        this.store.remove(R.pods, key);
      }
    }
  }

  /** Pod GC: pods bound to nodes that no longer exist are removed. */
  private collectOrphans(): void {
    for (const node of this.orphanCheck) {
      for (const key of [...this.store.byIndex(R.pods, "nodeName", node)]) this.store.remove(R.pods, key);
    }
    this.orphanCheck.clear();
  }

  /**
   * What follows a cordon or uncordon: the node lifecycle controller keeps the
   * unschedulable taint in step and the kubelet records an event.
   */
  private syncCordons(): void {
    for (const name of [...this.cordonCheck]) {
      this.cordonCheck.delete(name);
      const node = this.store.get(R.nodes, name)?.obj;
      if (!node) continue;
      const off = Boolean((node.spec as Obj).unschedulable);
      const key = "node.kubernetes.io/unschedulable";
      const has = (((node.spec as Obj).taints ?? []) as Obj[]).some((t) => t.key === key);
      if (off !== has) {
        this.update(R.nodes, name, (n) => setTaints(n, off ? [{ key, effect: "NoSchedule", timeAdded: this.clock.iso() }] : [], [key]));
      }
      this.nodeEvent(name, off ? "NodeNotSchedulable" : "NodeSchedulable", `Node ${name} status is now: ${off ? "NodeNotSchedulable" : "NodeSchedulable"}`);
    }
  }

  private reconcileDeployments(): void {
    for (const key of [...this.dirtyDeploy]) {
      this.dirtyDeploy.delete(key);
      const d = this.store.get(R.deployments, key)?.obj;
      if (!d) continue;
      const spec = d.spec as Obj;
      let rsKeys = [...this.store.byIndex(R.replicasets, "owner", d.metadata.uid!)];
      if (rsKeys.length === 0) {
        // A new Deployment (say, from kubectl create): its first ReplicaSet.
        rsKeys = [this.create(R.replicasets, replicaSetFor(d, this.rng)).key];
      }
      let replicas = 0, ready = 0, available = 0;
      for (const rsKey of rsKeys) {
        const rs = this.store.get(R.replicasets, rsKey)?.obj;
        if (!rs) continue;
        if ((rs.spec as Obj).replicas !== spec.replicas) {
          this.update(R.replicasets, rsKey, (c) => void ((c.spec as Obj).replicas = spec.replicas));
        }
        const st = (rs.status ?? {}) as Obj;
        replicas += st.replicas ?? 0;
        ready += st.readyReplicas ?? 0;
        available += st.availableReplicas ?? 0;
      }
      rsKeys = [];
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
      this.update(R.deployments, key, (c) => {
        c.status = status;
      });
    }
  }

  private reconcileReplicaSets(): void {
    for (const key of [...this.dirtyRS]) {
      this.dirtyRS.delete(key);
      const rs = this.store.get(R.replicasets, key)?.obj;
      if (!rs) continue;
      const spec = rs.spec as Obj;
      const active: KObject[] = [];
      for (const pk of this.store.byIndex(R.pods, "owner", rs.metadata.uid!)) {
        const p = this.store.get(R.pods, pk)?.obj;
        if (p && !p.metadata.deletionTimestamp && !isTerminal(p)) active.push(p);
      }
      const want = spec.replicas ?? 1;
      for (let i = active.length; i < want; i++) {
        this.create(R.pods, podFromTemplate(rs, spec.template, this.rng, this.clock));
      }
      if (active.length > want) {
        // Scale down: unscheduled and not-ready pods go first, as the controller prefers.
        const sorted = active.sort((a, b) => Number(isReadyPod(a)) - Number(isReadyPod(b)));
        for (const p of sorted.slice(0, active.length - want)) this.deletePod(objectKey(p.metadata.namespace, p.metadata.name), undefined);
      }
      const ready = active.filter(isReadyPod).length;
      this.update(R.replicasets, key, (c) => {
        const st: Obj = { replicas: active.length, fullyLabeledReplicas: active.length, observedGeneration: c.metadata.generation };
        if (ready) {
          st.readyReplicas = Math.min(ready, want);
          st.availableReplicas = Math.min(ready, want);
        }
        c.status = st;
      });
    }
  }

  private daemonEligible(ds: KObject, node: KObject): boolean {
    const probe = { metadata: { name: "" }, spec: { tolerations: [...((ds.spec as Obj).template.spec.tolerations ?? []), { key: "node.kubernetes.io/unschedulable", operator: "Exists", effect: "NoSchedule" }, { key: "node.kubernetes.io/not-ready", operator: "Exists" }, { key: "node.kubernetes.io/unreachable", operator: "Exists" }, { key: "node.kubernetes.io/memory-pressure", operator: "Exists", effect: "NoSchedule" }, { key: "node.kubernetes.io/disk-pressure", operator: "Exists", effect: "NoSchedule" }, { key: "node.kubernetes.io/pid-pressure", operator: "Exists", effect: "NoSchedule" }], nodeSelector: (ds.spec as Obj).template.spec.nodeSelector } } as KObject;
    return toleratesNode(probe, node) && selectorFits(probe, node);
  }

  private reconcileDaemonSets(): void {
    for (const key of [...this.dirtyDS]) {
      this.dirtyDS.delete(key);
      const ds = this.store.get(R.daemonsets, key)?.obj;
      if (!ds) continue;
      const byNode = new Map<string, KObject>();
      for (const pk of this.store.byIndex(R.pods, "owner", ds.metadata.uid!)) {
        const p = this.store.get(R.pods, pk)?.obj;
        if (p && !p.metadata.deletionTimestamp) byNode.set(this.daemonNode(p), p);
      }
      let desired = 0, ready = 0, current = 0, misscheduled = 0;
      for (const ne of this.store.values(R.nodes)) {
        const node = ne.obj;
        const eligible = this.daemonEligible(ds, node);
        const pod = byNode.get(node.metadata.name);
        byNode.delete(node.metadata.name);
        if (eligible) {
          desired++;
          if (pod) {
            current++;
            if (isReadyPod(pod)) ready++;
          } else {
            const p = podFromTemplate(ds, (ds.spec as Obj).template, this.rng, this.clock, { nodeAffinity: node.metadata.name });
            // The DaemonSet controller leaves binding to the scheduler, which honours the node affinity.
            this.create(R.pods, p);
            current++;
          }
        } else if (pod) {
          misscheduled++;
        }
      }
      for (const p of byNode.values()) this.deletePod(objectKey(p.metadata.namespace, p.metadata.name), undefined);
      this.update(R.daemonsets, key, (c) => {
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
    }
  }

  /** The node a daemon pod is pinned to (its nodeName, or its node affinity while pending). */
  private daemonNode(pod: KObject): string {
    const spec = pod.spec as Obj;
    if (spec.nodeName) return spec.nodeName;
    return spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms?.[0]?.matchFields?.[0]?.values?.[0] ?? "";
  }

  private schedulePending(): void {
    const now = this.clock.now();
    for (const [key, at] of this.unschedulableRetry) {
      if (at > now) continue;
      this.unschedulableRetry.delete(key);
      this.unscheduled.add(key);
    }
    if (this.unscheduled.size === 0) return;
    const total = this.store.size(R.nodes);
    for (const key of [...this.unscheduled]) {
      this.unscheduled.delete(key);
      const pod = this.store.get(R.pods, key)?.obj;
      if (!pod || (pod.spec as Obj).nodeName || pod.metadata.deletionTimestamp) continue;
      const pinned = this.daemonNode(pod);
      let target: string | undefined;
      if (pinned) {
        // Daemon pods ignore unschedulable (they tolerate it); they only need their node.
        target = this.store.get(R.nodes, pinned) ? pinned : undefined;
      } else {
        target = this.chooseNode(pod);
      }
      if (!target) {
        this.unschedulableRetry.set(key, now + 10_000);
        const cond = ((pod.status as Obj).conditions ?? []) as Obj[];
        if (!cond.some((c) => c.reason === "Unschedulable")) this.store.put(R.pods, unschedulable(JSON.parse(this.store.get(R.pods, key)!.json), total, this.clock));
        continue;
      }
      const bound = bindPod(JSON.parse(this.store.get(R.pods, key)!.json), target, this.clock);
      this.store.put(R.pods, bound);
      this.starting.set(key, this.clock.now() + POD_START_MS);
    }
  }

  private startPods(now: number): void {
    for (const [key, at] of [...this.starting]) {
      if (at > now) continue;
      this.starting.delete(key);
      const e = this.store.get(R.pods, key);
      if (!e || e.obj.metadata.deletionTimestamp) continue;
      const node = this.store.get(R.nodes, (e.obj.spec as Obj).nodeName)?.obj;
      if (!node) continue;
      this.store.put(R.pods, runningPod(JSON.parse(e.json), node, this.rng, this.clock));
    }
  }

  /** Disruption controller: recompute the status of PDBs in changed namespaces. */
  private reconcilePdbs(): void {
    for (const ns of [...this.dirtyPdbNs]) {
      this.dirtyPdbNs.delete(ns);
      for (const e of [...this.store.list(R.pdbs, ns)]) this.refreshPdb(e.obj);
    }
  }

  /** Recompute one PDB's status now; returns the stored result. */
  refreshPdb(pdb: KObject): KObject {
    const spec = pdb.spec as Obj;
    const sel = selectorOf(spec);
    let expected = 0;
    let healthy = 0;
    const names = new Set<string>();
    for (const p of this.podsMatching(pdb.metadata.namespace!, spec)) {
      if (!sel.matches(p.metadata.labels) || isTerminal(p)) continue;
      names.add(p.metadata.name);
      if (p.metadata.deletionTimestamp) continue;
      expected++;
      if (isReadyPod(p)) healthy++;
    }
    const resolve = (v: unknown): number => (typeof v === "string" && v.endsWith("%") ? Math.ceil((Number(v.slice(0, -1)) * expected) / 100) : Number(v));
    let desired: number;
    if (spec.minAvailable !== undefined) desired = resolve(spec.minAvailable);
    else if (spec.maxUnavailable !== undefined) desired = Math.max(0, expected - resolve(spec.maxUnavailable));
    else desired = expected;
    const old = (pdb.status ?? {}) as Obj;
    const now = this.clock.now();
    const disrupted: Record<string, string> = {};
    for (const [name, at] of Object.entries((old.disruptedPods ?? {}) as Record<string, string>)) {
      // Entries clear once the pod is gone or after the controller's 2 minute timeout.
      if (names.has(name) && now - Date.parse(at) < 120_000) {
        const p = this.store.get(R.pods, objectKey(pdb.metadata.namespace, name))?.obj;
        if (p && !p.metadata.deletionTimestamp) disrupted[name] = at;
      }
    }
    const allowed = Math.max(0, healthy - desired - Object.keys(disrupted).length);
    const key = objectKey(pdb.metadata.namespace, pdb.metadata.name);
    const oldAllowed = old.conditions?.[0]?.status;
    const condChanged = oldAllowed !== (allowed > 0 ? "True" : "False");
    const e = this.update(R.pdbs, key, (c) => {
      c.status = {
        observedGeneration: c.metadata.generation,
        ...(Object.keys(disrupted).length ? { disruptedPods: disrupted } : {}),
        disruptionsAllowed: allowed,
        currentHealthy: healthy,
        desiredHealthy: desired,
        expectedPods: expected,
        conditions: condChanged ? pdbConditions(allowed > 0, this.clock.iso(), c.metadata.generation!) : old.conditions,
      };
    });
    return e?.obj ?? pdb;
  }

  /** Pods of a namespace that a selector may match, narrowed by the label index when it can be. */
  private *podsMatching(namespace: string, spec: Obj): Generator<KObject> {
    const first = Object.entries((spec?.selector?.matchLabels ?? {}) as Record<string, string>)[0];
    if (first) {
      for (const key of this.store.byIndex(R.pods, "label", `${namespace}|${first[0]}=${first[1]}`)) {
        const e = this.store.get(R.pods, key);
        if (e) yield e.obj;
      }
      return;
    }
    for (const e of this.store.list(R.pods, namespace)) yield e.obj;
  }

  /** Kubelets: renew leases and post node status heartbeats. */
  private kubelets(now: number): void {
    for (const [node, due] of this.leaseDue) {
      if (due > now || this.stoppedKubelets.has(node)) continue;
      this.leaseDue.set(node, now + LEASE_RENEW_MS);
      const key = objectKey("kube-node-lease", node);
      if (this.store.get(R.leases, key)) this.update(R.leases, key, (l) => void ((l.spec as Obj).renewTime = this.clock.microIso(now)));
    }
    // Node status heartbeats rewrite every node every five minutes; with churn 0
    // nodes stay still so tests can count their events (leases still renew).
    if (this.churn <= 0) return;
    for (const [node, due] of this.heartbeatDue) {
      if (due > now || this.stoppedKubelets.has(node)) continue;
      this.heartbeatDue.set(node, now + NODE_STATUS_REPORT_MS);
      this.update(R.nodes, node, (n) => {
        for (const c of (n.status as Obj).conditions as Obj[]) if (c.type !== "NetworkUnavailable") c.lastHeartbeatTime = this.clock.iso(now);
      });
    }
  }

  /** Node lifecycle controller: a node whose lease expired becomes Unknown and tainted. */
  private nodeLifecycle(now: number): void {
    for (const node of this.stoppedKubelets) {
      const lease = this.store.get(R.leases, objectKey("kube-node-lease", node))?.obj;
      const renew = lease ? Date.parse((lease.spec as Obj).renewTime) : 0;
      if (now - renew < NODE_MONITOR_GRACE_MS) continue;
      const n = this.store.get(R.nodes, node)?.obj;
      if (!n) continue;
      const ready = ((n.status as Obj).conditions as Obj[]).find((c) => c.type === "Ready");
      if (ready?.status === "Unknown") continue;
      this.update(R.nodes, node, (c) => {
        for (const cond of (c.status as Obj).conditions as Obj[]) {
          if (cond.type === "NetworkUnavailable") continue;
          cond.status = "Unknown";
          cond.reason = "NodeStatusUnknown";
          cond.message = "Kubelet stopped posting node status.";
          cond.lastTransitionTime = this.clock.iso(now);
        }
        setTaints(c, [
          { key: "node.kubernetes.io/unreachable", effect: "NoSchedule" },
          { key: "node.kubernetes.io/unreachable", effect: "NoExecute", timeAdded: this.clock.iso(now) },
        ], ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]);
      });
      this.create(R.events, nodeEvent(node, "NodeNotReady", `Node ${node} status is now: NodeNotReady`, this.rng, this.clock, "node-controller"));
    }
  }

  // --------------------------------------------------------------- nodes

  /** Create a Ready node with its lease and let DaemonSets follow (test handle). */
  addNode(opts: { pool?: string; zone?: string; name?: string; createdMs?: number } = {}): KObject {
    const pool = opts.pool === "control-plane" ? CONTROL_PLANE_POOL : POOLS.find((p) => p.name === opts.pool) ?? this.rng.weighted(POOLS.map((p) => [p, p.weight] as const));
    const zone = opts.zone ?? this.rng.pick(ZONES);
    const index = this.nodeCounter++;
    const name = opts.name ?? `${pool.name}-${zone.slice(-1)}-${this.rng.suffix(5)}`;
    const plan: NodePlan = { name, pool, zone, type: this.rng.pick(pool.instanceTypes), index, createdMs: opts.createdMs ?? this.clock.now() };
    const node = this.create(R.nodes, buildNode(plan, this.rng, this.clock)).obj;
    this.create(R.leases, buildLease(node, this.clock));
    if (opts.createdMs === undefined) {
      this.create(R.events, nodeEvent(name, "Starting", "Starting kubelet.", this.rng, this.clock));
      this.create(R.events, nodeEvent(name, "NodeReady", `Node ${name} status is now: NodeReady`, this.rng, this.clock));
      this.create(R.events, nodeEvent(name, "RegisteredNode", `Node ${name} event: Registered Node ${name} in Controller`, this.rng, this.clock, "node-controller"));
    }
    return node;
  }

  /** Delete a node; pod GC removes its pods and ReplicaSets replace them (test handle). */
  removeNode(name: string): boolean {
    const gone = this.store.remove(R.nodes, name);
    this.store.remove(R.leases, objectKey("kube-node-lease", name));
    this.stoppedKubelets.delete(name);
    return gone !== undefined;
  }

  /**
   * Set a node condition as its kubelet would report it, with matching
   * taints (test handle). Setting Ready=Unknown stops the kubelet instead of
   * writing directly, so the lifecycle controller does it after the grace period
   * unless `immediate`.
   */
  setNodeCondition(name: string, type: string, status: "True" | "False" | "Unknown", reason?: string, message?: string): KObject | undefined {
    const now = this.clock.iso();
    const text = conditionText(type, status);
    const e = this.update(R.nodes, name, (n) => {
      const conds = (n.status as Obj).conditions as Obj[];
      let c = conds.find((x) => x.type === type);
      if (!c) conds.push((c = { type }));
      if (c.status !== status) c.lastTransitionTime = now;
      c.status = status;
      c.lastHeartbeatTime = now;
      c.reason = reason ?? text.reason;
      c.message = message ?? text.message;
      const taint = conditionTaint(type, status);
      // Only the taints belonging to this condition are touched.
      const own = type === "Ready" ? ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"] : [conditionTaint(type, "True")?.key ?? ""];
      const add = taint ? [taint, ...(type === "Ready" ? [{ key: taint.key, effect: "NoExecute", timeAdded: now }] : [])] : [];
      setTaints(n, add, own);
    });
    if (e && type === "Ready") {
      this.create(R.events, nodeEvent(name, status === "True" ? "NodeReady" : "NodeNotReady", `Node ${name} status is now: ${status === "True" ? "NodeReady" : "NodeNotReady"}`, this.rng, this.clock));
    }
    return e?.obj;
  }

  /** Stop a node's kubelet: its lease stops renewing and the node goes Unknown after 40s (test handle). */
  stopKubelet(name: string): void {
    this.stoppedKubelets.add(name);
  }

  /** Restart a stopped kubelet: it renews its lease and posts Ready again (test handle). */
  startKubelet(name: string): void {
    if (!this.stoppedKubelets.delete(name)) return;
    const key = objectKey("kube-node-lease", name);
    this.update(R.leases, key, (l) => void ((l.spec as Obj).renewTime = this.clock.microIso()));
    const now = this.clock.iso();
    this.update(R.nodes, name, (n) => {
      for (const c of (n.status as Obj).conditions as Obj[]) {
        if (c.type === "NetworkUnavailable") continue;
        const status = c.type === "Ready" ? "True" : "False";
        if (c.status !== status) c.lastTransitionTime = now;
        c.status = status;
        c.lastHeartbeatTime = now;
        Object.assign(c, conditionText(c.type, status));
      }
      setTaints(n, [], ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]);
    });
    this.create(R.events, nodeEvent(name, "NodeReady", `Node ${name} status is now: NodeReady`, this.rng, this.clock));
  }

  /** Record a kubelet event about a node. */
  nodeEvent(name: string, reason: string, message: string, component = "kubelet"): void {
    this.create(R.events, nodeEvent(name, reason, message, this.rng, this.clock, component));
  }

  // --------------------------------------------------------------- churn

  private runChurn(now: number): void {
    const elapsedMin = Math.max(0, now - this.lastTick) / 60_000;
    // Poisson-ish: expected `churn` scenarios per simulated minute.
    let expected = this.churn * elapsedMin;
    while (expected > 0) {
      if (this.rng.next() < Math.min(1, expected)) this.scenario();
      expected -= 1;
    }
  }

  private scenario(): void {
    const names = this.nodeNames().filter((n) => !n.startsWith("control-plane"));
    if (names.length === 0) return;
    const node = this.rng.pick(names);
    const kind = this.rng.weighted([
      ["flap", 40],
      ["unknown", 15],
      ["notready", 15],
      ["upgrade", 15],
      ["add", 8],
      ["remove", 7],
    ] as const);
    switch (kind) {
      case "flap": {
        const type = this.rng.pick(["MemoryPressure", "DiskPressure", "PIDPressure"]);
        this.setNodeCondition(node, type, "True");
        this.later(this.rng.int(30, 180) * 1000, () => this.store.get(R.nodes, node) && this.setNodeCondition(node, type, "False"));
        break;
      }
      case "unknown":
        this.stopKubelet(node);
        this.later(this.rng.int(60, 240) * 1000, () => this.startKubelet(node));
        break;
      case "notready":
        this.setNodeCondition(node, "Ready", "False");
        this.later(this.rng.int(20, 120) * 1000, () => this.store.get(R.nodes, node) && this.setNodeCondition(node, "Ready", "True"));
        break;
      case "upgrade":
        this.update(R.nodes, node, (n) => {
          const info = (n.status as Obj).nodeInfo;
          info.kubeletVersion = LATEST_KUBELET;
          info.kubeProxyVersion = LATEST_KUBELET;
          info.bootID = this.rng.uid();
        });
        this.nodeEvent(node, "Starting", "Starting kubelet.");
        break;
      case "add":
        this.addNode();
        break;
      case "remove":
        if (names.length > 3) this.removeNode(node);
        break;
    }
  }
}

/** Replace the taints with these keys by `add` (kept sorted as the controllers add them). */
function setTaints(node: KObject, add: Obj[], keys: string[]): void {
  const spec = node.spec as Obj;
  const kept = ((spec.taints ?? []) as Obj[]).filter((t) => !keys.includes(t.key));
  const merged = [...kept];
  for (const t of add) {
    const old = ((spec.taints ?? []) as Obj[]).find((o) => o.key === t.key && o.effect === t.effect);
    merged.push(old ?? t);
  }
  if (merged.length) spec.taints = merged;
  else delete spec.taints;
}

/** The DisruptionAllowed condition of a PDB status. */
export function pdbConditions(allowed: boolean, now: string, generation: number): Obj[] {
  return [
    {
      type: "DisruptionAllowed",
      status: allowed ? "True" : "False",
      reason: allowed ? "SufficientPods" : "InsufficientPods",
      message: "",
      lastTransitionTime: now,
      observedGeneration: generation,
    },
  ];
}

export { ApiError };
