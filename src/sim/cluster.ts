/**
 * The simulated cluster: one object store, the writes every client makes
 * through the apiserver (server-set metadata, copy-on-write updates, graceful
 * pod deletion), and the controllers of ./controllers run over that store in
 * one loop, as kube-controller-manager, the scheduler and the kubelets run
 * around a real apiserver. Everything is driven by the simulated clock.
 * Tests act on it directly through the methods marked "test handle".
 */
import { ObjectStore, objectKey, Entry, type KObject, type StoreEvent } from "./store.js";
import { SimClock } from "./clock.js";
import { Rng } from "./rng.js";
import { R } from "./storage-names.js";
import { nodeEvent } from "./nodes.js";
import { bindPod, isTerminal, runningPod } from "./workloads.js";
import { evictPod } from "./apiserver/subresources.js";
import type { ClusterContext } from "./controllers/context.js";
import { GarbageCollector } from "./controllers/garbage-collector.js";
import { PodGcController } from "./controllers/pod-gc.js";
import { DeploymentController } from "./controllers/deployment.js";
import { ReplicaSetController } from "./controllers/replicaset.js";
import { DaemonSetController } from "./controllers/daemonset.js";
import { Scheduler, type NodeResources } from "./controllers/scheduler.js";
import { KubeletPodWorkers } from "./controllers/kubelet-pods.js";
import { Kubelets, type AddNodeOptions } from "./controllers/kubelet.js";
import { NodeLifecycleController } from "./controllers/node-lifecycle.js";
import { TaintEvictionController } from "./controllers/taint-eviction.js";
import { DisruptionController } from "./controllers/disruption.js";
import { ChurnController } from "./controllers/churn.js";
import { EventTtl } from "./controllers/event-ttl.js";
import { NodeUsageScrapes } from "./metrics.js";

export { R } from "./storage-names.js";

type Obj = Record<string, any>;

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

interface Timer {
  at: number;
  run: () => void;
}

/** Kinds whose metadata.generation the apiserver keeps. */
const GENERATION_KINDS: readonly string[] = [R.deployments, R.replicasets, R.daemonsets, R.pdbs];

/** The simulated cluster (see file comment). */
export class SimCluster implements ClusterContext {
  readonly store: ObjectStore;
  readonly clock: SimClock;
  readonly rng: Rng;
  /** Churn scenarios per simulated minute (tests may change it). */
  churn: number;

  // The controllers, each over the shared store (see ./controllers).
  private readonly garbageCollector = new GarbageCollector(this);
  private readonly podGc = new PodGcController(this);
  private readonly deployments = new DeploymentController(this);
  private readonly replicaSets = new ReplicaSetController(this);
  private readonly daemonSets = new DaemonSetController(this);
  private readonly scheduler = new Scheduler(this);
  private readonly podWorkers = new KubeletPodWorkers(this);
  private readonly kubelets = new Kubelets(this);
  private readonly nodeLifecycle = new NodeLifecycleController(this, this.kubelets.stopped);
  private readonly taintEviction = new TaintEvictionController(this);
  readonly disruption = new DisruptionController(this);
  private readonly churner: ChurnController;

  private readonly eventTtl = new EventTtl(this);
  /** What metrics.k8s.io serves for each node (see ../metrics.ts). */
  readonly nodeUsage = new NodeUsageScrapes(this);
  /** Told of each pod the eviction subresource let go (the ground truth log listens). */
  readonly evictionListeners = new Set<(pod: KObject) => void>();
  /** The Event each repeatable node event was recorded as (see nodeEvent). */
  private readonly eventKeys = new Map<string, string>();

  private timers: Timer[] = [];
  private ticking = false;

  constructor(readonly options: ClusterOptions) {
    this.clock = new SimClock(options.startTime ?? Date.now(), options.clockSpeed);
    this.rng = new Rng(options.seed);
    this.churn = options.churn;
    this.store = new ObjectStore(options.historySize ?? 10_000);
    this.churner = new ChurnController(this, this.clock.now());
    this.store.addIndex(R.pods, "nodeName", (o) => [((o.spec as Obj)?.nodeName as string) ?? ""]);
    this.store.addIndex(R.pods, "owner", (o) => (o.metadata.ownerReferences ?? []).map((r) => r.uid));
    // namespace|key=value of every pod label: PDB and selector lookups without scanning a namespace.
    this.store.addIndex(R.pods, "label", (o) => Object.entries(o.metadata.labels ?? {}).map(([k, v]) => `${o.metadata.namespace}|${k}=${v}`));
    this.store.addIndex(R.replicasets, "owner", (o) => (o.metadata.ownerReferences ?? []).map((r) => r.uid));
    // Every controller notes its work from each change; the garbage collector
    // goes last because it writes (cascading deletes) inside the event.
    const informers = [
      this.scheduler,
      this.podWorkers,
      this.kubelets,
      this.nodeLifecycle,
      this.taintEviction,
      this.podGc,
      this.deployments,
      this.replicaSets,
      this.daemonSets,
      this.disruption,
      this.eventTtl,
      this.nodeUsage,
      this.garbageCollector,
    ];
    this.store.subscribe((e: StoreEvent) => {
      for (const c of informers) c.observe(e);
    });
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
    return [...this.store.byIndexEntries(R.pods, "nodeName", node)].map((e) => e.obj);
  }

  /** Requested cpu (millicores), memory (bytes) and pod count on a node, as the scheduler counts them. */
  allocated(node: string): NodeResources {
    return this.scheduler.allocated(node);
  }

  /** Nodes whose kubelet has stopped posting (churn or test). */
  get stoppedKubelets(): ReadonlySet<string> {
    return this.kubelets.stopped;
  }

  // ---------------------------------------------------------------- writing

  /** Create an object with server-set metadata filled in. */
  create(resource: string, obj: KObject): Entry {
    const m = obj.metadata;
    m.uid ??= this.rng.uid();
    m.creationTimestamp ??= this.clock.iso();
    if (GENERATION_KINDS.includes(resource)) m.generation ??= 1;
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

  /**
   * Graceful pod deletion: a bound pod gets deletionTimestamp and its kubelet
   * removes it once the grace period has passed; unbound pods or grace 0 go at
   * once. Returns the pod as the DELETE response shows it.
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
    return this.update(R.pods, key, (p) => {
      p.metadata.deletionTimestamp = this.clock.iso(deadline);
      p.metadata.deletionGracePeriodSeconds = grace;
    })!.obj;
  }

  /** The eviction subresource without HTTP: returns on success, throws the 429/404/500 ApiError otherwise (test handle). */
  evict(namespace: string, name: string, gracePeriodSeconds: number | undefined): void {
    evictPod(this, namespace, name, gracePeriodSeconds);
  }

  /**
   * Record a kubelet (or `component`) event about a node. A repeat of an event still held (same
   * node, reason, message, source and type) bumps its count and lastTimestamp, as client-go's
   * EventCorrelator does, instead of adding an Event.
   */
  nodeEvent(name: string, reason: string, message: string, component = "kubelet", type: "Normal" | "Warning" = "Normal"): void {
    // Built either way, so the random stream (and every seeded name after it) does not depend on repeats.
    const event = nodeEvent(name, reason, message, this.rng, this.clock, component, type);
    const repeatOf = this.eventKeys.get(JSON.stringify([name, reason, message, component, type]));
    if (repeatOf && this.update(R.events, repeatOf, (e) => void ((e as Obj).count++, ((e as Obj).lastTimestamp = this.clock.iso())))) return;
    const created = this.create(R.events, event);
    // Keys of expired events are overwritten as they recur; a table of many thousands is stale.
    if (this.eventKeys.size > 100_000) this.eventKeys.clear();
    this.eventKeys.set(JSON.stringify([name, reason, message, component, type]), created.key);
  }

  // ------------------------------------------------------------ scheduling

  /** Least-allocated feasible node; `sample` limits the nodes looked at (fast generation). */
  chooseNode(pod: KObject, sample?: KObject[]): string | undefined {
    return this.scheduler.chooseNode(pod, sample);
  }

  /** Bind a pod and start it immediately (used by the generator). */
  placeRunning(pod: KObject, node: KObject, startedMs: number): Entry {
    return this.create(R.pods, runningPod(bindPod(pod, node.metadata.name, this.clock), node, this.rng, this.clock, startedMs));
  }

  // ------------------------------------------------------------ the loop

  /**
   * Run everything due up to the current simulated time, in the order a change
   * flows: deletions finish, controllers make pods, the scheduler binds them,
   * kubelets start them, budgets follow, then node health and churn.
   */
  tick(): void {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const now = this.clock.now();
      this.runTimers(now);
      this.podWorkers.finishTerminations(now);
      this.podGc.sync();
      this.nodeLifecycle.syncCordons();
      this.deployments.sync();
      this.replicaSets.sync();
      this.daemonSets.sync();
      this.scheduler.sync();
      this.podWorkers.startPods(now);
      this.disruption.sync();
      this.kubelets.postStatus(now, this.churn > 0);
      this.nodeLifecycle.markUnreachable(now);
      this.taintEviction.sync(now);
      this.churner.sync(now, this.churn);
      this.eventTtl.expire(now);
      this.nodeUsage.refresh(now);
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

  // --------------------------------------------------------------- nodes

  /** Create a Ready node with its lease and let DaemonSets follow (test handle). */
  addNode(opts: AddNodeOptions = {}): KObject {
    return this.kubelets.register(opts);
  }

  /** Delete a node; pod GC removes its pods and ReplicaSets replace them (test handle). */
  removeNode(name: string): boolean {
    return this.kubelets.remove(name);
  }

  /**
   * Set a node condition as its kubelet would report it, with matching taints
   * (test handle). To have a node go Unknown as a real one does, stop its
   * kubelet instead: the lifecycle controller marks it after the grace period.
   */
  setNodeCondition(name: string, type: string, status: "True" | "False" | "Unknown", reason?: string, message?: string): KObject | undefined {
    return this.kubelets.reportCondition(name, type, status, reason, message);
  }

  /** Stop a node's kubelet: its lease stops renewing and the node goes Unknown after 40s (test handle). */
  stopKubelet(name: string): void {
    this.kubelets.stop(name);
  }

  /** Restart a stopped kubelet: it renews its lease and posts Ready again (test handle). */
  startKubelet(name: string): void {
    this.kubelets.start(name);
  }
}
