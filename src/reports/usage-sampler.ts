import type { ClusterRegistry } from "../cluster/cluster-registry.js";
import type { InventoryService } from "../inventory/inventory-service.js";
import { PeriodicTask } from "../lifecycle/periodic-task.js";
import type { Logger } from "../log/logger.js";
import { groupValue, type ReportGrouping } from "./grouping.js";
import type { NodeSample, TrendsStore } from "./trends-store.js";

const CELL: readonly ReportGrouping[] = [{ by: "NODE_POOL" }, { by: "ZONE" }, { by: "INSTANCE_TYPE" }, { by: "ROLE" }];

const HOUR_MS = 3_600_000;

export interface UsageSamplerOptions {
  clusters: ClusterRegistry;
  inventory: InventoryService;
  store: TrendsStore;
  logger: Logger;
  /** Whether this replica samples `cluster`: the one recording its history (holding its lease). */
  leads(cluster: string): boolean;
  /** Seconds between samplings; 0: no sampling (housekeeping still runs hourly). */
  intervalSeconds: number;
  /** Label keys cells are also split by, so reports grouped by them read cell rows. */
  labelKeys: readonly string[];
  /** Raw rows older than this are deleted (once their hour is rolled up). */
  rawRetentionHours: number;
  /** Rows (rollups included) older than this are deleted. */
  retentionDays: number;
}

/**
 * Writes capacity trends: at every multiple of the interval since the epoch (so every node and
 * every cluster shares the sample time, and group sums line up), one row per node with its
 * usage and requests as the cache has them, and one per cell (see TrendsStore), for each cluster
 * this replica leads and has synced. Once per hour it rolls completed hours up, deletes raw rows
 * past the raw retention and rows of either kind past the history retention. A sampling the
 * database refuses is logged and skipped, not retried: trends are statistics, and the next
 * sampling comes within the interval.
 */
export class UsageSampler {
  private readonly task: PeriodicTask;
  /** The hour housekeeping last ran in; it runs again once the hour changes. */
  private housekeptHour = -1;
  private failing = false;

  /** Sorted, so one set of keys always makes the same cell ids. */
  private readonly labelKeys: readonly string[];

  constructor(private readonly options: UsageSamplerOptions) {
    this.labelKeys = [...new Set(options.labelKeys)].sort();
    // On the interval's boundaries (samplings of every replica line up); each stamped with its boundary.
    this.task = new PeriodicTask({ run: (at) => this.tick(at), delayMs: () => this.periodMs - (Date.now() % this.periodMs) });
  }

  /** The timer's period: the interval, or an hour (for housekeeping alone) when sampling is off. */
  private get periodMs(): number {
    return this.options.intervalSeconds > 0 ? this.options.intervalSeconds * 1000 : HOUR_MS;
  }

  start(): void {
    this.task.start();
  }

  /** Stops the timer and waits for a sampling in progress. */
  stop(): Promise<void> {
    return this.task.stop();
  }

  /**
   * Takes one sampling stamped with `at` rounded down to the interval, for every cluster this
   * replica leads and has synced. Returns the rows written. Tests call it with the time they want.
   */
  async sampleAt(at: Date): Promise<number> {
    if (this.options.intervalSeconds <= 0) return 0;
    const aligned = new Date(Math.floor(at.getTime() / this.periodMs) * this.periodMs);
    let written = 0;
    for (const cache of this.options.clusters.all()) {
      if (!this.options.leads(cache.name) || !cache.status().synced) continue;
      const samples: NodeSample[] = [];
      for (const node of cache.allNodes()) {
        const totals = this.options.inventory.podTotals(node);
        const usage = cache.usage(node.name);
        const cell = CELL.map((grouping) => groupValue(grouping, cache.name, node.labels));
        samples.push({
          node: node.name,
          cell: [cell[0]!, cell[1]!, cell[2]!, cell[3]!],
          labels: Object.fromEntries(this.labelKeys.map((key) => [key, node.labels[key] ?? null])),
          cpuUsage: usage ? usage.cpuMillicores : null,
          memoryUsage: usage ? usage.memoryBytes : null,
          cpuRequests: totals.requests.cpu ?? 0,
          memoryRequests: totals.requests.memory ?? 0,
        });
      }
      written += await this.options.store.writeSampling(cache.name, aligned, samples);
    }
    return written;
  }

  /**
   * For each cluster this replica leads: rolls up every completed hour not rolled up yet, and
   * deletes its raw rows past the raw retention. Then deletes rows of any cluster past the
   * retention. Returns how many rows it wrote and deleted.
   */
  async housekeep(now: Date): Promise<{ rolledUp: number; deleted: number }> {
    const hour = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);
    const rawCutoff = new Date(now.getTime() - this.options.rawRetentionHours * HOUR_MS);
    let rolledUp = 0;
    let deleted = 0;
    for (const cache of this.options.clusters.all()) {
      if (!this.options.leads(cache.name)) continue;
      rolledUp += await this.options.store.rollUp(cache.name, hour);
      deleted += await this.options.store.dropRawRows(cache.name, rawCutoff);
    }
    deleted += await this.options.store.prune(new Date(now.getTime() - this.options.retentionDays * 24 * HOUR_MS));
    return { rolledUp, deleted };
  }

  private async tick(at: Date): Promise<void> {
    try {
      const rows = await this.sampleAt(at);
      this.options.logger.debug({ rows, at }, "trends sampled");
      const hour = Math.floor(Date.now() / HOUR_MS);
      if (hour !== this.housekeptHour) {
        const done = await this.housekeep(new Date());
        this.housekeptHour = hour;
        if (done.rolledUp || done.deleted) this.options.logger.info(done, "trends rolled up and pruned");
      }
      if (this.failing) this.options.logger.info("trends sampling writes again");
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.options.logger.warn({ err: (error as Error).message }, "trends sampling failed; the next interval tries again");
      this.failing = true;
    }
  }
}
