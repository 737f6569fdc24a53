/**
 * Capacity trends in PostgreSQL (see prisma/schema.prisma): per sampling, one row per node
 * (node_usage_sample) and one per cell (cell_usage_sample: the nodes sharing pool, zone,
 * instance type and role, summed); completed hours rolled up into node_usage_hourly and
 * cell_usage_hourly; raw rows dropped after the raw retention, everything after the retention.
 *
 * How a period is summarised, per group: the group's rows are summed per sample time (every row
 * of a sampling shares its aligned `at`), giving one point per time; the peak is the largest
 * point, the p95 the nearest-rank 95th percentile of the points. A short, recent period is read
 * sampling by sampling; a longer one hour by hour, each hour's point summing the hourly 95th
 * percentiles of its rows (for the p95) and their hourly maxima (for the peak, which so is never
 * below the true one). Hours not rolled up yet (the current one) are summarised from their raw
 * rows the same way at query time, so an answer does not depend on when housekeeping last ran.
 *
 * A report grouped only by cluster, pool, zone, instance type, role or a label key configured
 * for trends, and not filtered, reads the cell rows: tens per sampling rather than thousands. Any
 * other report reads the node rows, each node counted in the group the caller assigns it.
 */

import type { Database } from "../db/database.js";
import { Prisma } from "../db/generated/client.js";
import { callerDatabaseError } from "../db/database-errors.js";

const TRENDS_UNAVAILABLE = "the trends database cannot be reached";
import type { Logger } from "../log/logger.js";
import type { ReportDimension, ReportGrouping } from "./grouping.js";

/** One node's figures at one sampling, and the values of its cell. */
export interface NodeSample {
  node: string;
  /** Node pool, zone, instance type and role, as the reports' grouping reads them. */
  cell: readonly [string | null, string | null, string | null, string | null];
  /** The value of each label key configured for trends (null: the node lacks it), keys in a fixed order. */
  labels: Readonly<Record<string, string | null>>;
  cpuUsage: number | null;
  memoryUsage: number | null;
  cpuRequests: number;
  memoryRequests: number;
}

/** The dimensions a cell row carries, and their columns. */
export const CELL_COLUMNS: Partial<Record<ReportDimension, string>> = {
  CLUSTER: "cluster",
  NODE_POOL: "pool",
  ZONE: "zone",
  INSTANCE_TYPE: "instance_type",
  ROLE: "role",
};

/**
 * Which rows a trends query reads: node rows, each node in the group named by `ids` (a group
 * id of the report), or cell rows grouped by `groupings` (dimensions of {@link CELL_COLUMNS}, or
 * LABEL with a key the cells carry).
 */
export type TrendsSource =
  | { kind: "nodes"; clusters: string[]; nodes: string[]; ids: string[] }
  | { kind: "cells"; clusters: string[]; groupings: ReportGrouping[] };

/** Peak and p95 of one figure over a period; null when no point had a value. */
export interface MetricTrend {
  peak: number | null;
  p95: number | null;
}

/** A group's trends: how many sample times fell in the period, and each figure. */
export interface GroupTrend {
  samples: number;
  cpuUsage: MetricTrend;
  memoryUsage: MetricTrend;
  cpuRequests: MetricTrend;
  memoryRequests: MetricTrend;
  /** The requests summed over the group at each point of the period (each hour's p95 at hourly resolution), oldest first. */
  requestSeries: readonly { at: number; cpu: number | null; memory: number | null }[];
}

/** Sampling by sampling, or hour by hour. */
export type TrendResolution = "raw" | "hourly";

/** A group that had no sample in the period. */
export function emptyTrend(): GroupTrend {
  const none = () => ({ peak: null, p95: null });
  return { samples: 0, cpuUsage: none(), memoryUsage: none(), cpuRequests: none(), memoryRequests: none(), requestSeries: [] };
}

/** The tables of one kind of row and the columns that identify a row within a cluster and time. */
interface RowKind {
  raw: string;
  hourly: string;
  key: string[];
}
const NODES: RowKind = { raw: "node_usage_sample", hourly: "node_usage_hourly", key: ["node"] };
const CELLS: RowKind = { raw: "cell_usage_sample", hourly: "cell_usage_hourly", key: ["cell", "pool", "zone", "instance_type", "role", "labels"] };

const columns = (alias: string, names: readonly string[]) => Prisma.raw(names.map((name) => `${alias}.${name}`).join(", "));

/** Hours are binned from the epoch, like the samplings: the same hours on every replica, whatever its time zone. */
const HOUR_BIN = Prisma.sql`date_bin('1 hour', r.at, TIMESTAMPTZ '1970-01-01T00:00:00Z')`;

/** An hour of raw rows `r` of one node or cell summarised: each figure's p95 (nearest rank) and maximum. */
const HOURLY_FIGURES = Prisma.sql`
  percentile_disc(0.95) WITHIN GROUP (ORDER BY r.cpu_usage), max(r.cpu_usage),
  percentile_disc(0.95) WITHIN GROUP (ORDER BY r.memory_usage), max(r.memory_usage),
  percentile_disc(0.95) WITHIN GROUP (ORDER BY r.cpu_requests), max(r.cpu_requests),
  percentile_disc(0.95) WITHIN GROUP (ORDER BY r.memory_requests), max(r.memory_requests)`;

/** Each figure summed over a point's rows; floats, as sums of millicores may pass 2^31. */
const SUMS = Prisma.sql`sum(p.cu)::float8 AS cu, sum(p.cup)::float8 AS cup, sum(p.mu)::float8 AS mu, sum(p.mup)::float8 AS mup,
  sum(p.cr)::float8 AS cr, sum(p.crp)::float8 AS crp, sum(p.mr)::float8 AS mr, sum(p.mrp)::float8 AS mrp`;

/** A cell row's value for a grouping: its column, or for a label the value the cell's labels hold. */
function cellValue(grouping: ReportGrouping): Prisma.Sql {
  return grouping.by === "LABEL" ? Prisma.sql`p.labels ->> ${grouping.labelKey!}::text` : Prisma.raw(`p.${CELL_COLUMNS[grouping.by]}`);
}

const HOURLY_COLUMNS = "cpu_usage, cpu_usage_peak, memory_usage, memory_usage_peak, cpu_requests, cpu_requests_peak, memory_requests, memory_requests_peak";

export class TrendsStore {
  constructor(
    private readonly database: Database,
    private readonly logger?: Logger,
  ) {}

  /**
   * Writes one sampling of a cluster taken at `at` (already aligned): a row per node and a row
   * per cell. A sampling written twice (a replay, two replicas in a leadership change) is kept
   * once: rows are keyed by cluster, time and node or cell. Returns how many node rows were new.
   */
  async writeSampling(cluster: string, at: Date, samples: readonly NodeSample[]): Promise<number> {
    if (samples.length === 0) return 0;
    const cells = new Map<string, { values: NodeSample["cell"]; labels: string; nodes: number; cu: number | null; mu: number | null; cr: number; mr: number }>();
    for (const s of samples) {
      const labels = JSON.stringify(s.labels);
      const key = JSON.stringify([...s.cell, s.labels]);
      let cell = cells.get(key);
      if (!cell) cells.set(key, (cell = { values: s.cell, labels, nodes: 0, cu: null, mu: null, cr: 0, mr: 0 }));
      cell.nodes++;
      if (s.cpuUsage !== null) cell.cu = (cell.cu ?? 0) + s.cpuUsage;
      if (s.memoryUsage !== null) cell.mu = (cell.mu ?? 0) + s.memoryUsage;
      cell.cr += s.cpuRequests;
      cell.mr += s.memoryRequests;
    }
    const node = <T>(pick: (s: NodeSample) => T) => samples.map(pick);
    const list = [...cells];
    const cell = <T>(pick: (c: (typeof list)[number][1]) => T) => list.map(([, c]) => pick(c));
    const [written] = await this.database.prisma.$transaction([
      this.database.prisma.$executeRaw`
        INSERT INTO node_usage_sample (cluster, node, at, cpu_usage, memory_usage, cpu_requests, memory_requests)
        SELECT ${cluster}, s.node, ${at}, s.cu, s.mu, s.cr, s.mr
        FROM unnest(${node((s) => s.node)}::text[], ${node((s) => s.cpuUsage)}::int[], ${node((s) => s.memoryUsage)}::float8[],
                    ${node((s) => s.cpuRequests)}::int[], ${node((s) => s.memoryRequests)}::float8[]) AS s(node, cu, mu, cr, mr)
        ON CONFLICT DO NOTHING`,
      this.database.prisma.$executeRaw`
        INSERT INTO cell_usage_sample (cluster, at, cell, pool, zone, instance_type, role, labels, nodes, cpu_usage, memory_usage, cpu_requests, memory_requests)
        SELECT ${cluster}, ${at}, c.cell, c.pool, c.zone, c.instance_type, c.role, c.labels::jsonb, c.nodes, c.cu, c.mu, c.cr, c.mr
        FROM unnest(${list.map(([key]) => key)}::text[], ${cell((c) => c.values[0])}::text[], ${cell((c) => c.values[1])}::text[],
                    ${cell((c) => c.values[2])}::text[], ${cell((c) => c.values[3])}::text[], ${cell((c) => c.labels)}::text[], ${cell((c) => c.nodes)}::int[],
                    ${cell((c) => c.cu)}::float8[], ${cell((c) => c.mu)}::float8[], ${cell((c) => c.cr)}::float8[], ${cell((c) => c.mr)}::float8[])
          AS c(cell, pool, zone, instance_type, role, labels, nodes, cu, mu, cr, mr)
        ON CONFLICT DO NOTHING`,
    ]);
    return written;
  }

  /**
   * Rolls a cluster's completed hours up: every hour after the last one rolled up and before
   * `through` (an hour boundary) gets one row per node and one per cell. Returns the node rows
   * written.
   */
  async rollUp(cluster: string, through: Date): Promise<number> {
    const [nodes] = await this.database.prisma.$transaction([NODES, CELLS].map((kind) => this.database.prisma.$executeRaw`
      INSERT INTO ${Prisma.raw(kind.hourly)} (cluster, at, ${Prisma.raw(kind.key.join(", "))}, samples, ${Prisma.raw(HOURLY_COLUMNS)})
      SELECT ${cluster}, ${HOUR_BIN}, ${columns("r", kind.key)}, count(*)::int, ${HOURLY_FIGURES}
      FROM ${Prisma.raw(kind.raw)} r
      WHERE r.cluster = ${cluster} AND r.at < ${through}
        AND r.at >= coalesce((SELECT max(h.at) + interval '1 hour' FROM ${Prisma.raw(kind.hourly)} h WHERE h.cluster = ${cluster}), '-infinity')
      GROUP BY ${HOUR_BIN}, ${columns("r", kind.key)}
      ON CONFLICT DO NOTHING`));
    return nodes!;
  }

  /** Deletes a cluster's raw rows older than `before` whose hour is rolled up; returns how many node rows. */
  async dropRawRows(cluster: string, before: Date): Promise<number> {
    const [nodes] = await this.database.prisma.$transaction([NODES, CELLS].map((kind) => this.database.prisma.$executeRaw`
      DELETE FROM ${Prisma.raw(kind.raw)}
      WHERE cluster = ${cluster}
        AND at < least(${before}, (SELECT coalesce(max(at) + interval '1 hour', '-infinity') FROM ${Prisma.raw(kind.hourly)} WHERE cluster = ${cluster}))`));
    return nodes!;
  }

  /** Deletes every row, raw or hourly, of any cluster, older than `before`; returns how many. */
  async prune(before: Date): Promise<number> {
    let deleted = 0;
    for (const table of [NODES.raw, NODES.hourly, CELLS.raw, CELLS.hourly]) {
      // Keys lead with cluster: find the clusters by skipping through the index (one probe
      // each), then delete each one's old range, rather than scan the whole table.
      deleted += await this.database.prisma.$executeRaw`
        WITH RECURSIVE clusters(cluster) AS (
          SELECT min(cluster) FROM ${Prisma.raw(table)}
          UNION ALL
          SELECT (SELECT min(cluster) FROM ${Prisma.raw(table)} WHERE cluster > clusters.cluster) FROM clusters WHERE clusters.cluster IS NOT NULL
        )
        DELETE FROM ${Prisma.raw(table)} t USING clusters c WHERE t.cluster = c.cluster AND t.at < ${before}`;
    }
    return deleted;
  }

  /**
   * Peaks and p95 over [since, until) at `resolution` (hourly: `since` on an hour boundary),
   * per group id (a JSON array of the group's key values, as the report's grouping makes it)
   * and for everything read (key null). Groups without samples are absent.
   * @throws AppError UNAVAILABLE when the database fails.
   */
  async groupTrends(source: TrendsSource, since: Date, until: Date, resolution: TrendResolution): Promise<Map<string | null, GroupTrend>> {
    const result = new Map<string | null, GroupTrend>();
    if (source.clusters.length === 0 || (source.kind === "nodes" && source.nodes.length === 0)) return result;
    const clusters = [...new Set(source.clusters)];
    const kind = source.kind === "nodes" ? NODES : CELLS;
    const key = Prisma.raw(kind.key.join(", "));
    // Hourly: rolled-up hours from the hourly table, later ones summarised from their raw rows
    // here, from where each cluster's rollups end (one index probe per cluster, so only the raw
    // rows not rolled up are read).
    const points =
      resolution === "raw"
        ? Prisma.sql`
          SELECT r.cluster, ${columns("r", kind.key)}, r.at, r.cpu_usage, r.cpu_usage, r.memory_usage, r.memory_usage,
                 r.cpu_requests, r.cpu_requests, r.memory_requests, r.memory_requests
          FROM ${Prisma.raw(kind.raw)} r
          WHERE r.cluster = ANY(${clusters}::text[]) AND r.at >= ${since} AND r.at < ${until}`
        : Prisma.sql`
          SELECT h.cluster, ${columns("h", kind.key)}, h.at, ${columns("h", HOURLY_COLUMNS.split(", "))}
          FROM ${Prisma.raw(kind.hourly)} h
          WHERE h.cluster = ANY(${clusters}::text[]) AND h.at >= ${since} AND h.at < ${until}
          UNION ALL
          SELECT r.cluster, ${columns("r", kind.key)}, ${HOUR_BIN}, ${HOURLY_FIGURES}
          FROM (
            SELECT c.cluster, greatest(${since}::timestamptz, (SELECT max(h.at) + interval '1 hour' FROM ${Prisma.raw(kind.hourly)} h WHERE h.cluster = c.cluster)) AS raw_since
            FROM unnest(${clusters}::text[]) AS c(cluster)
          ) b
          CROSS JOIN LATERAL (SELECT * FROM ${Prisma.raw(kind.raw)} s WHERE s.cluster = b.cluster AND s.at >= b.raw_since AND s.at < ${until}) r
          GROUP BY r.cluster, ${columns("r", kind.key)}, ${HOUR_BIN}`;
    // Each point's group: the caller's, by node; or, for cells, the JSON array of the dimension values.
    const series =
      source.kind === "nodes"
        ? Prisma.sql`
          SELECT m.gk, p.at, ${SUMS}
          FROM points p JOIN unnest(${source.clusters}::text[], ${source.nodes}::text[], ${source.ids}::text[]) AS m(cluster, node, gk)
            ON m.cluster = p.cluster AND m.node = p.node
          GROUP BY m.gk, p.at`
        : Prisma.sql`
          SELECT json_build_array(${source.groupings.length ? Prisma.join(source.groupings.map(cellValue)) : Prisma.empty})::text AS gk, p.at, ${SUMS}
          FROM points p
          GROUP BY 1, p.at`;
    let rows: ({ gk: string | null; samples: number; requestSeries: string } & Record<string, number | null>)[];
    try {
      rows = await this.database.prisma.$transaction(
        async (tx) => {
          // The planner misjudges how many rows meet the nodes and would sort hundreds of
          // thousands of rows by node name (on disk) to merge-join them; hashing in memory is
          // faster. For this statement's transaction only.
          await tx.$executeRaw`SELECT set_config('enable_mergejoin', 'off', true), set_config('work_mem', '64MB', true), set_config('jit', 'off', true)`;
          return tx.$queryRaw`
            WITH points (cluster, ${key}, at, cu, cup, mu, mup, cr, crp, mr, mrp) AS (${points}),
            series AS (${series}),
            everything AS (
              SELECT gk, at, cu, cup, mu, mup, cr, crp, mr, mrp FROM series
              UNION ALL
              SELECT NULL, at, sum(cu), sum(cup), sum(mu), sum(mup), sum(cr), sum(crp), sum(mr), sum(mrp) FROM series GROUP BY at
            )
            SELECT gk, count(*)::int AS samples,
              json_agg(json_build_array(extract(epoch from at)::float8, cr, mr) ORDER BY at)::text AS "requestSeries",
              max(cup) AS "cpuUsagePeak", percentile_disc(0.95) WITHIN GROUP (ORDER BY cu) AS "cpuUsageP95",
              max(mup) AS "memoryUsagePeak", percentile_disc(0.95) WITHIN GROUP (ORDER BY mu) AS "memoryUsageP95",
              max(crp) AS "cpuRequestsPeak", percentile_disc(0.95) WITHIN GROUP (ORDER BY cr) AS "cpuRequestsP95",
              max(mrp) AS "memoryRequestsPeak", percentile_disc(0.95) WITHIN GROUP (ORDER BY mr) AS "memoryRequestsP95"
            FROM everything
            GROUP BY gk`;
        },
        { timeout: 120_000, maxWait: 10_000 },
      );
    } catch (error) {
      throw callerDatabaseError(error, TRENDS_UNAVAILABLE, this.logger);
    }
    for (const row of rows) {
      const metric = (name: string): MetricTrend => ({ peak: row[`${name}Peak`] ?? null, p95: row[`${name}P95`] ?? null });
      // PostgreSQL writes a cell's JSON array with spaces; ids are JSON.stringify's.
      result.set(row.gk === null || source.kind === "nodes" ? row.gk : JSON.stringify(JSON.parse(row.gk)), {
        samples: row.samples,
        cpuUsage: metric("cpuUsage"),
        memoryUsage: metric("memoryUsage"),
        cpuRequests: metric("cpuRequests"),
        memoryRequests: metric("memoryRequests"),
        requestSeries: (JSON.parse(row.requestSeries) as [number, number | null, number | null][]).map(([at, cpu, memory]) => ({ at: at * 1000, cpu, memory })),
      });
    }
    return result;
  }

  /**
   * Whether every cell row of `clusters` in [since, until) carries each of `labelKeys`: rows
   * sampled while a key was not configured cannot be grouped by it (a report then reads node rows).
   * @throws AppError UNAVAILABLE when the database fails.
   */
  async cellsCarry(clusters: string[], labelKeys: string[], since: Date, until: Date): Promise<boolean> {
    if (labelKeys.length === 0) return true;
    const lacking = (table: string) => Prisma.sql`
      EXISTS (SELECT 1 FROM ${Prisma.raw(table)}
              WHERE cluster = ANY(${clusters}::text[]) AND at >= ${since} AND at < ${until} AND NOT (labels ?& ${labelKeys}::text[]))`;
    try {
      const [row] = await this.database.prisma.$queryRaw<{ lacking: boolean }[]>`SELECT ${lacking(CELLS.raw)} OR ${lacking(CELLS.hourly)} AS lacking`;
      return !row!.lacking;
    } catch (error) {
      throw callerDatabaseError(error, TRENDS_UNAVAILABLE, this.logger);
    }
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
      throw callerDatabaseError(error, TRENDS_UNAVAILABLE, this.logger);
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
