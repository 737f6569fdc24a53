/**
 * The availability report's read of the history database: five statements however many nodes
 * there are, in one REPEATABLE READ transaction so that a node recorded meanwhile cannot show
 * up with its state but without its rows.
 *
 * Per node, besides the rows inside [from, to), the rules of availability-timeline.ts need a
 * few rows outside it, each found with a LATERAL … LIMIT 1 that walks the (cluster, node,
 * at desc) index of one node and stops: the Ready status at `from` (the last transition
 * before it), the start of an outage in progress at `from` (the last transition before it
 * that left True or first set the status), the first row at or after `to` (whose `from` says
 * what the status was when nothing else does), and the same for lifetimes and cordons.
 */

import type { Database } from "../db/database.js";
import { Prisma } from "../db/generated/client.js";
import type { QueryAvailabilityReportArgs } from "../graphql/generated/resolvers-types.js";
import { callerDatabaseError } from "../db/database-errors.js";
import type { Logger } from "../log/logger.js";
import {
  availabilityRequest,
  buildAvailabilityReport,
  type AvailabilityReport,
  type AvailabilityRequest,
  type NodeHistory,
} from "./availability-report.js";
import { mergedSpans, type RecordedNode, type Spans, type TimelineEvent } from "./availability-timeline.js";

interface TransitionsRow {
  cluster: string;
  node: string;
  /** "id ms from to" per transition, comma-separated, in no particular order; statuses coded by {@link statusCode}. */
  items: string;
}

/** A stored status as one letter (T, F, U; "-" for none), so that no status text can break the item format. */
function statusCode(column: string): Prisma.Sql {
  const c = Prisma.raw(column);
  return Prisma.sql`CASE WHEN ${c} IS NULL THEN '-' WHEN ${c} = 'True' THEN 'T' WHEN ${c} = 'False' THEN 'F' ELSE 'U' END`;
}

const STATUS: Record<string, string | null> = { T: "True", F: "False", U: "Unknown", "-": null };

interface LifetimeRow {
  cluster: string;
  node: string;
  field: "CREATED" | "DELETED" | "REBOOTED";
  uid: string | null;
  at: Date;
}

interface MaintenanceRow {
  cluster: string;
  node: string;
  id: bigint;
  kind: string;
  operation: string | null;
  at: Date;
}

interface CoverageRow {
  cluster: string;
  started_at: Date;
  ended_at: Date;
}

const DRAIN_ENDS = Prisma.sql`('DRAIN_SUCCEEDED', 'DRAIN_FAILED', 'DRAIN_CANCELLED')`;

/** Computes Query.availabilityReport from recorded history. */
export class AvailabilityQueries {
  /**
   * @param database the history database; only `database.prisma` is used.
   * @param logger receives the real cause of a database failure, which the caller never sees.
   * @param now the clock: nothing after it is observed, whatever `to` says.
   */
  constructor(
    private readonly database: Database,
    private readonly logger?: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Query.availabilityReport.
   * @throws AppError BAD_USER_INPUT for bad arguments (before any query); UNAVAILABLE when the database fails.
   */
  async report(args: QueryAvailabilityReportArgs): Promise<Omit<AvailabilityReport, "clustersNotConfigured">> {
    const request = availabilityRequest(args);
    let read: Awaited<ReturnType<AvailabilityQueries["histories"]>>;
    try {
      read = await this.histories(request);
    } catch (error) {
      throw callerDatabaseError(error, "the history database cannot be reached", this.logger);
    }
    return buildAvailabilityReport(request, read.histories, this.now(), read.watched);
  }

  /** Every node that may have been observed in the period, with the rows its figures need. */
  private async histories({ cluster, from, to }: AvailabilityRequest): Promise<{ histories: NodeHistory[]; watched: Map<string, Spans> }> {
    const inCluster = (column: string) => (cluster === null ? Prisma.sql`TRUE` : Prisma.sql`${Prisma.raw(column)} = ${cluster}`);
    // The nodes of the report: every one not deleted before the period (a name deleted and
    // created again has the state of its latest object).
    const nodes = Prisma.sql`SELECT cluster, name FROM node_state WHERE ${inCluster("cluster")} AND (deleted_at IS NULL OR deleted_at > ${from})`;
    const p = this.database.prisma;
    const [nodeRows, transitions, lifetimes, maintenance, coverage] = await p.$transaction(
      [
        p.$queryRaw<RecordedNode[]>`
          SELECT cluster, name, uid, labels, conditions->>'Ready' AS ready, unschedulable
          FROM node_state WHERE ${inCluster("cluster")} AND (deleted_at IS NULL OR deleted_at > ${from})`,
        // A node's Ready transitions come back as one string, "id ms from to" items joined by
        // commas: a few thousand rows to parse instead of hundreds of thousands (a 30-day report
        // of 5,000 nodes is 5x faster so; see bench/availability-report.ts).
        p.$queryRaw<TransitionsRow[]>`
          WITH n AS (${nodes}),
          rows AS (
            SELECT c.cluster, c.node, c.id, c."from", c."to", c.at FROM condition_transition c
            WHERE c.type = 'Ready' AND c.at >= ${from} AND c.at < ${to} AND ${inCluster("c.cluster")}
            UNION ALL
            SELECT t.* FROM n CROSS JOIN LATERAL (
              SELECT c.cluster, c.node, c.id, c."from", c."to", c.at FROM condition_transition c
              WHERE c.cluster = n.cluster AND c.node = n.name AND c.type = 'Ready' AND c.at < ${from}
              ORDER BY c.at DESC, c.id DESC LIMIT 1) t
            UNION ALL
            SELECT t.* FROM n CROSS JOIN LATERAL (
              SELECT c.cluster, c.node, c.id, c."from", c."to", c.at FROM condition_transition c
              WHERE c.cluster = n.cluster AND c.node = n.name AND c.type = 'Ready' AND c.at < ${from}
                AND (c."from" = 'True' OR c."from" IS NULL)
              ORDER BY c.at DESC, c.id DESC LIMIT 1) t
            UNION ALL
            SELECT t.* FROM n CROSS JOIN LATERAL (
              SELECT c.cluster, c.node, c.id, c."from", c."to", c.at FROM condition_transition c
              WHERE c.cluster = n.cluster AND c.node = n.name AND c.type = 'Ready' AND c.at >= ${to}
              ORDER BY c.at ASC, c.id ASC LIMIT 1) t)
          SELECT cluster, node, string_agg(concat_ws(' ', id, (extract(epoch FROM at) * 1000)::bigint, ${statusCode('"from"')}, ${statusCode('"to"')}), ',') AS items
          FROM rows GROUP BY cluster, node`,
        p.$queryRaw<LifetimeRow[]>`
          WITH n AS (${nodes}),
          rows AS (
            SELECT c.id, c.cluster, c.node, c.field, c.before, c.after, c.at FROM node_change c
            WHERE c.field IN ('CREATED', 'DELETED', 'REBOOTED') AND c.at >= ${from} AND c.at < ${to} AND ${inCluster("c.cluster")}
            UNION
            SELECT t.* FROM n CROSS JOIN LATERAL (
              SELECT c.id, c.cluster, c.node, c.field, c.before, c.after, c.at FROM node_change c
              WHERE c.cluster = n.cluster AND c.node = n.name AND c.field = 'CREATED' AND c.at < ${from}
              ORDER BY c.at DESC LIMIT 1) t
            UNION
            SELECT t.* FROM n CROSS JOIN LATERAL (
              SELECT c.id, c.cluster, c.node, c.field, c.before, c.after, c.at FROM node_change c
              WHERE c.cluster = n.cluster AND c.node = n.name AND c.field = 'DELETED' AND c.at < ${from}
              ORDER BY c.at DESC LIMIT 1) t
            UNION
            SELECT t.* FROM n CROSS JOIN LATERAL (
              SELECT c.id, c.cluster, c.node, c.field, c.before, c.after, c.at FROM node_change c
              WHERE c.cluster = n.cluster AND c.node = n.name AND c.field IN ('CREATED', 'DELETED') AND c.at >= ${to}
              ORDER BY c.at ASC LIMIT 1) t)
          SELECT cluster, node, field, at, COALESCE(after->>'uid', before->>'uid') AS uid FROM rows`,
        p.$queryRaw<MaintenanceRow[]>`
          WITH n AS (${nodes})
          SELECT m.cluster, m.node, m.id, m.kind, NULL::text AS operation, m.at FROM maintenance_event m
          WHERE m.kind IN ('CORDONED', 'UNCORDONED') AND m.at >= ${from} AND m.at < ${to} AND ${inCluster("m.cluster")}
          UNION
          SELECT t.* FROM n CROSS JOIN LATERAL (
            SELECT m.cluster, m.node, m.id, m.kind, NULL::text AS operation, m.at FROM maintenance_event m
            WHERE m.cluster = n.cluster AND m.node = n.name AND m.kind IN ('CORDONED', 'UNCORDONED') AND m.at < ${from}
            ORDER BY m.at DESC, m.id DESC LIMIT 1) t
          UNION
          SELECT t.* FROM n CROSS JOIN LATERAL (
            SELECT m.cluster, m.node, m.id, m.kind, NULL::text AS operation, m.at FROM maintenance_event m
            WHERE m.cluster = n.cluster AND m.node = n.name AND m.kind IN ('CORDONED', 'UNCORDONED') AND m.at >= ${to}
            ORDER BY m.at ASC, m.id ASC LIMIT 1) t
          UNION
          -- Drains: every event of a drain that started before "to" and had not ended by "from",
          -- and the ends inside the period of drains whose start is no longer recorded.
          SELECT m.cluster, m.node, m.id, m.kind, m.operation_id::text AS operation, m.at FROM maintenance_event m
          WHERE m.operation_id IS NOT NULL AND ${inCluster("m.cluster")} AND (
            (m.kind IN ${DRAIN_ENDS} AND m.at >= ${from} AND m.at < ${to})
            OR (m.kind IN ('DRAIN_STARTED', 'DRAIN_SUCCEEDED', 'DRAIN_FAILED', 'DRAIN_CANCELLED') AND m.operation_id IN (
              SELECT d.operation_id FROM maintenance_event d
              WHERE d.kind = 'DRAIN_STARTED' AND d.at < ${to} AND ${inCluster("d.cluster")}
                AND NOT EXISTS (SELECT 1 FROM maintenance_event e WHERE e.operation_id = d.operation_id AND e.kind IN ${DRAIN_ENDS} AND e.at < ${from}))))`,
        // When each cluster was recorded: outside these stretches nothing was observed.
        p.$queryRaw<CoverageRow[]>`
          SELECT cluster, started_at, ended_at FROM recording_coverage
          WHERE ${inCluster("cluster")} AND ended_at > ${from} AND started_at < ${to}`,
      ],
      { isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead, timeout: 120_000, maxWait: 10_000 },
    );

    const byNode = new Map<string, NodeHistory>();
    const id = (cluster: string, node: string) => `${cluster}\u0000${node}`;
    for (const row of nodeRows) {
      byNode.set(id(row.cluster, row.name), { node: row, events: [], reboots: 0 });
    }
    const add = (row: { cluster: string; node: string }, event: TimelineEvent) => byNode.get(id(row.cluster, row.node))?.events.push(event);
    for (const row of transitions) {
      // The two "before from" rows may be one and the same transition.
      const seen = new Set<string>();
      for (const item of row.items.split(",")) {
        const [id, ms, from, to] = item.split(" ") as [string, string, string, string];
        if (seen.has(id)) continue;
        seen.add(id);
        add(row, { kind: "READY", at: Number(ms), from: STATUS[from] ?? null, to: STATUS[to] ?? "Unknown", seq: Number(id) });
      }
    }
    for (const row of lifetimes) {
      if (row.field !== "REBOOTED") add(row, { kind: row.field, at: row.at.getTime(), uid: row.uid });
      else {
        const history = byNode.get(id(row.cluster, row.node));
        if (history) history.reboots++;
      }
    }
    for (const row of maintenance) {
      const at = row.at.getTime();
      const seq = Number(row.id);
      if (row.kind === "CORDONED" || row.kind === "UNCORDONED") add(row, { kind: row.kind, at, seq });
      else if (row.operation !== null) add(row, { kind: row.kind === "DRAIN_STARTED" ? "DRAIN_STARTED" : "DRAIN_ENDED", at, operation: row.operation, seq });
    }
    const stretches = new Map<string, [number, number][]>();
    for (const row of coverage) {
      let list = stretches.get(row.cluster);
      if (!list) stretches.set(row.cluster, (list = []));
      list.push([row.started_at.getTime(), row.ended_at.getTime()]);
    }
    const watched = new Map<string, Spans>([...stretches].map(([name, spans]) => [name, mergedSpans(spans)]));
    return { histories: [...byNode.values()], watched };
  }
}
