/**
 * Capacity trends in PostgreSQL (table node_usage_sample, see prisma/schema.prisma): writing
 * one sampling of a cluster, rolling old raw rows up into hourly rows, pruning, and the one
 * query behind `CapacityGroup.trends`.
 *
 * How a period is summarised, per group: the group's nodes are summed per sample time (every
 * node of a sampling shares its aligned `at`), giving one point per time; the peak is the
 * largest point, the p95 the nearest-rank 95th percentile of the points, each point weighted
 * by the seconds it stands for (a raw sampling its interval, an hourly rollup 3600), so a
 * period that spans raw rows and rollups is not dominated by the more numerous raw points.
 * On a rollup point the peak is the sum of the nodes' hourly maxima (never below the true
 * peak) and the p95 uses the sum of their hourly 95th percentiles.
 */

import type { Database } from "../db/database.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import type { Logger } from "../log/logger.js";

/** Seconds an hourly rollup row stands for. */
export const ROLLUP_SECONDS = 3600;

/** One node's figures at one sampling. */
export interface NodeSample {
  node: string;
  cpuUsage: number | null;
  memoryUsage: number | null;
  cpuRequests: number;
  memoryRequests: number;
}

/** Which group each node counts in: parallel arrays, as `unnest` zips them back together. */
export interface NodeGroups {
  clusters: string[];
  nodes: string[];
  groups: number[];
}

/** Peak and p95 of one metric over a period; null when no point had a value. */
export interface MetricTrend {
  peak: number | null;
  p95: number | null;
}

/** A group's trends: how many sample times fell in the period, and each metric. */
export interface GroupTrend {
  samples: number;
  cpuUsage: MetricTrend;
  memoryUsage: MetricTrend;
  cpuRequests: MetricTrend;
  memoryRequests: MetricTrend;
}

const METRICS = ["cpuUsage", "memoryUsage", "cpuRequests", "memoryRequests"] as const;

/** A group that had no sample in the period. */
export function emptyTrend(): GroupTrend {
  const none = () => ({ peak: null, p95: null });
  return { samples: 0, cpuUsage: none(), memoryUsage: none(), cpuRequests: none(), memoryRequests: none() };
}

export class TrendsStore {
  constructor(
    private readonly database: Database,
    private readonly logger?: Logger,
  ) {}

  /**
   * Writes one sampling of a cluster taken at `at` (already aligned). A sampling written twice
   * (a replay, two replicas in a leadership change) is kept once: rows are keyed by cluster,
   * time, node and interval. Returns how many rows were new.
   */
  async writeSampling(cluster: string, at: Date, seconds: number, samples: readonly NodeSample[]): Promise<number> {
    if (samples.length === 0) return 0;
    const column = <T>(pick: (s: NodeSample) => T) => samples.map(pick);
    return this.database.prisma.$executeRaw`
      INSERT INTO node_usage_sample (cluster, node, at, seconds, cpu_usage, memory_usage, cpu_requests, memory_requests)
      SELECT ${cluster}, s.node, ${at}, ${seconds}, s.cu, s.mu, s.cr, s.mr
      FROM unnest(${column((s) => s.node)}::text[], ${column((s) => s.cpuUsage)}::int[], ${column((s) => s.memoryUsage)}::float8[],
                  ${column((s) => s.cpuRequests)}::int[], ${column((s) => s.memoryRequests)}::float8[]) AS s(node, cu, mu, cr, mr)
      ON CONFLICT DO NOTHING`;
  }

  /**
   * Replaces a cluster's raw rows older than `before` (an hour boundary) by one row per node
   * and hour holding the hour's 95th percentile (nearest rank) and maximum of each figure.
   * One statement, so a concurrent reader sees either the raw rows or the rollup; a rollup
   * that already exists (late raw rows) keeps the larger of each figure. Returns the rollup
   * rows written.
   */
  async rollUp(cluster: string, before: Date): Promise<number> {
    return this.database.prisma.$executeRaw`
      WITH gone AS (
        DELETE FROM node_usage_sample
        WHERE cluster = ${cluster} AND seconds < ${ROLLUP_SECONDS} AND at < ${before}
        RETURNING node, at, cpu_usage, memory_usage, cpu_requests, memory_requests
      )
      INSERT INTO node_usage_sample (cluster, node, at, seconds,
        cpu_usage, memory_usage, cpu_requests, memory_requests,
        cpu_usage_peak, memory_usage_peak, cpu_requests_peak, memory_requests_peak)
      SELECT ${cluster}, node, date_bin('1 hour', at, TIMESTAMPTZ '2000-01-01T00:00:00Z') AS hour, ${ROLLUP_SECONDS},
        percentile_disc(0.95) WITHIN GROUP (ORDER BY cpu_usage),
        percentile_disc(0.95) WITHIN GROUP (ORDER BY memory_usage),
        percentile_disc(0.95) WITHIN GROUP (ORDER BY cpu_requests),
        percentile_disc(0.95) WITHIN GROUP (ORDER BY memory_requests),
        max(cpu_usage), max(memory_usage), max(cpu_requests), max(memory_requests)
      FROM gone
      GROUP BY node, hour
      ON CONFLICT (cluster, at, node, seconds) DO UPDATE SET
        cpu_usage = greatest(node_usage_sample.cpu_usage, EXCLUDED.cpu_usage),
        memory_usage = greatest(node_usage_sample.memory_usage, EXCLUDED.memory_usage),
        cpu_requests = greatest(node_usage_sample.cpu_requests, EXCLUDED.cpu_requests),
        memory_requests = greatest(node_usage_sample.memory_requests, EXCLUDED.memory_requests),
        cpu_usage_peak = greatest(node_usage_sample.cpu_usage_peak, EXCLUDED.cpu_usage_peak),
        memory_usage_peak = greatest(node_usage_sample.memory_usage_peak, EXCLUDED.memory_usage_peak),
        cpu_requests_peak = greatest(node_usage_sample.cpu_requests_peak, EXCLUDED.cpu_requests_peak),
        memory_requests_peak = greatest(node_usage_sample.memory_requests_peak, EXCLUDED.memory_requests_peak)`;
  }

  /** Deletes every row (raw or rollup, any cluster) older than `before`; returns how many. */
  async prune(before: Date): Promise<number> {
    // The key leads with cluster: find the clusters by skipping through the index (one probe
    // each), then delete each one's range, rather than scan the whole table for old rows.
    return this.database.prisma.$executeRaw`
      WITH RECURSIVE clusters(cluster) AS (
        SELECT min(cluster) FROM node_usage_sample
        UNION ALL
        SELECT (SELECT min(cluster) FROM node_usage_sample WHERE cluster > clusters.cluster) FROM clusters WHERE clusters.cluster IS NOT NULL
      )
      DELETE FROM node_usage_sample s USING clusters c WHERE s.cluster = c.cluster AND s.at < ${before}`;
  }

  /**
   * Peaks and p95 over [since, until) for each group of `nodeGroups` (keyed by group number)
   * and for all those nodes together (key null). Groups without samples are absent.
   * @throws AppError UNAVAILABLE when the database fails.
   */
  async groupTrends(nodeGroups: NodeGroups, since: Date, until: Date): Promise<Map<number | null, GroupTrend>> {
    const result = new Map<number | null, GroupTrend>();
    if (nodeGroups.nodes.length === 0) return result;
    const clusters = [...new Set(nodeGroups.clusters)];
    let rows: { g: number | null; metric: number; points: number; peak: number | null; p95: number | null }[];
    try {
      rows = await this.database.prisma.$queryRaw`
        WITH m AS (
          SELECT * FROM unnest(${nodeGroups.clusters}::text[], ${nodeGroups.nodes}::text[], ${nodeGroups.groups}::int[]) AS m(cluster, node, g)
        ),
        series AS (
          SELECT m.g, s.at, s.seconds,
            sum(s.cpu_usage)::float8 AS cu, sum(coalesce(s.cpu_usage_peak, s.cpu_usage))::float8 AS cup,
            sum(s.memory_usage) AS mu, sum(coalesce(s.memory_usage_peak, s.memory_usage)) AS mup,
            sum(s.cpu_requests)::float8 AS cr, sum(coalesce(s.cpu_requests_peak, s.cpu_requests))::float8 AS crp,
            sum(s.memory_requests) AS mr, sum(coalesce(s.memory_requests_peak, s.memory_requests)) AS mrp
          FROM node_usage_sample s JOIN m ON m.cluster = s.cluster AND m.node = s.node
          WHERE s.cluster = ANY(${clusters}::text[]) AND s.at >= ${since} AND s.at < ${until}
          GROUP BY GROUPING SETS ((m.g, s.at, s.seconds), (s.at, s.seconds))
        ),
        points AS (
          SELECT g, seconds, x.metric, x.v, x.peak
          FROM series CROSS JOIN LATERAL (VALUES (0, cu, cup), (1, mu, mup), (2, cr, crp), (3, mr, mrp)) AS x(metric, v, peak)
          WHERE x.v IS NOT NULL
        ),
        ranked AS (
          SELECT g, metric, v, peak,
            sum(seconds) OVER (PARTITION BY g, metric ORDER BY v ROWS UNBOUNDED PRECEDING) AS cum,
            sum(seconds) OVER (PARTITION BY g, metric) AS total
          FROM points
        )
        SELECT g, metric, count(*)::int AS points, max(peak) AS peak,
          min(v) FILTER (WHERE cum * 20 >= total * 19) AS p95
        FROM ranked
        GROUP BY g, metric`;
    } catch (error) {
      this.logger?.warn({ err: error }, "trends query failed");
      throw new AppError(ErrorCode.UNAVAILABLE, "the trends database cannot be reached");
    }
    for (const row of rows) {
      let trend = result.get(row.g);
      if (!trend) result.set(row.g, (trend = emptyTrend()));
      trend[METRICS[row.metric]!] = { peak: row.peak, p95: row.p95 };
      // Requests are never null: their point count is the number of sample times.
      if (row.metric === 2) trend.samples = row.points;
    }
    return result;
  }

  /**
   * Nodes of `clusters` recorded as deleted at or after `since`, with the labels and state they
   * last had: the nodes a period's trends may have samples of that the caches no longer know.
   * @throws AppError UNAVAILABLE when the database fails.
   */
  async departedNodes(clusters: string[], since: Date): Promise<DepartedNode[]> {
    try {
      const rows = await this.database.prisma.nodeState.findMany({
        where: { cluster: { in: clusters }, deletedAt: { gte: since } },
        select: { cluster: true, name: true, labels: true, conditions: true, unschedulable: true },
      });
      return rows.map((row) => ({
        cluster: row.cluster,
        name: row.name,
        labels: row.labels as Record<string, string>,
        conditions: row.conditions as Record<string, string>,
        unschedulable: row.unschedulable,
      }));
    } catch (error) {
      this.logger?.warn({ err: error }, "trends query failed");
      throw new AppError(ErrorCode.UNAVAILABLE, "the trends database cannot be reached");
    }
  }
}

/** A deleted node as history last recorded it. */
export interface DepartedNode {
  cluster: string;
  name: string;
  labels: Record<string, string>;
  /** Condition type -> "True" | "False" | "Unknown". */
  conditions: Record<string, string>;
  unschedulable: boolean;
}
