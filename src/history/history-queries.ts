/**
 * The read side of recorded history: the `conditionTransitions` and `maintenanceEvents`
 * connections, and the per-node lists behind `Node.conditionTransitions` and
 * `Node.maintenanceEvents`, which answer many nodes in one SQL statement so that DataLoader can
 * batch a whole page of nodes into one round trip.
 *
 * Everything is ordered newest first by (at desc, id desc), the key of the indexes
 * (at desc, id desc) and (cluster, node, at desc, id desc); the connections page as every
 * history connection does (history-connection.ts).
 */

import type { Database } from "../db/database.js";
import { Prisma } from "../db/generated/client.js";
import { forCaller } from "../db/database-errors.js";
import type {
  ConditionStatus,
  ConditionTransition,
  MaintenanceEvent,
  MaintenanceEventFilter,
  TransitionFilter,
} from "../graphql/generated/resolvers-types.js";
import { globalId } from "../graphql/global-id.js";
import { pageSize } from "../graphql/page-size.js";
import { historyConnection } from "./history-connection.js";
import type { TransitionRecord } from "./history-diff.js";
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

/** A transition as recorded (the recorder's record, less what only the write needs), with its row id. */
type TransitionRow = TransitionRecord & { id: bigint; recordedAt: Date };

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
    id: globalId("ConditionTransition", row.id),
    cluster: row.cluster,
    node: row.node,
    type: row.type,
    from: row.from === null ? null : statusOf(row.from),
    to: statusOf(row.to),
    reason: row.reason,
    message: row.message,
    at: row.at,
    reconciled: row.reconciled,
    recordedAt: row.recordedAt,
  };
}

function eventView(row: EventRow): MaintenanceEventView {
  return {
    id: globalId("MaintenanceEvent", row.id),
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
  readonly conditionTransitions = historyConnection({
    list: "transitions",
    time: "at",
    where: (f: TransitionFilter) => ({ ...(f.type != null ? { type: f.type } : {}), ...(f.to != null ? { to: TO_STORED[f.to] } : {}) }),
    read: (page) => this.read(() => this.database.prisma.conditionTransition.findMany({ ...page, select: TRANSITION_COLUMNS })),
    count: (where) => this.read(() => this.database.prisma.conditionTransition.count({ where })),
    view: transitionView,
  });

  /**
   * Query.maintenanceEvents: newest first, `first` (100 by default, at most 5000) after the
   * `after` cursor.
   * @throws AppError BAD_USER_INPUT for a bad `first`, `after` or interval; UNAVAILABLE when the database fails.
   */
  readonly maintenanceEvents = historyConnection({
    list: "events",
    time: "at",
    where: (f: MaintenanceEventFilter) => (f.kinds != null ? { kind: { in: [...f.kinds] } } : {}),
    read: (page) => this.read(() => this.database.prisma.maintenanceEvent.findMany({ ...page, select: EVENT_COLUMNS })),
    count: (where) => this.read(() => this.database.prisma.maintenanceEvent.count({ where })),
    view: eventView,
  });

  /**
   * The batch behind Node.conditionTransitions: for each key, that node's newest `first`
   * transitions (of `type`, at or after `since`, when given), in key order. One SQL statement
   * per distinct (type, since, first) among the keys, however many nodes share it.
   * @throws AppError BAD_USER_INPUT for a bad `first`; UNAVAILABLE when the database fails.
   */
  transitionsForNodes(keys: readonly NodeTransitionsKey[]): Promise<ConditionTransitionView[][]> {
    return batchByNode(keys, argumentsKeyOf, async ({ type, since, first }, pairs) => {
      // LATERAL ... LIMIT rather than row_number() over (partition by cluster, node): the window
      // numbers every row each node ever recorded before keeping `first`, while the lateral
      // subquery walks the (cluster, node, at desc, id desc) index and stops after `first`,
      // so a node with years of flapping costs no more than a quiet one.
      const rows = await this.read(() =>
        this.database.prisma.$queryRaw<TransitionRow[]>`
          SELECT t.id, t.cluster, t.node, t.type, t."from", t."to", t.reason, t.message, t.at, t.reconciled, t.recorded_at AS "recordedAt"
          FROM unnest(${pairs.clusters}::text[], ${pairs.nodes}::text[]) AS k(cluster, node)
          CROSS JOIN LATERAL (
            SELECT c.id, c.cluster, c.node, c.type, c."from", c."to", c.reason, c.message, c.at, c.reconciled, c.recorded_at
            FROM condition_transition c
            WHERE c.cluster = k.cluster AND c.node = k.node
              ${type != null ? Prisma.sql`AND c.type = ${type}` : Prisma.empty}
              ${since != null ? Prisma.sql`AND c.at >= ${since}` : Prisma.empty}
            ORDER BY c.at DESC, c.id DESC
            LIMIT ${first}::int
          ) t
          ORDER BY t.at DESC, t.id DESC`,
      );
      return rows.map(transitionView);
    });
  }

  /**
   * The batch behind Node.maintenanceEvents: for each key, that node's newest `first` events,
   * in key order. One SQL statement per distinct `first` among the keys.
   * @throws AppError BAD_USER_INPUT for a bad `first`; UNAVAILABLE when the database fails.
   */
  eventsForNodes(keys: readonly NodeEventsKey[]): Promise<MaintenanceEventView[][]> {
    return batchByNode(keys, (k) => String(k.first), async ({ first }, pairs) => {
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
      return rows.map(eventView);
    });
  }

  /** Transitions by id, in id order: what a subscription event names. */
  async transitionsByIds(ids: readonly string[]): Promise<ConditionTransitionView[]> {
    if (ids.length === 0) return [];
    const rows = await this.read(() =>
      this.database.prisma.conditionTransition.findMany({
        where: { id: { in: ids.map((id) => BigInt(id)) } },
        orderBy: { id: "asc" },
        select: TRANSITION_COLUMNS,
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

const TRANSITION_COLUMNS = { id: true, cluster: true, node: true, type: true, from: true, to: true, reason: true, message: true, at: true, reconciled: true, recordedAt: true } as const;

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

/** The (cluster, node) pairs of a group as the two parallel arrays `unnest` zips back together. */
interface NodePairs {
  clusters: string[];
  nodes: string[];
}

/**
 * The batch behind a Node history field: the keys grouped by their arguments (`argumentsKey`),
 * one `read` per group of the distinct nodes it names (none when its `first` is 0), and each
 * key's rows (newest first, as read), in key order.
 * @throws AppError BAD_USER_INPUT for a bad `first`, before anything is read.
 */
export async function batchByNode<K extends { cluster: string; node: string; first: number }, V extends { cluster: string; node: string }>(
  keys: readonly K[],
  argumentsKey: (key: K) => string,
  read: (group: K, pairs: NodePairs) => Promise<V[]>,
): Promise<V[][]> {
  for (const key of keys) nodeHistorySize(key.first);
  const byNode = new Map<string, V[]>();
  await Promise.all(
    [...groupByArguments(keys, argumentsKey)].map(async ([id, group]) => {
      if (group[0]!.first === 0) return;
      collect(byNode, id, await read(group[0]!, distinctPairs(group)));
    }),
  );
  return keys.map((k) => byNode.get(nodeKeyOf(argumentsKey(k), k)) ?? []);
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

function distinctPairs(group: readonly { cluster: string; node: string }[]): NodePairs {
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
