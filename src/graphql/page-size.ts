/**
 * `first` and `last` of the API's lists, checked once for every list: the live inventory's keyset
 * pages and the history's connections both take them, and neither depends on the other for it.
 */

import { AppError, ErrorCode } from "./errors.js";

/** Page size used when neither `first` nor `last` is given. */
export const DEFAULT_PAGE_SIZE = 100;
/** The largest `first` or `last` a client may ask for. */
export const MAX_PAGE_SIZE = 5000;

/**
 * Validates a page size argument (`first` unless `name` says otherwise): omitted means
 * `fallback`; 0 is allowed (only counts).
 * @throws AppError BAD_USER_INPUT when negative or above `max`.
 */
export function pageSize(first: number | null | undefined, max = MAX_PAGE_SIZE, fallback = DEFAULT_PAGE_SIZE, name = "first"): number {
  if (first == null) return fallback;
  if (!Number.isInteger(first) || first < 0) {
    throw new AppError(ErrorCode.BAD_USER_INPUT, `${name}: must be zero or more, got ${first}`);
  }
  if (first > max) {
    throw new AppError(ErrorCode.BAD_USER_INPUT, `${name}: must be at most ${max}, got ${first}`);
  }
  return first;
}

/** The Relay connection arguments every connection takes. */
export interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

/** How many items a page takes and from which end: `last` counts back from `before` (or the end). */
export interface PageWindow {
  size: number;
  backward: boolean;
}

/**
 * The size and direction of a page, as the Relay Cursor Connections spec reads `first` and
 * `last`. Both at once is refused, as GitHub's API refuses it: the spec allows it but no client
 * needs it, and its answer (the last `last` of the first `first`) surprises everyone.
 * @throws AppError BAD_USER_INPUT for both, or for a bad size.
 */
export function pageWindow(args: ConnectionArgs): PageWindow {
  if (args.first != null && args.last != null) {
    throw new AppError(ErrorCode.BAD_USER_INPUT, "first and last: give one of them, not both");
  }
  if (args.last != null) return { size: pageSize(args.last, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE, "last"), backward: true };
  return { size: pageSize(args.first), backward: false };
}
