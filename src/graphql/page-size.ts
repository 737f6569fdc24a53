/**
 * `first` of the API's lists, checked once for every list: the live inventory's keyset pages
 * and the history's connections both take it, and neither depends on the other for it.
 */

import { AppError, ErrorCode } from "./errors.js";

/** Page size used when `first` is omitted. */
export const DEFAULT_PAGE_SIZE = 100;
/** The largest `first` a client may ask for. */
export const MAX_PAGE_SIZE = 5000;

/**
 * Validates `first`: omitted means `fallback`; 0 is allowed (only counts).
 * @throws AppError BAD_USER_INPUT when negative or above `max`.
 */
export function pageSize(first: number | null | undefined, max = MAX_PAGE_SIZE, fallback = DEFAULT_PAGE_SIZE): number {
  if (first == null) return fallback;
  if (!Number.isInteger(first) || first < 0) {
    throw new AppError(ErrorCode.BAD_USER_INPUT, `first: must be zero or more, got ${first}`);
  }
  if (first > max) {
    throw new AppError(ErrorCode.BAD_USER_INPUT, `first: must be at most ${max}, got ${first}`);
  }
  return first;
}
