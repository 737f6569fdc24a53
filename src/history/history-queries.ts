/**
 * The read side of recorded history: the `conditionTransitions` and `maintenanceEvents`
 * connections, and the per-node lists behind `Node.conditionTransitions` and
 * `Node.maintenanceEvents`, which answer many nodes in one SQL statement so that DataLoader can
 * batch a whole page of nodes into one round trip.
 *
 * Everything is ordered newest first by (at desc, id desc): `at` alone is not unique (many
 * transitions share a lastTransitionTime, which has second precision in Kubernetes), `id` breaks
 * the tie, and the pair is the key of the indexes (at desc, id desc) and
 * (cluster, node, at desc, id desc). Cursors are keyset positions on that pair, so a row recorded
 * between two pages never shifts the next page.
 */

import type { Database } from "../db/database.js";
import { Prisma } from "../db/generated/client.js";
import { forCaller } from "../db/database-errors.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import type {
  ConditionStatus,
  ConditionTransition,
  ConditionTransitionConnection,
  MaintenanceEvent,
  MaintenanceEventConnection,
  MaintenanceEventFilter,
  PageInfo,
  TransitionFilter,
} from "../graphql/generated/resolvers-types.js";
import { EARLIEST, LATEST } from "../graphql/date-time.js";
import { decodeOpaqueCursor, encodeOpaqueCursor } from "../graphql/opaque-cursor.js";
import { pageSize } from "../graphql/page-size.js";
import type { MaintenanceEventKind } from "./history-model.js";
import type { Logger } from "../log/logger.js";

/**
 * A ConditionTransition and a MaintenanceEvent as the API serves them: read back, `at` is
 * always a Date (the schema's DateTime output also takes the strings Kubernetes writes).
 */
export type ConditionTransitionView = ConditionTransition & { readonly at: Date };
export type MaintenanceEventView = MaintenanceEvent & { readonly at: Date };

/** One node's `conditionTransitions(type, since, first)`: a key of the batched loader. */
export interface NodeTransitionsKey {
  cluster: string;
  node: string;
  type?: string | null;
  since?: Date | null;
  first: number;
}

/** One node's `maintenanceEvents(first)`: a key of the batched loader. */
export interface NodeEventsKey {
  cluster: string;
  node: string;
  first: number;
}

/** `first` of the Node history fields when omitted. */
export const NODE_HISTORY_DEFAULT = 20;
/** The largest `first` of the Node history fields: a page of 500 nodes asks for up to 250,000 rows. */
export const NODE_HISTORY_MAX = 500;

/**
 * Validates `first` of Node.conditionTransitions / Node.maintenanceEvents.
 * @throws AppError BAD_USER_INPUT when negative, not an integer or above {@link NODE_HISTORY_MAX}.
 */
export function nodeHistorySize(first: number | null | undefined): number {
  return pageSize(first, NODE_HISTORY_MAX, NODE_HISTORY_DEFAULT);
}

const FROM_STORED: Record<string, ConditionStatus> = { True: "TRUE", False: "FALSE", Unknown: "UNKNOWN" };
const TO_STORED: Record<ConditionStatus, string> = { TRUE: "True", FALSE: "False", UNKNOWN: "Unknown" };

/** Kubernetes's "True"/"False"/"Unknown"; anything else the API can only call UNKNOWN. */
function statusOf(stored: string): ConditionStatus {
  return FROM_STORED[stored] ?? "UNKNOWN";
}

interface TransitionRow {
  id: bigint;
  cluster: string;
  node: string;
  type: string;
  from: string | null;
  to: string;
  reason: string | null;
  message: string | null;
  at: Date;
}

interface EventRow {
  id: bigint;
  cluster: string;
  node: string;
  kind: string;
  actor: string;
  reason: string | null;
  at: Date;
  operationId: string | null;
  pod: string | null;
  detail: string | null;
}

function transitionView(row: TransitionRow): ConditionTransitionView {
  return {
    id: String(row.id),
    cluster: row.cluster,
    node: row.node,
    type: row.type,
    from: row.from === null ? null : statusOf(row.from),
    to: statusOf(row.to),
    reason: row.reason,
    message: row.message,
    at: row.at,
  };
}

function eventView(row: EventRow): MaintenanceEventView {
  return {
    id: String(row.id),
    cluster: row.cluster,
    node: row.node,
    kind: row.kind as MaintenanceEventKind,
    actor: row.actor,
    reason: row.reason,
    at: row.at,
    operationId: row.operationId,
    pod: row.pod,
    detail: row.detail,
  };
}

/** Which list a cursor belongs to: a transition cursor is no position among events. */
export type CursorList = "transitions" | "events" | "changes" | "drains";

export interface Position {
  at: Date;
  id: bigint;
}

/** Opaque cursor: base64url of {l: list, a: at in epoch ms, i: id}. Timestamps are stored to the millisecond, so ms is exact. */
function encodeCursor(list: CursorList, row: { at: Date; id: bigint }): string {
  return encodeOpaqueCursor({ l: list, a: row.at.getTime(), i: String(row.id) });
}

const NOT_A_CURSOR = "after: not a cursor of this list";
const INT64_MAX = 2n ** 63n - 1n;

export function decodeCursor(list: CursorList, cursor: string): Position {
  const p = decodeOpaqueCursor(cursor, NOT_A_CURSOR) as { l?: unknown; a?: unknown; i?: unknown } | null;
  if (
    typeof p !== "object" ||
    p === null ||
    p.l !== list ||
    typeof p.a !== "number" ||
    !Number.isSafeInteger(p.a) ||
    p.a < EARLIEST ||
    p.a > LATEST ||
    typeof p.i !== "string" ||
    !/^[0-9]{1,19}$/.test(p.i) ||
    // Row ids are PostgreSQL bigints: a larger one is no row's, and the database would refuse it.
    BigInt(p.i) > INT64_MAX
  ) {
    throw new AppError(ErrorCode.BAD_USER_INPUT, NOT_A_CURSOR);
  }
  return { at: new Date(p.a), id: BigInt(p.i) };
}

/**
 * Rows strictly after `position` in (at desc, id desc) order, written so the index can seek:
 * `at <= cursor.at` is a range condition on the leading index column, and only the few rows
 * that share the cursor's `at` are then told apart by id. The plain row-value OR form would
 * make PostgreSQL filter the index from its top instead.
 */
export function afterPosition(position: Position): { at: { lte: Date }; OR: [{ at: { lt: Date } }, { id: { lt: bigint } }] } {
  return { at: { lte: position.at }, OR: [{ at: { lt: position.at } }, { id: { lt: position.id } }] };
}

export function checkInterval(since: Date | null | undefined, until: Date | null | undefined): void {
  if (since != null && until != null && since.getTime() >= until.getTime()) {
    throw new AppError(ErrorCode.BAD_USER_INPUT, "filter.since must be before filter.until");
  }
}

export function atRange(since: Date | null | undefined, until: Date | null | undefined): { at?: { gte?: Date; lt?: Date } } {
  if (since == null && until == null) return {};
  return { at: { ...(since != null ? { gte: since } : {}), ...(until != null ? { lt: until } : {}) } };
}

export const NEWEST_FIRST = [{ at: "desc" }, { id: "desc" }] as const;

/** Reads recorded history. A database that cannot be reached is AppError UNAVAILABLE, with no SQL or connection detail. */
export class HistoryQueries {
  /**
   * @param database where the recorder writes; only `database.prisma` is used.
   * @param logger receives the real cause of a database failure, which the caller never sees.
   */
  constructor(
    private readonly database: Database,
    private readonly logger?: Logger,
  ) {}

  /**
   * Query.conditionTransitions: newest first, `first` (100 by default, at most 5000) after the
   * `after` cursor.
   * @throws AppError BAD_USER_INPUT for a bad `first`, `after` or interval; UNAVAILABLE when the database fails.
   */
  async conditionTransitions(
    filter: TransitionFilter | null | undefined,
    first: number | null | undefined,
    after: string | null | undefined,
  ): Promise<ConditionTransitionConnection> {
    const f = filter ?? {};
    const size = pageSize(first);
    const position = after != null ? decodeCursor("transitions", after) : null;
    checkInterval(f.since, f.until);
    const where: Prisma.ConditionTransitionWhereInput = {
      AND: [
        {
          ...(f.cluster != null ? { cluster: f.cluster } : {}),
          ...(f.node != null ? { node: f.node } : {}),
          ...(f.type != null ? { type: f.type } : {}),
          ...(f.to != null ? { to: TO_STORED[f.to] } : {}),
          ...atRange(f.since, f.until),
        },
        ...(position ? [afterPosition(position)] : []),
      ],
    };
    const rows = await this.read(() =>
      this.database.prisma.conditionTransition.findMany({
        where,
        orderBy: [...NEWEST_FIRST],
        // One more than asked: whether it exists is hasNextPage, without a count.
        take: size + 1,
        select: { id: true, cluster: true, node: true, type: true, from: true, to: true, reason: true, message: true, at: true },
      }),
    );
    return page("transitions", rows, size, transitionView);
  }

  /**
   * Query.maintenanceEvents: newest first, `first` (100 by default, at most 5000) after the
   * `after` cursor.
   * @throws AppError BAD_USER_INPUT for a bad `first`, `after` or interval; UNAVAILABLE when the database fails.
   */
  async maintenanceEvents(
    filter: MaintenanceEventFilter | null | undefined,
    first: number | null | undefined,
    after: string | null | undefined,
  ): Promise<MaintenanceEventConnection> {
    const f = filter ?? {};
    const size = pageSize(first);
    const position = after != null ? decodeCursor("events", after) : null;
    checkInterval(f.since, f.until);
    const where: Prisma.MaintenanceEventWhereInput = {
      AND: [
        {
          ...(f.cluster != null ? { cluster: f.cluster } : {}),
          ...(f.node != null ? { node: f.node } : {}),
          ...(f.kinds != null ? { kind: { in: [...f.kinds] } } : {}),
          ...atRange(f.since, f.until),
        },
        ...(position ? [afterPosition(position)] : []),
      ],
    };
    const rows = await this.read(() =>
      this.database.prisma.maintenanceEvent.findMany({
        where,
        orderBy: [...NEWEST_FIRST],
        take: size + 1,
        select: EVENT_COLUMNS,
      }),
    );
    return page("events", rows, size, eventView);
  }

  /**
   * The batch behind Node.conditionTransitions: for each key, that node's newest `first`
   * transitions (of `type`, at or after `since`, when given), in key order. One SQL statement
   * per distinct (type, since, first) among the keys, however many nodes share it.
   * @throws AppError BAD_USER_INPUT for a bad `first`; UNAVAILABLE when the database fails.
   */
  async transitionsForNodes(keys: readonly NodeTransitionsKey[]): Promise<ConditionTransitionView[][]> {
    for (const key of keys) nodeHistorySize(key.first);
    const groups = groupByArguments(keys, argumentsKeyOf);
    const byNode = new Map<string, ConditionTransitionView[]>();
    await Promise.all(
      [...groups.values()].map(async (group) => {
        const { type, since, first } = group[0]!;
        if (first === 0) return;
        const pairs = distinctPairs(group);
        // LATERAL ... LIMIT rather than row_number() over (partition by cluster, node): the window
        // numbers every row each node ever recorded before keeping `first`, while the lateral
        // subquery walks the (cluster, node, at desc, id desc) index and stops after `first`,
        // so a node with years of flapping costs no more than a quiet one.
        const rows = await this.read(() =>
          this.database.prisma.$queryRaw<TransitionRow[]>`
            SELECT t.id, t.cluster, t.node, t.type, t."from", t."to", t.reason, t.message, t.at
            FROM unnest(${pairs.clusters}::text[], ${pairs.nodes}::text[]) AS k(cluster, node)
            CROSS JOIN LATERAL (
              SELECT c.id, c.cluster, c.node, c.type, c."from", c."to", c.reason, c.message, c.at
              FROM condition_transition c
              WHERE c.cluster = k.cluster AND c.node = k.node
                ${type != null ? Prisma.sql`AND c.type = ${type}` : Prisma.empty}
                ${since != null ? Prisma.sql`AND c.at >= ${since}` : Prisma.empty}
              ORDER BY c.at DESC, c.id DESC
              LIMIT ${first}::int
            ) t
            ORDER BY t.at DESC, t.id DESC`,
        );
        collect(byNode, argumentsKeyOf(group[0]!), rows.map(transitionView));
      }),
    );
    return keys.map((k) => byNode.get(nodeKeyOf(argumentsKeyOf(k), k)) ?? []);
  }

  /**
   * The batch behind Node.maintenanceEvents: for each key, that node's newest `first` events,
   * in key order. One SQL statement per distinct `first` among the keys.
   * @throws AppError BAD_USER_INPUT for a bad `first`; UNAVAILABLE when the database fails.
   */
  async eventsForNodes(keys: readonly NodeEventsKey[]): Promise<MaintenanceEventView[][]> {
    for (const key of keys) nodeHistorySize(key.first);
    const groups = groupByArguments(keys, (k) => String(k.first));
    const byNode = new Map<string, MaintenanceEventView[]>();
    await Promise.all(
      [...groups.values()].map(async (group) => {
        const { first } = group[0]!;
        if (first === 0) return;
        const pairs = distinctPairs(group);
        const rows = await this.read(() =>
          this.database.prisma.$queryRaw<EventRow[]>`
            SELECT e.id, e.cluster, e.node, e.kind, e.actor, e.reason, e.at,
                   e.operation_id::text AS "operationId", e.pod, e.detail
            FROM unnest(${pairs.clusters}::text[], ${pairs.nodes}::text[]) AS k(cluster, node)
            CROSS JOIN LATERAL (
              SELECT m.id, m.cluster, m.node, m.kind, m.actor, m.reason, m.at, m.operation_id, m.pod, m.detail
              FROM maintenance_event m
              WHERE m.cluster = k.cluster AND m.node = k.node
              ORDER BY m.at DESC, m.id DESC
              LIMIT ${first}::int
            ) e
            ORDER BY e.at DESC, e.id DESC`,
        );
        collect(byNode, String(first), rows.map(eventView));
      }),
    );
    return keys.map((k) => byNode.get(nodeKeyOf(String(k.first), k)) ?? []);
  }

  /** Runs a read; a failure that is not ours is the database's, reported to the log and not to the caller. */
  /** Transitions by id, in id order: what a subscription event names. */
  async transitionsByIds(ids: readonly string[]): Promise<ConditionTransitionView[]> {
    if (ids.length === 0) return [];
    const rows = await this.read(() =>
      this.database.prisma.conditionTransition.findMany({
        where: { id: { in: ids.map((id) => BigInt(id)) } },
        orderBy: { id: "asc" },
        select: { id: true, cluster: true, node: true, type: true, from: true, to: true, reason: true, message: true, at: true },
      }),
    );
    return rows.map(transitionView);
  }

  /** Maintenance events by id, in id order. */
  async eventsByIds(ids: readonly string[]): Promise<MaintenanceEventView[]> {
    if (ids.length === 0) return [];
    const rows = await this.read(() =>
      this.database.prisma.maintenanceEvent.findMany({ where: { id: { in: ids.map((id) => BigInt(id)) } }, orderBy: { id: "asc" } }),
    );
    return rows.map(eventView);
  }

  /** A lost database is UNAVAILABLE; any other failure stays what it is (INTERNAL_SERVER_ERROR, logged). */
  private read<T>(run: () => Promise<T>): Promise<T> {
    return forCaller(run, "the history database cannot be reached", this.logger);
  }
}

const EVENT_COLUMNS = {
  id: true,
  cluster: true,
  node: true,
  kind: true,
  actor: true,
  reason: true,
  at: true,
  operationId: true,
  pod: true,
  detail: true,
} as const;

export function page<R extends { at: Date; id: bigint }, V>(
  list: CursorList,
  rows: R[],
  size: number,
  view: (row: R) => V,
): { edges: { cursor: string; node: V }[]; pageInfo: PageInfo } {
  const shown = rows.slice(0, size);
  const edges = shown.map((row) => ({ cursor: encodeCursor(list, row), node: view(row) }));
  return {
    edges,
    pageInfo: { hasNextPage: rows.length > size, endCursor: edges.length > 0 ? edges[edges.length - 1]!.cursor : null },
  };
}

function argumentsKeyOf(key: NodeTransitionsKey): string {
  return JSON.stringify([key.type ?? null, key.since?.getTime() ?? null, key.first]);
}

function nodeKeyOf(argumentsKey: string, node: { cluster: string; node: string }): string {
  // NUL cannot occur in a Kubernetes name, so the joined key is unambiguous.
  return `${argumentsKey}\u0000${node.cluster}\u0000${node.node}`;
}

function groupByArguments<K>(keys: readonly K[], argumentsKey: (key: K) => string): Map<string, K[]> {
  const groups = new Map<string, K[]>();
  for (const key of keys) {
    const id = argumentsKey(key);
    let group = groups.get(id);
    if (group === undefined) groups.set(id, (group = []));
    group.push(key);
  }
  return groups;
}

/** The (cluster, node) pairs of a group as the two parallel arrays `unnest` zips back together. */
export function distinctPairs(group: readonly { cluster: string; node: string }[]): { clusters: string[]; nodes: string[] } {
  const seen = new Set<string>();
  const clusters: string[] = [];
  const nodes: string[] = [];
  for (const { cluster, node } of group) {
    const id = `${cluster}\u0000${node}`;
    if (seen.has(id)) continue;
    seen.add(id);
    clusters.push(cluster);
    nodes.push(node);
  }
  return { clusters, nodes };
}

/** Appends rows (already newest first) to their node's list, keeping that order. */
function collect<V extends { cluster: string; node: string }>(byNode: Map<string, V[]>, argumentsKey: string, rows: V[]): void {
  for (const row of rows) {
    const id = nodeKeyOf(argumentsKey, row);
    let list = byNode.get(id);
    if (list === undefined) byNode.set(id, (list = []));
    list.push(row);
  }
}
