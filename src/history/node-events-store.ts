/**
 * Recorded node events: the write side (one row per Event object, moved only forwards) and
 * the read side (the nodeEvents connection, newest first by last seen, then id).
 */
import type { CachedNodeEvent } from "../cluster/node-event.js";
import type { Database } from "../db/database.js";
import { forCaller } from "../db/database-errors.js";
import { Prisma } from "../db/generated/client.js";
import { storable } from "../db/storable-text.js";
import type { NodeEvent, NodeEventFilter } from "../graphql/generated/resolvers-types.js";
import type { Logger } from "../log/logger.js";
import { historyConnection } from "./history-connection.js";

/** An event as recorded: `lastSeen` is never missing (see the model). */
export interface NodeEventRow {
  cluster: string;
  uid: string;
  node: string;
  objectKey: string;
  type: string;
  reason: string;
  message: string | null;
  count: number;
  firstSeen: Date | null;
  lastSeen: Date;
  source: string | null;
}

/** The row for an event seen at `observedAt` (its last-seen time when Kubernetes gives none). */
export function rowOf(event: CachedNodeEvent, observedAt: Date): NodeEventRow {
  const firstSeen = event.firstSeen ? new Date(event.firstSeen) : null;
  return {
    cluster: event.cluster,
    uid: event.id,
    node: event.node,
    objectKey: event.key,
    type: event.type,
    reason: event.reason,
    message: event.message ?? null,
    count: event.count,
    firstSeen,
    lastSeen: event.lastSeen ? new Date(event.lastSeen) : (firstSeen ?? observedAt),
    source: event.source ?? null,
  };
}

/** Rows per INSERT: 11 parameters each, far below PostgreSQL's 65,535. */
const ROWS_PER_STATEMENT = 500;

export class NodeEventsStore {
  constructor(
    private readonly database: Database,
    private readonly logger?: Logger,
  ) {}

  /**
   * Writes each event once: a new Event is a row, a known one (same cluster and uid) takes the
   * larger count and the later last-seen time, with that version's message. A replay, an older
   * version arriving late, or a second replica writing the same events changes nothing.
   * @returns how many rows were inserted or moved forward.
   */
  async upsert(rows: readonly NodeEventRow[]): Promise<number> {
    let written = 0;
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      // An Event's text comes from the cluster: a NUL in it would make PostgreSQL refuse the statement.
      const part = storable(rows.slice(i, i + ROWS_PER_STATEMENT));
      const values = part.map(
        (r) => Prisma.sql`(${r.cluster}, ${r.uid}, ${r.node}, ${r.objectKey}, ${r.type}, ${r.reason}, ${r.message}, ${r.count}, ${r.firstSeen}::timestamptz, ${r.lastSeen}::timestamptz, ${r.source})`,
      );
      written += await this.database.prisma.$executeRaw`
        INSERT INTO node_event AS e (cluster, uid, node, object_key, type, reason, message, count, first_seen, last_seen, source)
        VALUES ${Prisma.join(values)}
        ON CONFLICT (cluster, uid) DO UPDATE SET
          count = GREATEST(e.count, EXCLUDED.count),
          last_seen = GREATEST(e.last_seen, EXCLUDED.last_seen),
          message = CASE WHEN EXCLUDED.last_seen >= e.last_seen THEN EXCLUDED.message ELSE e.message END,
          type = CASE WHEN EXCLUDED.last_seen >= e.last_seen THEN EXCLUDED.type ELSE e.type END,
          first_seen = COALESCE(LEAST(e.first_seen, EXCLUDED.first_seen), e.first_seen, EXCLUDED.first_seen),
          updated_at = now()
        WHERE EXCLUDED.count > e.count OR EXCLUDED.last_seen > e.last_seen
          OR (EXCLUDED.last_seen = e.last_seen AND EXCLUDED.message IS DISTINCT FROM e.message)`;
    }
    return written;
  }

  /**
   * Query.nodeEvents: newest first by last seen, `first` (100 by default, at most 5000) after
   * the `after` cursor; since/until bound the last-seen time, [since, until).
   * @throws AppError BAD_USER_INPUT for a bad `first`, `after` or interval; UNAVAILABLE when the database cannot be reached.
   */
  readonly nodeEvents = historyConnection({
    list: "nodeEvents",
    // Over the (last_seen desc, id desc) index.
    time: "lastSeen",
    where: (f: NodeEventFilter) => ({ ...(f.type != null ? { type: f.type } : {}), ...(f.reason != null ? { reason: f.reason } : {}) }),
    // Only a lost connection is UNAVAILABLE; any other failure is a bug, answered INTERNAL_SERVER_ERROR.
    read: (page) => forCaller(() => this.database.prisma.nodeEvent.findMany(page), "the history database cannot be reached", this.logger),
    count: (where) => forCaller(() => this.database.prisma.nodeEvent.count({ where }), "the history database cannot be reached", this.logger),
    // A lambda, so the rows are typed by what was read (with their id), not by the view's NodeEventRow.
    view: (row) => recordedView(row),
  });
}

/** A recorded event as the API serves it: the same `id` (the Event's uid) as the live one. */
export function recordedView(row: NodeEventRow): NodeEvent {
  return {
    id: row.uid,
    cluster: row.cluster,
    node: row.node,
    type: row.type,
    reason: row.reason,
    message: row.message,
    count: row.count,
    firstSeen: row.firstSeen,
    lastSeen: row.lastSeen,
    source: row.source,
  };
}

/** A cached (live) event as the API serves it. */
export function liveView(event: CachedNodeEvent): NodeEvent {
  return {
    id: event.id,
    cluster: event.cluster,
    node: event.node,
    type: event.type,
    reason: event.reason,
    message: event.message ?? null,
    count: event.count,
    firstSeen: event.firstSeen ? new Date(event.firstSeen) : null,
    lastSeen: event.lastSeen ? new Date(event.lastSeen) : null,
    source: event.source ?? null,
  };
}
