/**
 * Recorded node events: the write side (one row per Event object, moved only forwards) and
 * the read side (the nodeEvents connection, newest first by last seen, then id).
 */
import type { CachedNodeEvent } from "../cluster/node-event.js";
import type { Database } from "../db/database.js";
import { Prisma } from "../db/generated/client.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import type { NodeEvent, NodeEventConnection, NodeEventFilter } from "../graphql/generated/resolvers-types.js";
import { decodeOpaqueCursor, encodeOpaqueCursor } from "../graphql/opaque-cursor.js";
import { pageSize } from "../graphql/page-size.js";
import type { Logger } from "../log/logger.js";

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

const NOT_A_CURSOR = "after: not a cursor of this list";

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
      const part = rows.slice(i, i + ROWS_PER_STATEMENT);
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
   * @throws AppError BAD_USER_INPUT for a bad `first`, `after` or interval; UNAVAILABLE when the database fails.
   */
  async nodeEvents(filter: NodeEventFilter | null | undefined, first: number | null | undefined, after: string | null | undefined): Promise<NodeEventConnection> {
    const f = filter ?? {};
    const size = pageSize(first);
    const position = after != null ? decodeCursor(after) : null;
    if (f.since != null && f.until != null && f.since.getTime() >= f.until.getTime()) {
      throw new AppError(ErrorCode.BAD_USER_INPUT, "filter.since must be before filter.until");
    }
    const where: Prisma.NodeEventWhereInput = {
      AND: [
        {
          ...(f.cluster != null ? { cluster: f.cluster } : {}),
          ...(f.node != null ? { node: f.node } : {}),
          ...(f.type != null ? { type: f.type } : {}),
          ...(f.reason != null ? { reason: f.reason } : {}),
          ...(f.since != null || f.until != null ? { lastSeen: { ...(f.since != null ? { gte: f.since } : {}), ...(f.until != null ? { lt: f.until } : {}) } } : {}),
        },
        // Seekable on the (last_seen desc, id desc) index: a range on its first column, ties by id.
        ...(position ? [{ lastSeen: { lte: position.at }, OR: [{ lastSeen: { lt: position.at } }, { id: { lt: position.id } }] }] : []),
      ],
    };
    let rows: (NodeEventRow & { id: bigint })[];
    try {
      rows = await this.database.prisma.nodeEvent.findMany({ where, orderBy: [{ lastSeen: "desc" }, { id: "desc" }], take: size + 1 });
    } catch (error) {
      this.logger?.warn({ err: error }, "node events query failed");
      throw new AppError(ErrorCode.UNAVAILABLE, "the history database cannot be reached");
    }
    const edges = rows.slice(0, size).map((row) => ({ cursor: encodeOpaqueCursor({ l: "nodeEvents", a: row.lastSeen.getTime(), i: String(row.id) }), node: recordedView(row) }));
    return { edges, pageInfo: { hasNextPage: rows.length > size, endCursor: edges.at(-1)?.cursor ?? null } };
  }
}

function decodeCursor(cursor: string): { at: Date; id: bigint } {
  const p = decodeOpaqueCursor(cursor, NOT_A_CURSOR) as { l?: unknown; a?: unknown; i?: unknown } | null;
  if (typeof p !== "object" || p === null || p.l !== "nodeEvents" || typeof p.a !== "number" || !Number.isSafeInteger(p.a) || typeof p.i !== "string" || !/^[0-9]{1,19}$/.test(p.i)) {
    throw new AppError(ErrorCode.BAD_USER_INPUT, NOT_A_CURSOR);
  }
  return { at: new Date(p.a), id: BigInt(p.i) };
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
