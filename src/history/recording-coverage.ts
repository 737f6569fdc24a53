import type { Database } from "../db/database.js";
import { PeriodicTask } from "../lifecycle/periodic-task.js";
import type { Logger } from "../log/logger.js";
import { checkFence, LeadershipLostError } from "./history-store.js";

export interface RecordingCoverageOptions {
  database: Database;
  logger: Logger;
  /** How often an open stretch is extended to now: after a crash, at most this much is claimed too little, never too much. */
  intervalMs?: number;
  /** A node watch disconnected for less than this is reconnecting, as watches do: still watched. */
  reconnectGraceMs?: number;
  /** Asked for when a stretch may start again after a gap: the recorded state must be made to match the cluster first. */
  reconcile: (cluster: string) => void;
  /** The epoch the database granted this replica for `cluster`: each write carries it, and one of a lost term is refused. */
  fence: (cluster: string) => bigint | undefined;
  now?: () => Date;
}

/** What this replica knows of one cluster it records. */
interface ClusterCoverage {
  /** The open stretch's row, once written. */
  id?: bigint;
  /** When the open stretch began (a reconcile was written that matched the cluster as of then). */
  startedAt?: Date;
  disconnectedSince?: Date;
}

/**
 * Writes `recording_coverage`: the stretches of time this installation recorded a cluster.
 * A stretch opens when a reconcile has made the recorded state match the cluster, is extended
 * every interval while this replica holds the cluster's Lease and its node watch is connected
 * (or reconnecting within the grace), and is closed when the Lease is given up, the replica
 * stops, or the watch stays disconnected: then it ends when the disconnection began. Whatever
 * no stretch covers is unobserved in the availability report.
 */
export class RecordingCoverage {
  private readonly clusters = new Map<string, ClusterCoverage>();
  private readonly task: PeriodicTask;
  private readonly now: () => Date;
  private readonly graceMs: number;
  /** Writes go one at a time, in the order asked for. */
  private writes: Promise<void> = Promise.resolve();

  constructor(private readonly o: RecordingCoverageOptions) {
    this.now = o.now ?? (() => new Date());
    this.graceMs = o.reconnectGraceMs ?? 30_000;
    this.task = new PeriodicTask({
      run: () => this.extend(),
      delayMs: () => o.intervalMs ?? 10_000,
      onError: (error) => o.logger.warn({ err: (error as Error).message }, "recording coverage not extended; will try again"),
    });
  }

  start(): void {
    this.task.start();
  }

  /** This replica now records `cluster`; `connected` is its node watch's state. */
  lead(cluster: string, connected: boolean): void {
    this.clusters.set(cluster, connected ? {} : { disconnectedSince: this.now() });
  }

  /** A reconcile of `cluster` as of `at` is written: a stretch starts there unless one is open. */
  reconciled(cluster: string, at: Date): void {
    const state = this.clusters.get(cluster);
    if (state && !state.startedAt) state.startedAt = at;
  }

  /** The node watch of `cluster` connected or lost its connection. */
  connection(cluster: string, connected: boolean): void {
    const state = this.clusters.get(cluster);
    if (!state) return;
    if (!connected) state.disconnectedSince ??= this.now();
    else if (state.disconnectedSince) {
      delete state.disconnectedSince;
      // Closed by the disconnection: what happened meanwhile must be read before a stretch starts.
      if (!state.startedAt) this.o.reconcile(cluster);
    }
  }

  /**
   * This replica no longer records `cluster`: its stretch ends now. Called before the term's
   * epoch is forgotten, so the closing write carries it (and is refused if a successor holds one).
   */
  release(cluster: string): Promise<void> {
    const state = this.clusters.get(cluster);
    this.clusters.delete(cluster);
    if (!state?.startedAt) return Promise.resolve();
    const end = state.disconnectedSince ?? this.now();
    const epoch = this.o.fence(cluster);
    return this.serial(() => this.write(cluster, state, end, epoch));
  }

  /** Stops extending and closes every stretch now. */
  async stop(): Promise<void> {
    await this.task.stop();
    await Promise.all([...this.clusters.keys()].map((cluster) => this.release(cluster)));
    await this.writes;
  }

  /** One interval's work: each open stretch extended to now, or closed at its disconnection. */
  private extend(): Promise<void> {
    return this.serial(async () => {
      const now = this.now();
      for (const [cluster, state] of this.clusters) {
        if (!state.startedAt) continue;
        const since = state.disconnectedSince;
        if (since && now.getTime() - since.getTime() >= this.graceMs) {
          if (state.id !== undefined || since.getTime() > state.startedAt.getTime()) await this.write(cluster, state, since);
          delete state.id;
          delete state.startedAt;
          continue;
        }
        await this.write(cluster, state, now);
      }
    });
  }

  private serial(work: () => Promise<void>): Promise<void> {
    const next = this.writes.then(work);
    this.writes = next.catch((error) => this.o.logger.warn({ err: (error as Error).message }, "recording coverage not written; will try again"));
    return next;
  }

  /**
   * Writes the stretch [startedAt, end), its row made on the first write, fenced by this
   * replica's epoch: a replica that lost the cluster's leadership claims no more of it.
   */
  private async write(cluster: string, state: ClusterCoverage, end: Date, epoch = this.o.fence(cluster)): Promise<void> {
    const startedAt = state.startedAt!;
    const endedAt = end.getTime() < startedAt.getTime() ? startedAt : end;
    try {
      await this.o.database.prisma.$transaction(async (tx) => {
        await checkFence(tx, cluster, epoch);
        if (state.id === undefined) {
          const row = await tx.recordingCoverage.create({ data: { cluster, startedAt, endedAt }, select: { id: true } });
          state.id = row.id;
        } else {
          await tx.recordingCoverage.update({ where: { id: state.id }, data: { endedAt } });
        }
      });
    } catch (error) {
      if (!(error instanceof LeadershipLostError)) throw error;
      // Not ours any more: the stretch ends at its last write, and nothing more is claimed.
      this.clusters.delete(cluster);
    }
  }
}
