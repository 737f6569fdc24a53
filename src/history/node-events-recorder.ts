/**
 * Keeps the Events about nodes that Kubernetes deletes after an hour. It follows the history
 * Lease: only the replica recording a cluster's history writes its events, so replicas do not
 * race, and what a replica writes is idempotent anyway (one row per Event uid, moved only
 * forwards, node-events-store.ts), so a new leader simply writes every event it holds again.
 *
 * Events wait in a map keyed by cluster and uid, so an event whose count changes ten times
 * while the database is down is written once, in its latest version. The map is bounded; when
 * it overflows, or the database was unreachable, the cached events are written again once it
 * answers: the watch cache holds every event Kubernetes still has, so only events that were
 * both created and deleted while nothing could be written are lost.
 */
import type { EventEmitter } from "node:events";
import type { ClusterRegistry } from "../cluster/cluster-registry.js";
import type { CachedNodeEvent } from "../cluster/node-event.js";
import { PeriodicTask } from "../lifecycle/periodic-task.js";
import type { Logger } from "../log/logger.js";
import { rowOf, type NodeEventsStore } from "./node-events-store.js";
import { WriteLoop } from "./write-loop.js";

export interface NodeEventsRecorderOptions {
  clusters: ClusterRegistry;
  store: NodeEventsStore;
  logger: Logger;
  /** Whether this replica records `cluster`'s history (the history recorder's Lease). */
  leads(cluster: string): boolean;
  /** Says when this replica takes a cluster's Lease, so its events are written at once (else the next check finds out). */
  leadership?: Pick<EventEmitter<{ started: [string] }>, "on" | "off">;
  /** Events waiting to be written at most; beyond, the oldest go and a rewrite follows. */
  bufferSize?: number;
  batchSize?: number;
  /** How often leadership is looked at: a new leader writes what its cache holds. */
  leadershipCheckMs?: number;
}

export interface NodeEventsRecorderStatus {
  pending: number;
  dropped: number;
  recorded: number;
  databaseUp: boolean;
}

export class NodeEventsRecorder {
  private readonly options: Required<Omit<NodeEventsRecorderOptions, "leadership">> & Pick<NodeEventsRecorderOptions, "leadership">;
  private readonly pending = new Map<string, { event: CachedNodeEvent; seenAt: Date }>();
  private readonly leading = new Set<string>();
  private readonly unsubscribe: (() => void)[] = [];
  private readonly leadership: PeriodicTask;
  private readonly writes: WriteLoop;
  private rewriteAll = false;
  readonly status: NodeEventsRecorderStatus = { pending: 0, dropped: 0, recorded: 0, databaseUp: true };

  constructor(options: NodeEventsRecorderOptions) {
    this.options = { bufferSize: 50_000, batchSize: 500, leadershipCheckMs: 1_000, ...options };
    this.leadership = new PeriodicTask({ run: async () => this.checkLeadership(), delayMs: () => this.options.leadershipCheckMs, immediately: true });
    this.writes = new WriteLoop({
      status: this.status,
      logger: this.options.logger,
      pending: () => this.pending.size,
      write: async () => {
        const batch = [...this.pending].slice(0, this.options.batchSize);
        this.status.recorded += await this.options.store.upsert(batch.map(([, { event, seenAt }]) => rowOf(event, seenAt)));
        // Only what was written goes: a newer version that arrived meanwhile stays queued.
        for (const [key, entry] of batch) if (this.pending.get(key) === entry) this.pending.delete(key);
        this.status.pending = this.pending.size;
      },
      written: () => {
        if (this.rewriteAll) {
          this.rewriteAll = false;
          for (const cluster of this.leading) this.pushAll(cluster);
        }
      },
      failed: () => {
        this.rewriteAll = true;
      },
      messages: { up: "node events writable again", down: "node events write failed: keeping them and retrying" },
    });
  }

  start(): void {
    for (const cache of this.options.clusters.all()) {
      const onEvent = (event: CachedNodeEvent) => this.leading.has(event.cluster) && this.push(event);
      const onRelisted = () => this.leading.has(cache.name) && this.pushAll(cache.name);
      cache.facts.on("event", onEvent).on("eventsRelisted", onRelisted);
      this.unsubscribe.push(() => cache.facts.off("event", onEvent).off("eventsRelisted", onRelisted));
    }
    const onLeading = () => this.checkLeadership();
    this.options.leadership?.on("started", onLeading);
    this.unsubscribe.push(() => this.options.leadership?.off("started", onLeading));
    this.leadership.start();
    this.writes.start();
  }

  /** Stops taking events and writes what waits, for `flushTimeoutMs` at most. */
  async stop(flushTimeoutMs = 5_000): Promise<void> {
    for (const off of this.unsubscribe) off();
    await this.leadership.stop();
    const deadline = Date.now() + flushTimeoutMs;
    while (this.pending.size && this.status.databaseUp && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    await this.writes.stop();
    if (this.pending.size) this.options.logger.warn({ pending: this.pending.size }, "node events not written at shutdown; the next leader writes them from its cache");
  }

  private checkLeadership(): void {
    for (const cache of this.options.clusters.all()) {
      const leads = this.options.leads(cache.name);
      if (leads && !this.leading.has(cache.name)) {
        this.leading.add(cache.name);
        this.options.logger.debug({ cluster: cache.name }, "recording node events");
        this.pushAll(cache.name);
      } else if (!leads && this.leading.delete(cache.name)) {
        this.options.logger.debug({ cluster: cache.name }, "no longer recording node events");
      }
    }
  }

  private pushAll(cluster: string): void {
    for (const event of this.options.clusters.get(cluster)?.facts.allEvents() ?? []) this.push(event);
  }

  private push(event: CachedNodeEvent): void {
    const key = `${event.cluster}\u0000${event.id}`;
    // Re-inserted at the end: the map's order is the order of last change.
    this.pending.delete(key);
    if (this.pending.size >= this.options.bufferSize) {
      this.pending.delete(this.pending.keys().next().value!);
      this.status.dropped++;
      this.rewriteAll = true;
    }
    this.pending.set(key, { event, seenAt: new Date() });
    this.status.pending = this.pending.size;
    // While writes fail the retry's backoff stands: new events must not turn it into a busy loop.
    if (this.status.databaseUp) this.writes.wake();
  }
}
