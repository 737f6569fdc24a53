import { EventEmitter } from "node:events";
import type { ClusterCache, NodeChange } from "../cluster/cluster-cache.js";
import type { ClusterRegistry } from "../cluster/cluster-registry.js";
import { LeaseElector } from "../cluster/lease-elector.js";
import type { Logger } from "../log/logger.js";
import { projection } from "./history-diff.js";
import type { HistoryNotice, PubSub } from "../pubsub/pubsub.js";
import { isContentRefusal, isDiskFull } from "../db/database-errors.js";
import { LeadershipLostError, type HistoryStore, type NodeObservation } from "./history-store.js";
import { WriteLoop } from "./write-loop.js";
import { RecordingCoverage } from "./recording-coverage.js";
import type { Database } from "../db/database.js";

export interface HistoryRecorderOptions {
  clusters: ClusterRegistry;
  store: HistoryStore;
  logger: Logger;
  /** Observations kept while the database cannot be written; beyond it the oldest are dropped. */
  bufferSize?: number;
  /** Observations written per transaction. */
  batchSize?: number;
  lease: { namespace: string; name: string; durationMs: number; retryPeriodMs: number; identity?: string };
  /** How long writes may fail without a break before the recorder counts as stalled (readiness fails). */
  stallAfterMs?: number;
  /** Tells subscribers (on every replica) what was just written. */
  pubsub?: PubSub;
  /** Where the stretches of time this replica recorded each cluster are written (recording-coverage.ts). */
  coverage: { database: Database; intervalMs?: number; reconnectGraceMs?: number };
}

export interface RecorderStatus {
  /** Observations waiting to be written. */
  pending: number;
  /** Observations dropped because the buffer was full (a reconcile covers for them). */
  dropped: number;
  /** The last write succeeded. */
  databaseUp: boolean;
  /** Clusters this replica records (holds the lease of). */
  leaderOf: string[];
  recorded: { transitions: number; changes: number; maintenance: number };
  /** Times the database refused a write because another replica had taken the cluster's leadership over (its queue was dropped). */
  fenced: number;
  /** Observations skipped because the database refused their content (each logged with the node and the database's words). */
  refused: number;
  /** The last write failed because the database's disk is full (cleared by the next write that succeeds). */
  diskFull: boolean;
  /** Since when writes have failed without a break while observations wait: the recorder is not making progress. */
  stalledSince?: Date;
  lastError?: string;
}

/** One cluster's history Lease as this replica last read it. */
export interface LeaseView {
  cluster: string;
  /** `namespace/name`. */
  lease: string;
  /** Its holderIdentity; null while nobody holds it (or before the first read). */
  holder: string | null;
  /** This replica holds it. */
  held: boolean;
}

type Job = { kind: "observe"; observation: NodeObservation } | { kind: "reconcile"; cluster: string } | { kind: "claim"; cluster: string };

/**
 * Turns what the watch caches see into history. Per cluster, only the replica holding the
 * cluster's Lease records; the others stand by. Observations go through a bounded in-memory
 * queue to the database in batches; a failed write is retried with backoff and nothing is lost
 * while the buffer holds. After a relist, on taking the lease, and after the buffer overflowed,
 * a reconcile compares the whole cluster with the recorded state and fills any gap.
 */
export class HistoryRecorder {
  private readonly o: Required<Omit<HistoryRecorderOptions, "lease" | "pubsub" | "coverage">> & Pick<HistoryRecorderOptions, "lease" | "pubsub">;
  private readonly coverage: RecordingCoverage;
  private readonly queue: Job[] = [];
  private readonly electors = new Map<string, LeaseElector>();
  private readonly leading = new Set<string>();
  /** The epoch the database granted this replica for each cluster it leads: every write carries it. */
  private readonly epochs = new Map<string, bigint>();
  private readonly unsubscribe: (() => void)[] = [];
  private readonly writes: WriteLoop;
  private needsReconcile = false;
  /** "started" with a cluster's name when this replica takes its Lease (node events follow it). */
  readonly leadership = new EventEmitter<{ started: [string] }>();
  readonly status: RecorderStatus = { pending: 0, dropped: 0, databaseUp: true, leaderOf: [], recorded: { transitions: 0, changes: 0, maintenance: 0 }, refused: 0, fenced: 0, diskFull: false };

  constructor(options: HistoryRecorderOptions) {
    const { coverage, ...rest } = options;
    this.o = { bufferSize: 100_000, batchSize: 500, stallAfterMs: 60_000, ...rest };
    this.coverage = new RecordingCoverage({
      ...coverage,
      logger: options.logger,
      reconcile: (cluster) => this.leading.has(cluster) && this.push({ kind: "reconcile", cluster }),
      fence: (cluster) => this.fence(cluster),
    });
    this.writes = new WriteLoop({
      status: this.status,
      logger: this.o.logger,
      pending: () => this.queue.length,
      write: async () => {
        try {
          if (this.queue[0]?.kind === "claim") return await this.claim(this.queue[0].cluster);
          // A reconcile reads the database too: inside the write, so an outage is retried, not fatal.
          const [batch, count, reconciled] = await this.nextBatch();
          if (batch.length) await this.write(batch);
          if (reconciled && this.leading.has(reconciled.cluster)) this.coverage.reconciled(reconciled.cluster, reconciled.at);
          this.queue.splice(0, count);
        } catch (error) {
          if (!(error instanceof LeadershipLostError)) throw error;
          this.status.fenced++;
          this.o.logger.warn({ cluster: error.cluster, holder: error.holder }, "history leadership taken over by another replica: dropping this replica's queue and standing by");
          this.electors.get(error.cluster)?.stepDown();
          this.forget(error.cluster);
        } finally {
          this.status.pending = this.queue.length;
        }
      },
      written: () => {
        this.status.diskFull = false;
        delete this.status.lastError;
        delete this.status.stalledSince;
        if (this.needsReconcile) {
          this.needsReconcile = false;
          for (const cluster of this.leading) this.push({ kind: "reconcile", cluster });
        }
      },
      failed: (error) => {
        this.status.diskFull = isDiskFull(error);
        this.status.lastError = (error as Error).message;
        this.status.stalledSince ??= new Date();
      },
      messages: { up: "history database writable again", down: "history write failed: buffering and retrying" },
    });
  }

  start(): void {
    for (const cache of this.o.clusters.all()) {
      const onNode = (change: NodeChange) => this.onNodeChange(change);
      const onRelisted = () => this.leading.has(cache.name) && this.push({ kind: "reconcile", cluster: cache.name });
      const onStatus = (status: { connected: boolean }) => this.coverage.connection(cache.name, status.connected);
      cache.on("node", onNode).on("relisted", onRelisted).on("status", onStatus);
      this.unsubscribe.push(() => cache.off("node", onNode).off("relisted", onRelisted).off("status", onStatus));
      const elector = new LeaseElector({
        client: cache.client,
        logger: this.o.logger.child({ cluster: cache.name }),
        namespace: this.o.lease.namespace,
        name: this.o.lease.name,
        leaseDurationMs: this.o.lease.durationMs,
        retryPeriodMs: this.o.lease.retryPeriodMs,
        ...(this.o.lease.identity ? { identity: `${this.o.lease.identity}` } : {}),
        onStartedLeading: () => {
          this.leading.add(cache.name);
          this.coverage.lead(cache.name, cache.status().connected);
          this.status.leaderOf = [...this.leading];
          // The epoch comes first: nothing of this term is written before the database grants it.
          this.push({ kind: "claim", cluster: cache.name });
          this.push({ kind: "reconcile", cluster: cache.name });
          this.leadership.emit("started", cache.name);
        },
        onStoppedLeading: () => {
          void this.coverage.release(cache.name).catch(() => {});
          this.forget(cache.name);
        },
      });
      this.electors.set(cache.name, elector);
      elector.start();
    }
    this.writes.start();
    this.coverage.start();
  }

  /** Each cluster's Lease: who holds it, so a replica standing by says whom it waits on. */
  leases(): LeaseView[] {
    return [...this.electors].map(([cluster, elector]) => ({ cluster, lease: elector.lease, holder: elector.holder ?? null, held: elector.isLeader }));
  }

  /** Since when the recorder has made no progress, once that has lasted `stallAfterMs`; undefined while it is progressing. */
  stalled(now = Date.now()): Date | undefined {
    const since = this.status.stalledSince;
    return since && now - since.getTime() >= this.o.stallAfterMs ? since : undefined;
  }

  /** When the oldest observation still waiting to be written was made (history's lag), if one waits. */
  oldestPendingAt(): Date | undefined {
    for (const job of this.queue) if (job.kind === "observe") return job.observation.at;
    return undefined;
  }

  /** Whether this replica holds `cluster`'s lease: work done once per cluster (trend sampling) follows it. */
  leads(cluster: string): boolean {
    return this.leading.has(cluster);
  }

  /** Stops recording: gives up the leases, then writes what is queued (for a few seconds at most). */
  async stop(flushTimeoutMs = 5_000): Promise<void> {
    for (const off of this.unsubscribe) off();
    await Promise.all([...this.electors.values()].map((elector) => elector.stop()));
    await this.coverage.stop().catch(() => {});
    const deadline = setTimeout(() => {
      void this.writes.stop();
    }, flushTimeoutMs);
    this.push(undefined);
    await this.drained();
    await this.writes.stop();
    clearTimeout(deadline);
    if (this.queue.length) this.o.logger.warn({ pending: this.queue.length }, "history not written at shutdown; the next start reconciles it");
  }

  /** Takes the database's epoch for `cluster` (the claim job at the head of the queue). */
  private async claim(cluster: string): Promise<void> {
    if (this.leading.has(cluster)) {
      const elector = this.electors.get(cluster);
      this.epochs.set(cluster, await this.o.store.claimLeadership(cluster, elector?.identity ?? "unknown"));
    }
    this.queue.shift();
  }

  /** No longer leading `cluster`: what waits for it is not ours to write (its next leader reconciles). */
  private forget(cluster: string): void {
    this.leading.delete(cluster);
    this.epochs.delete(cluster);
    this.status.leaderOf = [...this.leading];
    let kept = 0;
    for (const job of this.queue) {
      if ((job.kind === "observe" ? job.observation.cluster : job.cluster) !== cluster) this.queue[kept++] = job;
    }
    this.queue.length = kept;
    this.status.pending = kept;
  }

  private onNodeChange(change: NodeChange): void {
    if (!this.leading.has(change.cluster)) return;
    // Relisted changes are covered by the reconcile that every relist triggers.
    if (change.relisted) return;
    const { before, after } = change;
    if (before && after && projection(before) === projection(after)) return;
    this.push({
      kind: "observe",
      observation: {
        cluster: change.cluster,
        name: change.name,
        node: after,
        at: change.observedAt,
        key: after?.resourceVersion ?? `deleted:${before?.resourceVersion}`,
        reconciled: false,
      },
    });
  }

  private push(job: Job | undefined): void {
    if (job) {
      // The oldest observation goes (a reconcile covers for it); a claim or a reconcile never does.
      const index = this.queue.length >= this.o.bufferSize ? this.queue.findIndex((j) => j.kind === "observe") : -1;
      if (index >= 0) {
        this.queue.splice(index, 1);
        this.status.dropped++;
        this.needsReconcile = true;
      }
      this.queue.push(job);
      this.status.pending = this.queue.length;
    }
    this.writes.wake();
  }

  private async drained(): Promise<void> {
    while (this.queue.length && !this.writes.stopped) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  /**
   * Writes a batch. When the database refuses it for its content (a value it cannot store),
   * each observation is written on its own, and one refused alone is written again row by row
   * leaving out the rows refused (logged and counted): a bad value never holds up the
   * observations behind it, nor the rest of its own. A lost connection or any other failure
   * throws, and the whole batch is retried (replaying rows already written is a no-op).
   */
  private async write(batch: NodeObservation[]): Promise<void> {
    try {
      return await this.count(await this.o.store.apply(batch, { fence: this.fence }));
    } catch (error) {
      if (!isContentRefusal(error)) throw error;
    }
    for (const observation of batch) {
      let written;
      try {
        written = await this.o.store.apply([observation], { fence: this.fence });
      } catch (error) {
        if (!isContentRefusal(error)) throw error;
        written = await this.o.store.apply([observation], { salvage: true, fence: this.fence });
      }
      for (const { table, error } of written.refused) {
        this.status.refused++;
        this.o.logger.error(
          { err: error, table, cluster: observation.cluster, node: observation.name, key: observation.key, refused: this.status.refused },
          "history: the database refused a row for its content; left out, recording carries on",
        );
      }
      await this.count(written);
    }
  }

  private readonly fence = (cluster: string) => this.epochs.get(cluster);

  private count(written: Awaited<ReturnType<HistoryStore["apply"]>>): Promise<void> {
    this.status.recorded.transitions += written.transitions;
    this.status.recorded.changes += written.changes;
    this.status.recorded.maintenance += written.maintenance;
    return this.announce(written.notices);
  }

  /** Publishing is best effort: the rows are committed either way, and queries will show them. */
  private async announce(notices: HistoryNotice[]): Promise<void> {
    if (!this.o.pubsub) return;
    for (const notice of notices) {
      try {
        await this.o.pubsub.publish(notice);
      } catch (error) {
        this.o.logger.warn({ err: (error as Error).message }, "could not publish a history notice");
      }
    }
  }

  /**
   * The next jobs to write as one batch, and how many queue entries they account for: up to
   * batchSize observations, or one reconcile expanded into observations of the whole cluster.
   */
  private async nextBatch(): Promise<[NodeObservation[], number, { cluster: string; at: Date }?]> {
    const first = this.queue[0]!;
    if (first.kind === "reconcile") {
      const [observations, at] = await this.reconcileObservations(first.cluster);
      return [observations, 1, at ? { cluster: first.cluster, at } : undefined];
    }
    const batch: NodeObservation[] = [];
    for (const job of this.queue) {
      if (job.kind !== "observe" || batch.length >= this.o.batchSize) break;
      batch.push(job.observation);
    }
    return [batch, batch.length];
  }

  /** Every node of the cluster as it is now, and every recorded node it no longer has; and when "now" was (none: no reconcile). */
  private async reconcileObservations(clusterName: string): Promise<[NodeObservation[], Date?]> {
    const cache: ClusterCache | undefined = this.o.clusters.get(clusterName);
    if (!cache || !this.leading.has(clusterName)) return [[]];
    // Leadership can come before the first list: wait for the nodes rather than lose this
    // reconcile. It also waits (up to a minute) for the pods' first list, the bulk of a sync, so
    // that writing every node does not share the CPU with it and hold back readiness.
    for (let waited = 0; !cache.initialLoadSettled(); waited += 100) {
      if (this.writes.stopped) return [[]];
      if (waited >= 60_000) {
        if (cache.nodesSynced()) break;
        return [[]];
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const at = new Date();
    const key = `reconcile:${at.toISOString()}`;
    const observations: NodeObservation[] = [];
    const seen = new Set<string>();
    for (const node of cache.allNodes()) {
      seen.add(node.name);
      observations.push({ cluster: clusterName, name: node.name, node, at, key, reconciled: true });
    }
    for (const name of await this.o.store.presentNodes(clusterName)) {
      if (!seen.has(name)) observations.push({ cluster: clusterName, name, node: undefined, at, key, reconciled: true });
    }
    return [observations, at];
  }
}
