/**
 * What every history connection shares (conditionTransitions, maintenanceEvents, nodeChanges,
 * nodeEvents, drainOperations): pages newest first by (time desc, id desc) with an opaque keyset cursor, and a
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
import { pageWindow, type ConnectionArgs } from "../graphql/page-size.js";

/** Which list a cursor belongs to: a transition cursor is no position among events. */
export type CursorList = "transitions" | "events" | "changes" | "drains" | "nodeEvents";

/** A row's id: a PostgreSQL bigint, or a uuid (drains). */
type RowId = bigint | string;

export interface Position<I extends RowId = RowId> {
  at: Date;
  id: I;
}

/** Opaque cursor: base64url of {l: list, a: time in epoch ms, i: id}. Timestamps are stored to the millisecond, so ms is exact. */
function encodeCursor(list: CursorList, position: Position): string {
  return encodeOpaqueCursor({ l: list, a: position.at.getTime(), i: String(position.id) });
}

const INT64_MAX = 2n ** 63n - 1n;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** How a list's ids are read back from a cursor; null for one that is no row's id. */
const ID_CODECS = {
  // Row ids are PostgreSQL bigints: a larger one is no row's, and the database would refuse it.
  bigint: (text: string): bigint | null => (/^[0-9]{1,19}$/.test(text) && BigInt(text) <= INT64_MAX ? BigInt(text) : null),
  uuid: (text: string): string | null => (UUID.test(text) ? text : null),
} as const;
type IdKind = keyof typeof ID_CODECS;
type IdOf<K extends IdKind> = NonNullable<ReturnType<(typeof ID_CODECS)[K]>>;

function decodeCursor<K extends IdKind>(list: CursorList, idKind: K, cursor: string, argument: string): Position<IdOf<K>> {
  const NOT_A_CURSOR = `${argument}: not a cursor of this list`;
  const p = decodeOpaqueCursor(cursor, NOT_A_CURSOR) as { l?: unknown; a?: unknown; i?: unknown } | null;
  const id = typeof p === "object" && p !== null && typeof p.i === "string" ? ID_CODECS[idKind](p.i) : null;
  if (typeof p !== "object" || p === null || p.l !== list || typeof p.a !== "number" || !Number.isSafeInteger(p.a) || p.a < EARLIEST || p.a > LATEST || id === null) {
    throw new AppError(ErrorCode.BAD_USER_INPUT, NOT_A_CURSOR);
  }
  return { at: new Date(p.a), id: id as IdOf<K> };
}

type TimeRange = { gte?: Date; gt?: Date; lt?: Date; lte?: Date };
type IdRange<I extends RowId> = { lt?: I; lte?: I; gt?: I; gte?: I };

/** A Prisma `where` condition on the list's time column `C` (and its id, of type `I`). */
export type SeekCondition<C extends string, I extends RowId = bigint> = Partial<Record<C, TimeRange>> & { OR?: [Partial<Record<C, TimeRange>>, { id: IdRange<I> }] };

/** The filter every history connection takes: a cluster, a node, and an interval [since, until) of the time. */
export interface HistoryFilter {
  cluster?: string | null;
  node?: string | null;
  since?: Date | null;
  until?: Date | null;
}

/** What a list selects before any cursor: the filter's conditions, the list's own `where` among them. */
export type ListWhere<C extends string, W, I extends RowId = bigint> = { AND: (W | { cluster?: string; node?: string } | SeekCondition<C, I>)[] };

/**
 * What a list reads for one page, as Prisma findMany arguments: the filter's conditions AND the
 * positions between the cursors, newest first (oldest first when paging back), `take` rows.
 */
export interface PageRead<C extends string, W, I extends RowId = bigint> {
  where: ListWhere<C, W, I>;
  orderBy: [Record<C, "desc" | "asc">, { id: "desc" | "asc" }];
  take: number;
}

/** One page of a history connection as the API serves it; totalCount is counted only when asked for. */
export interface HistoryPage<V = unknown> {
  edges: { cursor: string; node: V }[];
  pageInfo: PageInfo;
  totalCount: () => Promise<number>;
}

/** A history connection's reader: the page that `filter` and the Relay arguments select. */
export type HistoryConnection<F, V> = (filter: F | null | undefined, args: ConnectionArgs) => Promise<HistoryPage<V>>;

/**
 * A Query.<list> connection, newest first, paged as the Relay Cursor Connections spec says:
 * the rows strictly between the `after` and `before` cursors, then the first `first` (100 by
 * default, at most 5000) or the last `last` of them, of the rows its filter selects (cluster,
 * node and [since, until) of the time here, and the list's own fields by `where`).
 * hasPreviousPage and hasNextPage say whether rows lie beyond the page on either side; the far
 * side costs one more row read on the index, totalCount one count, only when asked.
 * @param spec.time the row's time column the list is ordered by, and since/until bound.
 * @param spec.read reads the rows of a page, as {@link PageRead} says.
 * @param spec.count counts the rows a filter selects.
 * @returns the reader, which throws AppError BAD_USER_INPUT for a bad `first`, `last`, a cursor
 *   or the interval before anything is read.
 */
export function historyConnection<F extends HistoryFilter, C extends string, W, R extends Record<C, Date> & { id: IdOf<K> }, V, K extends IdKind = "bigint">(spec: {
  list: CursorList;
  idKind?: K;
  time: C;
  where: (filter: F) => W;
  read: (page: PageRead<C, W, IdOf<K>>) => Promise<R[]>;
  count: (where: ListWhere<C, W, IdOf<K>>) => Promise<number>;
  view: (row: R) => V;
}): HistoryConnection<F, V> {
  const { list, time } = spec;
  const idKind = (spec.idKind ?? "bigint") as K;
  return async (filter, args) => {
    // Every field of a filter input is optional: none given is no filter.
    const f = filter ?? ({} as F);
    const { cluster, node, since, until } = f;
    const { size, backward } = pageWindow(args);
    const after = args.after != null ? decodeCursor(list, idKind, args.after, "after") : null;
    const before = args.before != null ? decodeCursor(list, idKind, args.before, "before") : null;
    if (since != null && until != null && since.getTime() >= until.getTime()) {
      throw new AppError(ErrorCode.BAD_USER_INPUT, "filter.since must be before filter.until");
    }
    const selected: ListWhere<C, W, IdOf<K>> = { AND: [{ ...(cluster != null ? { cluster } : {}), ...(node != null ? { node } : {}) }, spec.where(f)] };
    if (since != null || until != null) selected.AND.push(on(time, { ...(since != null ? { gte: since } : {}), ...(until != null ? { lt: until } : {}) }));
    const where: ListWhere<C, W, IdOf<K>> = { AND: [...selected.AND] };
    if (after) where.AND.push(seek(time, after, "older"));
    if (before) where.AND.push(seek(time, before, "newer"));
    const direction = backward ? "asc" : "desc";
    // The cursor beyond the page's far end from where it is read, if any: whether rows lie past it.
    const beyond = backward ? before : after;
    const [rows, rowsBeyond] = await Promise.all([
      // One more than asked: whether it exists says there is more on the near side, without a count.
      spec.read({ where, orderBy: [{ [time]: direction } as Record<C, "desc" | "asc">, { id: direction }], take: size + 1 }),
      beyond
        ? spec.read({
            where: { AND: [...selected.AND, seek(time, beyond, backward ? "atOrOlder" : "atOrNewer")] },
            orderBy: [{ [time]: backward ? "desc" : "asc" } as Record<C, "desc" | "asc">, { id: backward ? "desc" : "asc" }],
            take: 1,
          })
        : Promise.resolve([]),
    ]);
    const shown = rows.slice(0, size);
    if (backward) shown.reverse();
    const edges = shown.map((row) => ({ cursor: encodeCursor(list, { at: row[time], id: row.id }), node: spec.view(row) }));
    const more = rows.length > size;
    const past = rowsBeyond.length > 0;
    return {
      edges,
      pageInfo: {
        hasNextPage: backward ? past : more,
        hasPreviousPage: backward ? more : past,
        startCursor: edges[0]?.cursor ?? null,
        endCursor: edges.at(-1)?.cursor ?? null,
      },
      totalCount: () => spec.count(selected),
    };
  };
}

/**
 * The rows on one side of a position, in the list's newest-first order. Written so the index
 * can seek: a range on its leading (time) column, and only the few rows that share the cursor's
 * time are then told apart by id. The plain row-value OR form would make PostgreSQL filter the
 * index from its top instead.
 */
function seek<C extends string, I extends RowId>(time: C, p: Position<I>, side: "older" | "newer" | "atOrOlder" | "atOrNewer"): SeekCondition<C, I> {
  const older = side === "older" || side === "atOrOlder";
  const id: IdRange<I> = side === "older" ? { lt: p.id } : side === "newer" ? { gt: p.id } : side === "atOrOlder" ? { lte: p.id } : { gte: p.id };
  return { ...on(time, older ? { lte: p.at } : { gte: p.at }), OR: [on(time, older ? { lt: p.at } : { gt: p.at }), { id }] };
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
  read: (filter: F | null | undefined, args: ConnectionArgs) => Promise<T>,
): (root: unknown, args: ConnectionArgs & { filter?: F | null }) => Promise<T> {
  return async (_root, args) => {
    await known(args.filter?.cluster);
    return read(args.filter, args);
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
export function loadForNode<V>(context: RequestContext, name: string, node: { cluster: string; name: string }, batch: (refs: readonly NodeRef[]) => Promise<V[][]>): Promise<V[]> {
  const loader = loaderFor(context, name, () => new DataLoader<NodeRef, V[], string>(batch, { cacheKeyFn: (ref) => `${ref.cluster}\u0000${ref.node}` }));
  return loader.load({ cluster: node.cluster, node: node.name });
}
