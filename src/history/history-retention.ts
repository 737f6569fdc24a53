import type { Database } from "../db/database.js";
import { PeriodicTask } from "../lifecycle/periodic-task.js";
import type { Logger } from "../log/logger.js";

const DAY_MS = 86_400_000;

/**
 * Deletes history older than the retention period, at start and then hourly. Every replica
 * may run it: deleting what is already gone is harmless.
 */
export class HistoryRetention {
  private readonly task: PeriodicTask;

  constructor(
    private readonly database: Database,
    private readonly retentionDays: number,
    private readonly logger: Logger,
    intervalMs = 3_600_000,
  ) {
    this.task = new PeriodicTask({
      run: async () => {
        const deleted = await this.prune(new Date(Date.now() - this.retentionDays * DAY_MS));
        if (Object.values(deleted).some((n) => n > 0)) this.logger.info({ deleted, retentionDays: this.retentionDays }, "pruned old history");
      },
      delayMs: () => intervalMs,
      immediately: true,
      onError: (error) => this.logger.warn({ err: (error as Error).message }, "history prune failed; will try again"),
    });
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  /** Deletes every row older than `cutoff`; returns how many of each kind. */
  async prune(cutoff: Date): Promise<Record<string, number>> {
    const p = this.database.prisma;
    const [transitions, changes, maintenance, drains, nodes, nodeEvents, coverage] = await Promise.all([
      p.conditionTransition.deleteMany({ where: { at: { lt: cutoff } } }),
      p.nodeChange.deleteMany({ where: { at: { lt: cutoff } } }),
      p.maintenanceEvent.deleteMany({ where: { at: { lt: cutoff } } }),
      p.drainOperation.deleteMany({ where: { finishedAt: { lt: cutoff } } }),
      p.nodeState.deleteMany({ where: { deletedAt: { lt: cutoff } } }),
      p.nodeEvent.deleteMany({ where: { lastSeen: { lt: cutoff } } }),
      // A stretch that ended before the cutoff covers only history that is gone too.
      p.recordingCoverage.deleteMany({ where: { endedAt: { lt: cutoff } } }),
    ]);
    return {
      transitions: transitions.count,
      changes: changes.count,
      maintenance: maintenance.count,
      drains: drains.count,
      nodes: nodes.count,
      nodeEvents: nodeEvents.count,
      coverage: coverage.count,
    };
  }
}
