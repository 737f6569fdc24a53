/**
 * What every history connection shares (conditionTransitions, maintenanceEvents, nodeChanges,
 * nodeEvents): pages newest first by (time desc, id desc) with an opaque keyset cursor, and a
 * Query resolver that checks the cluster its filter names before anything is read.
 *
 * The time alone is not unique (many transitions share a lastTransitionTime, which has second
 * precision in Kubernetes), `id` breaks the tie, and the pair is the key of each list's
 * indexes. A cursor is a position on that pair, so a row recorded between two pages never
 * shifts the next page.
 */

import DataLoader from "dataloader";
import type { HistoryClusterCheck } from "../cluster/unknown-cluster.js";
import { loaderFor, type RequestContext } from "../graphql/context.js";
import { EARLIEST, LATEST } from "../graphql/date-time.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import type { PageInfo } from "../graphql/generated/resolvers-types.js";
import { decodeOpaqueCursor, encodeOpaqueCursor } from "../graphql/opaque-cursor.js";
import { pageSize } from "../graphql/page-size.js";

/** Which list a cursor belongs to: a transition cursor is no position among events. */
export type CursorList = "transitions" | "events" | "changes" | "drains" | "nodeEvents";

export interface Position {
  at: Date;
  id: bigint;
}

/** Opaque cursor: base64url of {l: list, a: time in epoch ms, i: id}. Timestamps are stored to the millisecond, so ms is exact. */
function encodeCursor(list: CursorList, position: Position): string {
  return encodeOpaqueCursor({ l: list, a: position.at.getTime(), i: String(position.id) });
}

const NOT_A_CURSOR = "after: not a cursor of this list";
const INT64_MAX = 2n ** 63n - 1n;

function decodeCursor(list: CursorList, cursor: string): Position {
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

type TimeRange = { gte?: Date; lt?: Date; lte?: Date };

/** A Prisma `where` condition on the list's time column `C` (and its id). */
export type SeekCondition<C extends string> = Partial<Record<C, TimeRange>> & { OR?: [Partial<Record<C, TimeRange>>, { id: { lt: bigint } }] };

/** The filter every history connection takes: a cluster, a node, and an interval [since, until) of the time. */
export interface HistoryFilter {
  cluster?: string | null;
  node?: string | null;
  since?: Date | null;
  until?: Date | null;
}

/**
 * What a list reads for one page, as Prisma findMany arguments: the filter's conditions (the
 * list's own `where` among them) AND the position after the cursor, newest first, `take` rows.
 */
export interface PageRead<C extends string, W> {
  where: { AND: (W | { cluster?: string; node?: string } | SeekCondition<C>)[] };
  orderBy: [Record<C, "desc">, { id: "desc" }];
  take: number;
}

/** One page of a history connection as the API serves it. */
export interface HistoryPage<V> {
  edges: { cursor: string; node: V }[];
  pageInfo: PageInfo;
}

/** A history connection's reader: the page of `first` rows after `after` that `filter` selects. */
export type HistoryConnection<F, V> = (filter: F | null | undefined, first: number | null | undefined, after: string | null | undefined) => Promise<HistoryPage<V>>;

/**
 * A Query.<list> connection: newest first, `first` (100 by default, at most 5000) after the
 * `after` cursor, of the rows its filter selects (cluster, node and [since, until) of the time
 * here, and the list's own fields by `where`).
 * @param spec.time the row's time column the list is ordered by, and since/until bound.
 * @param spec.read reads the rows of a page, as {@link PageRead} says.
 * @returns the reader, which throws AppError BAD_USER_INPUT for a bad `first`, `after` or
 *   interval before anything is read.
 */
export function historyConnection<F extends HistoryFilter, C extends string, W, R extends Record<C, Date> & { id: bigint }, V>(spec: {
  list: CursorList;
  time: C;
  where: (filter: F) => W;
  read: (page: PageRead<C, W>) => Promise<R[]>;
  view: (row: R) => V;
}): HistoryConnection<F, V> {
  const { list, time } = spec;
  return async (filter, first, after) => {
    // Every field of a filter input is optional: none given is no filter.
    const f = filter ?? ({} as F);
    const { cluster, node, since, until } = f;
    const size = pageSize(first);
    const position = after != null ? decodeCursor(list, after) : null;
    if (since != null && until != null && since.getTime() >= until.getTime()) {
      throw new AppError(ErrorCode.BAD_USER_INPUT, "filter.since must be before filter.until");
    }
    const where: PageRead<C, W>["where"] = { AND: [{ ...(cluster != null ? { cluster } : {}), ...(node != null ? { node } : {}) }, spec.where(f)] };
    if (since != null || until != null) where.AND.push(on(time, { ...(since != null ? { gte: since } : {}), ...(until != null ? { lt: until } : {}) }));
    // Written so the index can seek: a range on its leading (time) column, and only the few rows
    // that share the cursor's time are then told apart by id. The plain row-value OR form would
    // make PostgreSQL filter the index from its top instead.
    if (position) where.AND.push({ ...on(time, { lte: position.at }), OR: [on(time, { lt: position.at }), { id: { lt: position.id } }] });
    // One more than asked: whether it exists is hasNextPage, without a count.
    const rows = await spec.read({ where, orderBy: [{ [time]: "desc" } as Record<C, "desc">, { id: "desc" }], take: size + 1 });
    const edges = rows.slice(0, size).map((row) => ({ cursor: encodeCursor(list, { at: row[time], id: row.id }), node: spec.view(row) }));
    return { edges, pageInfo: { hasNextPage: rows.length > size, endCursor: edges.at(-1)?.cursor ?? null } };
  };
}

function on<C extends string>(time: C, range: TimeRange): Partial<Record<C, TimeRange>> {
  return { [time]: range } as Partial<Record<C, TimeRange>>;
}

/**
 * A history connection's Query resolver: a filter naming a cluster `known` does not accept is
 * NOT_FOUND, checked before the connection is read.
 */
export function knownClusterConnection<F extends { cluster?: string | null }, T>(
  known: HistoryClusterCheck,
  read: (filter: F | null | undefined, first: number | null | undefined, after: string | null | undefined) => Promise<T>,
): (root: unknown, args: { filter?: F | null; first?: number | null; after?: string | null }) => Promise<T> {
  return async (_root, args) => {
    await known(args.filter?.cluster);
    return read(args.filter, args.first, args.after);
  };
}

/** The node a Node field resolves on, as a loader key. */
export interface NodeRef {
  cluster: string;
  node: string;
}

/**
 * One node's list through the request's DataLoader `name` (one per request and argument set),
 * so every node of a page asking with the same arguments shares one batch: one SQL statement.
 */
export function loadForNode<V>(
  context: RequestContext,
  name: string,
  node: { cluster: string; name: string },
  batch: (refs: readonly NodeRef[]) => Promise<V[][]>,
): Promise<V[]> {
  const loader = loaderFor(context, name, () => new DataLoader<NodeRef, V[], string>(batch, { cacheKeyFn: (ref) => `${ref.cluster}\u0000${ref.node}` }));
  return loader.load({ cluster: node.cluster, node: node.name });
}
