import type { GraphQLFormattedError } from "graphql";
import { ErrorCode, isContractCode } from "../graphql/errors.js";

/** Variable names whose values never reach the log. */
const SECRET_NAME = /token|password|passwd|secret|authorization|credential|api[-_]?key|private[-_]?key/i;

/** Characters of a string, items of a list, properties of an object and levels kept in an audit line. */
export const AUDIT_BOUNDS = { chars: 256, items: 20, properties: 40, depth: 6 } as const;

/**
 * A copy of `value` fit for an audit line: every property named like a secret replaced, and
 * bounded, so a caller's 1 MB variable costs the log a few hundred bytes: a long string keeps
 * its start and says its length, a long list or object its first entries and how many more,
 * and nesting past {@link AUDIT_BOUNDS}.depth is cut (never recursing further, whatever the input).
 */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (typeof value === "string") {
    return value.length > AUDIT_BOUNDS.chars ? `${value.slice(0, AUDIT_BOUNDS.chars)}… [${value.length} characters, truncated]` : value;
  }
  if (typeof value !== "object" || value === null) return value;
  if (depth >= AUDIT_BOUNDS.depth) return "[nested deeper, truncated]";
  if (Array.isArray(value)) {
    const kept = value.slice(0, AUDIT_BOUNDS.items).map((item) => redactSecrets(item, depth + 1));
    return value.length > AUDIT_BOUNDS.items ? [...kept, `[${value.length - AUDIT_BOUNDS.items} more items, truncated]`] : kept;
  }
  const entries = Object.entries(value);
  const kept = entries.slice(0, AUDIT_BOUNDS.properties).map(([key, inner]) => [redactSecrets(key), SECRET_NAME.test(key) ? "[redacted]" : redactSecrets(inner, depth + 1)]);
  if (entries.length > AUDIT_BOUNDS.properties) kept.push(["[truncated]", `${entries.length - AUDIT_BOUNDS.properties} more properties`]);
  return Object.fromEntries(kept);
}

/** `ok`, or the contract code of the first error (an error without one is an internal error). */
export function outcomeOf(errors: readonly Pick<GraphQLFormattedError, "extensions">[] | undefined): string {
  if (!errors?.length) return "ok";
  const code = errors[0]!.extensions?.["code"];
  return isContractCode(code) ? code : ErrorCode.INTERNAL_SERVER_ERROR;
}
