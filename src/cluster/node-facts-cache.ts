/**
 * The node facts one cluster's cache keeps beside nodes and pods: the Events about nodes
 * (core/v1, involvedObject.kind=Node) and the kubelets' Leases in kube-node-lease, each kept
 * current by a reflector of its own. Neither counts towards the cluster being synced: a
 * cluster whose events cannot be listed still serves its nodes.
 */
import { EventEmitter } from "node:events";
import type { Logger } from "../log/logger.js";
import type { KubeClient } from "./kube-client.js";
import { compareNewestFirst, stripNodeEvent, type CachedNodeEvent } from "./node-event.js";
import { Reflector, type ReflectorOptions, type ReflectorSink } from "./reflector.js";

/** The node monitor grace period of kube-controller-manager: a Lease older than this is overdue. */
export const NODE_MONITOR_GRACE_SECONDS = 40;
/** Events kept per node; past it the least recently seen go (a flapping node's hour of events). */
const MAX_EVENTS_PER_NODE = 500;
/** Renewals whose skew estimates the cluster's clock (their median). */
const SKEW_SAMPLES = 15;

export interface Heartbeat {
  time: Date;
  /** Seconds since `time` on the cluster's clock (never negative). */
  ageSeconds: number;
}

type Tuning = Pick<ReflectorOptions<unknown>, "stallTimeoutMs" | "watchTimeoutSeconds" | "backoffInitialMs">;

export interface NodeFactsCacheOptions {
  cluster: string;
  client: KubeClient;
  logger: Logger;
  tuning?: Tuning;
  /** One of its reflectors found the cluster's resourceVersions went back (see Reflector). */
  onResourceVersionsWentBack?(from: Reflector<unknown>, detail: string): void;
}

/**
 * Emits "event" for each Event about a node seen on the watch (added or changed) and
 * "eventsRelisted" after each full list, when every cached event may be new.
 */
export class NodeFactsCache extends EventEmitter<{ event: [CachedNodeEvent]; eventsRelisted: [] }> {
  private readonly events = new Map<string, CachedNodeEvent>();
  private readonly eventsByNode = new Map<string, Map<string, CachedNodeEvent>>();
  /** Node name → its Lease's renewTime in ms. */
  private readonly renewals = new Map<string, number>();
  /** renewTime − arrival of recent renewals seen on the watch, in ms. */
  private readonly skews: number[] = [];
  /** Their median, until the next renewal. */
  private skew: number | undefined;
  private readonly eventReflector: Reflector<CachedNodeEvent | undefined>;
  private readonly leaseReflector: Reflector<number | undefined>;

  constructor(options: NodeFactsCacheOptions) {
    super();
    const common = { client: options.client, logger: options.logger, ...options.tuning };
    const wentBack = (from: () => Reflector<any>) => (detail: string) => options.onResourceVersionsWentBack?.(from(), detail);
    this.eventReflector = new Reflector({
      ...common,
      resource: "events",
      // Only events about nodes: a busy cluster has thousands about pods.
      path: "/api/v1/events?fieldSelector=involvedObject.kind%3DNode",
      transform: (raw) => stripNodeEvent(options.cluster, raw),
      sink: this.eventSink(),
      onResourceVersionsWentBack: wentBack(() => this.eventReflector),
    });
    this.leaseReflector = new Reflector({
      ...common,
      resource: "node leases",
      path: "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
      transform: (raw) => {
        const renewTime = Date.parse(raw.spec?.renewTime ?? "");
        return Number.isNaN(renewTime) ? undefined : renewTime;
      },
      sink: this.leaseSink(),
      onResourceVersionsWentBack: wentBack(() => this.leaseReflector),
    });
  }

  /** Its two reflectors, to relist when the cluster turns out to be another. */
  reflectors(): Reflector<unknown>[] {
    return [this.eventReflector, this.leaseReflector];
  }

  start(): void {
    this.eventReflector.start();
    this.leaseReflector.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.eventReflector.stop(), this.leaseReflector.stop()]);
  }

  /** The node's events, newest first (by last seen). */
  eventsOf(node: string, first: number): CachedNodeEvent[] {
    const own = this.eventsByNode.get(node);
    if (!own || first === 0) return [];
    return [...own.values()].sort(compareNewestFirst).slice(0, first);
  }

  allEvents(): IterableIterator<CachedNodeEvent> {
    return this.events.values();
  }

  /** The node's Lease renewTime and its age; undefined without a Lease. */
  heartbeat(node: string): Heartbeat | undefined {
    const renewed = this.renewals.get(node);
    if (renewed === undefined) return undefined;
    return { time: new Date(renewed), ageSeconds: Math.max(0, this.clusterNow() - renewed) / 1000 };
  }

  /**
   * Now on the cluster's clock. A renewal reaches us moments after its renewTime, so the
   * median of (renewTime − arrival) over recent renewals is the skew between the kubelets'
   * clocks and ours: ages measured with it neither flag every node of a cluster whose clock
   * runs behind ours nor hide a silent node of one whose clock runs ahead.
   */
  clusterNow(): number {
    if (this.skews.length === 0) return Date.now();
    // Asked for every node of a page (age, staleHeartbeat): the median only changes with a renewal.
    if (this.skew === undefined) this.skew = [...this.skews].sort((a, b) => a - b)[this.skews.length >> 1]!;
    return Date.now() + this.skew;
  }

  private eventSink(): ReflectorSink<CachedNodeEvent | undefined> {
    const index = (key: string, event: CachedNodeEvent) => {
      this.unindex(key);
      this.events.set(key, event);
      let own = this.eventsByNode.get(event.node);
      if (!own) this.eventsByNode.set(event.node, (own = new Map()));
      own.set(key, event);
      if (own.size > MAX_EVENTS_PER_NODE) {
        let oldestKey = key;
        for (const [k, e] of own) if (compareNewestFirst(e, own.get(oldestKey)!) > 0) oldestKey = k;
        this.unindex(oldestKey);
      }
    };
    return {
      replace: (items) => {
        this.events.clear();
        this.eventsByNode.clear();
        for (const [key, event] of items) if (event) index(key, event);
        this.emit("eventsRelisted");
      },
      upsert: (key, event) => {
        if (!event) return this.unindex(key);
        index(key, event);
        this.emit("event", event);
      },
      remove: (key) => this.unindex(key),
    };
  }

  private unindex(key: string): void {
    const before = this.events.get(key);
    if (!before) return;
    this.events.delete(key);
    const own = this.eventsByNode.get(before.node);
    own?.delete(key);
    if (own?.size === 0) this.eventsByNode.delete(before.node);
  }

  private leaseSink(): ReflectorSink<number | undefined> {
    const nodeOf = (key: string) => key.slice(key.indexOf("/") + 1);
    return {
      replace: (items) => {
        this.renewals.clear();
        for (const [key, renewed] of items) if (renewed !== undefined) this.renewals.set(nodeOf(key), renewed);
      },
      upsert: (key, renewed) => {
        const node = nodeOf(key);
        if (renewed === undefined) return void this.renewals.delete(node);
        if (this.renewals.get(node) !== renewed) {
          this.skews.push(renewed - Date.now());
          if (this.skews.length > SKEW_SAMPLES) this.skews.shift();
          this.skew = undefined;
        }
        this.renewals.set(node, renewed);
      },
      remove: (key) => void this.renewals.delete(nodeOf(key)),
    };
  }
}
