/**
 * Keyset cursor pagination over an already sorted list.
 *
 * A cursor names a position by the sort key of the last item seen, not by an index, so the next
 * page starts strictly after that key even when items were added or removed in between: nothing
 * is skipped or repeated because the list shifted. Keys end in (cluster, name), which is unique,
 * so the order is total and every key has exactly one place.
 */

import { AppError, ErrorCode } from "../graphql/errors.js";
import type { OrderDirection } from "../graphql/generated/resolvers-types.js";
import { decodeOpaqueCursor, encodeOpaqueCursor } from "../graphql/opaque-cursor.js";
import { pageWindow, type ConnectionArgs } from "../graphql/page-size.js";

/** Which ordering a list is sorted by; a cursor is only valid for the ordering that made it. */
export interface OrderSpec {
  field: string;
  direction: OrderDirection;
}

/**
 * A position in an ordering: the primary value (a string, a number, or null when the item has no
 * value, e.g. no metrics sample), then cluster and name.
 */
export type SortKey = readonly [primary: string | number | null, cluster: string, name: string];

function compareValues(a: string | number, b: string | number): number {
  // Code-unit order for strings (not localeCompare): deterministic, and what binary search needs.
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The total order behind every sorted list and cursor: the primary value in `direction`, items
 * without one last in both directions, then cluster and name ascending in both directions.
 */
export function compareSortKeys(a: SortKey, b: SortKey, direction: OrderDirection): number {
  const [pa, ca, na] = a;
  const [pb, cb, nb] = b;
  if (pa !== pb) {
    if (pa === null) return 1;
    if (pb === null) return -1;
    const c = compareValues(pa, pb);
    if (c !== 0) return direction === "DESC" ? -c : c;
  }
  return compareValues(ca, cb) || compareValues(na, nb);
}

/** One page of a connection, shaped as the contract's XConnection types. */
export interface Page<T> {
  edges: { cursor: string; node: T }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  totalCount: number;
}

interface CursorPayload {
  f: string;
  d: OrderDirection;
  k: SortKey;
}

/** An opaque cursor: base64url of {f: field, d: direction, k: key}. */
export function encodeCursor(order: OrderSpec, key: SortKey): string {
  const payload: CursorPayload = { f: order.field, d: order.direction, k: key };
  return encodeOpaqueCursor(payload);
}

const notACursor = (argument: string) => `${argument}: not a cursor of this ordering`;

/**
 * Decodes a cursor made by {@link encodeCursor} for this same ordering.
 * @param argument the argument it came in (`after` or `before`), for the error message.
 * @throws AppError BAD_USER_INPUT for garbage, or a cursor of another field or direction.
 */
export function decodeCursor(cursor: string, order: OrderSpec, argument = "after"): SortKey {
  const NOT_A_CURSOR = notACursor(argument);
  const p = decodeOpaqueCursor(cursor, NOT_A_CURSOR) as Partial<CursorPayload> | null;
  if (
    typeof p !== "object" ||
    p === null ||
    p.f !== order.field ||
    p.d !== order.direction ||
    !Array.isArray(p.k) ||
    p.k.length !== 3 ||
    !isPrimary(p.k[0]) ||
    typeof p.k[1] !== "string" ||
    typeof p.k[2] !== "string"
  ) {
    throw new AppError(ErrorCode.BAD_USER_INPUT, NOT_A_CURSOR);
  }
  return [p.k[0], p.k[1], p.k[2]];
}

function isPrimary(v: unknown): v is string | number | null {
  return v === null || typeof v === "string" || (typeof v === "number" && Number.isFinite(v));
}

/**
 * An edge whose key is taken with the page (so its cursor names the place the item was sorted
 * at) and encoded only when asked for: the fleet's answer of 5,000 nodes rarely asks for cursors.
 */
class Edge<T> {
  private encoded: string | undefined;

  constructor(
    readonly node: T,
    private readonly key: SortKey,
    private readonly order: OrderSpec,
  ) {}

  get cursor(): string {
    return (this.encoded ??= encodeCursor(this.order, this.key));
  }
}

/**
 * One page of `sorted` (sorted by `order` with {@link compareSortKeys} over `keyOf`), as the
 * Relay Cursor Connections spec reads its arguments: the items strictly between the `after` and
 * `before` cursors, then the first `first` of them, or the last `last`. A cursor's position is
 * found by binary search, so a page costs O(log n + size). totalCount is the length of the whole
 * list; hasPreviousPage and hasNextPage say whether items lie before and after the page in the
 * whole list, whichever way it was paged.
 *
 * `order` is passed explicitly (not read off the items) so a cursor of another ordering is refused
 * even when the list is empty.
 * @throws AppError BAD_USER_INPUT for a bad `first`, `last`, `after` or `before`.
 */
export function paginate<T>(sorted: readonly T[], keyOf: (item: T) => SortKey, args: ConnectionArgs, order: OrderSpec): Page<T> {
  const { size, backward } = pageWindow(args);
  const sample = sorted.length > 0 ? keyOf(sorted[0]!)[0] : null;
  // Where the items strictly after an `after` cursor begin, or those strictly before a `before` end.
  const boundary = (cursor: string, argument: string): number => {
    const key = decodeCursor(cursor, order, argument);
    // A cursor's primary value has the type of this ordering's values (a name is a string, a count
    // a number): one that does not was tampered with, and comparing across types means nothing.
    if (sample !== null && key[0] !== null && typeof key[0] !== typeof sample) {
      throw new AppError(ErrorCode.BAD_USER_INPUT, notACursor(argument));
    }
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareSortKeys(keyOf(sorted[mid]!), key, order.direction);
      if (c < 0 || (c === 0 && argument === "after")) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  // [low, high): the items strictly after `after` and strictly before `before`.
  const low = args.after != null ? boundary(args.after, "after") : 0;
  const high = Math.max(low, args.before != null ? boundary(args.before, "before") : sorted.length);
  const start = backward ? Math.max(low, high - size) : low;
  const end = backward ? high : Math.min(high, low + size);
  const edges: { cursor: string; node: T }[] = [];
  for (let i = start; i < end; i++) {
    const node = sorted[i]!;
    edges.push(new Edge(node, keyOf(node), order));
  }
  return {
    edges,
    pageInfo: {
      hasNextPage: end < sorted.length,
      hasPreviousPage: start > 0,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
    totalCount: sorted.length,
  };
}
