import { EventEmitter } from "node:events";
import type { Logger } from "../log/logger.js";
import type { KubeClient } from "./kube-client.js";
import { MetricsPoller } from "./metrics-poller.js";
import { NodeFactsCache } from "./node-facts-cache.js";
import type { CachedNode, CachedPod, NodeUsageSample } from "./model.js";
import { Reflector, type ReflectorSink, type ReflectorState } from "./reflector.js";
import { podWatchListOffThread } from "./off-thread-pods.js";
import { stripNode, stripPod } from "./strip.js";

/** A node as it was before and after one observed change. */
export interface NodeChange {
  cluster: string;
  name: string;
  before?: CachedNode;
  /** Undefined when the node was deleted. */
  after?: CachedNode;
  /** Seen by comparing a relist with the cache rather than from a watch event: we were not looking when it happened. */
  relisted: boolean;
  /** When the watch (or the relist) delivered it: history's time for it, however late it is written. */
  observedAt: Date;
}

/** How long a cluster may be without its watches before it counts as not live: longer than a watch's renewal takes. */
export const STALE_SETTLE_MS = 1_000;

export interface ClusterStatus {
  name: string;
  /** The node watch is established. */
  connected: boolean;
  /** Nodes and pods have both been fully listed at least once. */
  synced: boolean;
  /** The last failure talking to the cluster, if it has not recovered since. */
  lastError?: string;
  /** Its Status reason, e.g. "Forbidden" (the service account lacks a permission) or "Unauthorized". */
  lastErrorReason?: string;
  /** metrics.k8s.io answered the last poll. */
  metricsAvailable: boolean;
  /**
   * Since when the cache has not been live (a watch of nodes or pods not established for longer
   * than a renewal takes, or not yet synced): what it serves is the last known state. Undefined while live.
   */
  disconnectedSince?: Date;
  /** Times the cluster came back as another (its resourceVersions went back), each followed by a relist of everything. */
  resets: number;
  lastResetAt?: Date;
}

export interface ClusterCacheOptions {
  name: string;
  client: KubeClient;
  logger: Logger;
  metricsIntervalMs?: number;
  /** Reflector tuning, mostly for tests. */
  stallTimeoutMs?: number;
  watchTimeoutSeconds?: number;
  backoffInitialMs?: number;
}

/**
 * Everything node-inventory knows about one cluster, kept current by watches: nodes, pods
 * indexed by node, and node metrics. Reads are synchronous map lookups: a query never waits
 * on the Kubernetes API. Emits "node" with a NodeChange for every observed node change.
 */
export class ClusterCache extends EventEmitter<{ node: [NodeChange]; status: [ClusterStatus]; relisted: [] }> {
  readonly name: string;
  /** The cluster's API, for the few writes and leases that go beside the caches. */
  readonly client: KubeClient;
  private readonly nodes = new Map<string, CachedNode>();
  private pods = new Map<string, CachedPod>();
  private readonly podsByNode = new Map<string, Map<string, CachedPod>>();
  /** Bumped on every pod change of a node, so per-node sums can be memoised safely. */
  private readonly podGeneration = new Map<string, number>();
  private readonly nodeReflector: Reflector<CachedNode>;
  private readonly podReflector: Reflector<CachedPod>;
  private readonly metrics: MetricsPoller;
  /** Events about nodes and the nodes' Leases (heartbeats). */
  readonly facts: NodeFactsCache;
  /** Since when the watches are not all established (a renewal, or a failure). */
  private notLiveSince: Date | undefined = new Date();
  /** metadata.uid of the kube-system namespace: a cluster's identity, where it may be read. */
  private clusterUid: string | undefined;
  private resets = 0;
  private lastResetAt: Date | undefined;
  private readonly logger: Logger;
  /** The same once it has lasted {@link STALE_SETTLE_MS}: what the cluster's status says. Stale from the start, until the first sync. */
  private staleSince: Date | undefined = this.notLiveSince;
  private settleTimer: NodeJS.Timeout | undefined;

  constructor(options: ClusterCacheOptions) {
    super();
    this.name = options.name;
    this.client = options.client;
    const logger = options.logger.child({ cluster: options.name });
    this.logger = logger;
    const tuning = {
      ...(options.stallTimeoutMs !== undefined ? { stallTimeoutMs: options.stallTimeoutMs } : {}),
      ...(options.watchTimeoutSeconds !== undefined ? { watchTimeoutSeconds: options.watchTimeoutSeconds } : {}),
      ...(options.backoffInitialMs !== undefined ? { backoffInitialMs: options.backoffInitialMs } : {}),
    };
    const emitStatus = () => {
      this.trackLiveness();
      this.emit("status", this.status());
    };
    const wentBack = (from: () => Reflector<any>) => (detail: string) => this.reset(from(), detail);
    this.nodeReflector = new Reflector({
      resource: "nodes",
      path: "/api/v1/nodes",
      client: options.client,
      logger,
      transform: (raw) => stripNode(this.name, raw),
      sink: this.nodeSink(),
      onStateChange: emitStatus,
      onResourceVersionsWentBack: wentBack(() => this.nodeReflector),
      anotherClusterSince: () => this.anotherCluster(),
      ...tuning,
    });
    this.podReflector = new Reflector({
      resource: "pods",
      path: "/api/v1/pods",
      client: options.client,
      logger,
      transform: (raw) => stripPod(this.name, raw),
      // 150,000 pods' JSON is read, parsed and stripped beside the main thread (off-thread-pods.ts).
      watchListOffThread: podWatchListOffThread(options.name),
      sink: this.podSink(),
      onStateChange: emitStatus,
      onResourceVersionsWentBack: wentBack(() => this.podReflector),
      ...tuning,
    });
    this.metrics = new MetricsPoller({ client: options.client, logger, intervalMs: options.metricsIntervalMs ?? 15_000 });
    this.facts = new NodeFactsCache({ cluster: this.name, client: options.client, logger, tuning, onResourceVersionsWentBack: (from, detail) => this.reset(from, detail) });
  }

  start(): void {
    void this.anotherCluster();
    this.nodeReflector.start();
    this.podReflector.start();
    this.metrics.start();
    this.facts.start();
  }

  async stop(): Promise<void> {
    clearTimeout(this.settleTimer);
    await Promise.all([this.nodeReflector.stop(), this.podReflector.stop(), this.metrics.stop(), this.facts.stop()]);
  }

  status(): ClusterStatus {
    const nodes = this.nodeReflector.state;
    const pods = this.podReflector.state;
    const failed = nodes.lastError ? nodes : pods.lastError ? pods : undefined;
    return {
      name: this.name,
      connected: nodes.connected,
      synced: nodes.synced && pods.synced,
      ...(failed ? { lastError: failed.lastError } : {}),
      ...(failed?.lastErrorReason ? { lastErrorReason: failed.lastErrorReason } : {}),
      metricsAvailable: this.metrics.available,
      ...(this.staleSince ? { disconnectedSince: this.staleSince } : {}),
      resets: this.resets,
      ...(this.lastResetAt ? { lastResetAt: this.lastResetAt } : {}),
    };
  }

  /**
   * Live: both watches established and both lists loaded. A watch that ends on its timeout is
   * opened again within milliseconds, so a cluster counts as not live (stale) only once it has
   * been so for {@link STALE_SETTLE_MS}, and from when it stopped being live; live again at once.
   */
  private trackLiveness(): void {
    const nodes = this.nodeReflector.state;
    const pods = this.podReflector.state;
    if (nodes.connected && nodes.synced && pods.connected && pods.synced) {
      clearTimeout(this.settleTimer);
      this.settleTimer = undefined;
      this.notLiveSince = this.staleSince = undefined;
      return;
    }
    if (this.notLiveSince) return;
    this.notLiveSince = new Date();
    this.settleTimer = setTimeout(() => {
      this.settleTimer = undefined;
      if (!this.notLiveSince) return;
      this.staleSince = this.notLiveSince;
      this.emit("status", this.status());
    }, STALE_SETTLE_MS);
    this.settleTimer.unref();
  }

  /**
   * Whether the server is now another cluster than the one first seen, by the uid of its
   * kube-system namespace (a new cluster, or one restored, has another). Unknown (undefined) when
   * it cannot be read: a missing permission or a failure is no reason to relist.
   */
  private async anotherCluster(): Promise<string | undefined> {
    let uid: string | undefined;
    try {
      uid = (await this.client.getJson<{ metadata?: { uid?: string } }>("/api/v1/namespaces/kube-system", {}, 10_000)).metadata?.uid;
    } catch {
      return undefined;
    }
    if (!uid) return undefined;
    const before = this.clusterUid;
    this.clusterUid = uid;
    return before && before !== uid ? `the kube-system namespace's uid is ${uid}, was ${before}` : undefined;
  }

  /**
   * One resource found the cluster's resourceVersions behind what was seen: it is not the
   * cluster cached (restarted with another state, restored from a backup, or another cluster
   * at this address). Every resource is listed again; the node relist replaces the nodes
   * (the ones gone are gone, and history's reconcile records them deleted).
   */
  private reset(from: Reflector<any>, detail: string): void {
    this.resets++;
    this.lastResetAt = new Date();
    this.logger.warn({ detail, resets: this.resets }, "the cluster came back as another (resourceVersions went back): relisting everything");
    for (const reflector of [this.nodeReflector, this.podReflector, ...this.facts.reflectors()]) if (reflector !== from) reflector.relist();
    this.emit("status", this.status());
  }

  /** Each watch's counters and how many objects it holds (for /metrics). */
  watchStates(): Record<"nodes" | "pods", ReflectorState & { cached: number }> {
    return { nodes: { ...this.nodeReflector.state, cached: this.nodes.size }, pods: { ...this.podReflector.state, cached: this.pods.size } };
  }

  /** The nodes (not necessarily the pods) have been fully listed: enough for history. */
  nodesSynced(): boolean {
    return this.nodeReflector.state.synced;
  }

  /** The first load is over: nodes listed, and pods listed or refused (the bulk of a sync is its pods). */
  initialLoadSettled(): boolean {
    const pods = this.podReflector.state;
    return this.nodeReflector.state.synced && (pods.synced || pods.lastError !== undefined);
  }

  node(name: string): CachedNode | undefined {
    return this.nodes.get(name);
  }

  allNodes(): IterableIterator<CachedNode> {
    return this.nodes.values();
  }

  get nodeCount(): number {
    return this.nodes.size;
  }

  /** The pods bound to `nodeName`, in no particular order. */
  podsOn(nodeName: string): Iterable<CachedPod> {
    return this.podsByNode.get(nodeName)?.values() ?? [];
  }

  podGenerationOf(nodeName: string): number {
    return this.podGeneration.get(nodeName) ?? 0;
  }

  usage(nodeName: string): NodeUsageSample | undefined {
    return this.metrics.sample(nodeName);
  }

  private nodeSink(): ReflectorSink<CachedNode> {
    return {
      replace: (items) => {
        for (const [name, before] of this.nodes) {
          if (!items.has(name)) {
            this.nodes.delete(name);
            this.emit("node", { cluster: this.name, name, before, relisted: true, observedAt: new Date() });
          }
        }
        for (const [name, after] of items) {
          const before = this.nodes.get(name);
          this.nodes.set(name, after);
          if (before?.resourceVersion !== after.resourceVersion) {
            this.emit("node", { cluster: this.name, name, ...(before ? { before } : {}), after, relisted: true, observedAt: new Date() });
          }
        }
        // After a relist, what changed while the watch was down is only knowable by comparison.
        this.emit("relisted");
      },
      upsert: (name, after) => {
        const before = this.nodes.get(name);
        this.nodes.set(name, after);
        this.emit("node", { cluster: this.name, name, ...(before ? { before } : {}), after, relisted: false, observedAt: new Date() });
      },
      remove: (name) => {
        const before = this.nodes.get(name);
        if (!before) return;
        this.nodes.delete(name);
        this.emit("node", { cluster: this.name, name, before, relisted: false, observedAt: new Date() });
      },
    };
  }

  private podSink(): ReflectorSink<CachedPod> {
    const unindex = (key: string, pod: CachedPod) => {
      const onNode = this.podsByNode.get(pod.nodeName);
      onNode?.delete(key);
      if (onNode?.size === 0) this.podsByNode.delete(pod.nodeName);
      this.bump(pod.nodeName);
    };
    const index = (key: string, pod: CachedPod) => {
      if (!pod.nodeName) return;
      let onNode = this.podsByNode.get(pod.nodeName);
      if (!onNode) this.podsByNode.set(pod.nodeName, (onNode = new Map()));
      onNode.set(key, pod);
      this.bump(pod.nodeName);
    };
    return {
      replace: (items) => {
        // Taken as it is rather than copied: 150,000 pods in two maps at once, for nothing.
        this.pods = items;
        this.podsByNode.clear();
        for (const nodeName of this.podGeneration.keys()) this.bump(nodeName);
        for (const [key, pod] of items) index(key, pod);
      },
      upsert: (key, pod) => {
        const before = this.pods.get(key);
        if (before) unindex(key, before);
        this.pods.set(key, pod);
        index(key, pod);
      },
      remove: (key) => {
        const before = this.pods.get(key);
        if (!before) return;
        this.pods.delete(key);
        unindex(key, before);
      },
    };
  }

  private bump(nodeName: string): void {
    this.podGeneration.set(nodeName, (this.podGeneration.get(nodeName) ?? 0) + 1);
  }
}
