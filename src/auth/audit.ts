import type { GraphQLFormattedError } from "graphql";
import { ErrorCode, isContractCode } from "../graphql/errors.js";

/** Variable names whose values never reach the log. */
const SECRET_NAME = /token|password|passwd|secret|authorization|credential|api[-_]?key|private[-_]?key/i;

/** A copy of `value` with every property named like a secret replaced, at any depth. */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [key, SECRET_NAME.test(key) ? "[redacted]" : redactSecrets(inner)]),
  );
}

/** `ok`, or the contract code of the first error (an error without one is an internal error). */
export function outcomeOf(errors: readonly Pick<GraphQLFormattedError, "extensions">[] | undefined): string {
  if (!errors?.length) return "ok";
  const code = errors[0]!.extensions?.["code"];
  return isContractCode(code) ? code : ErrorCode.INTERNAL_SERVER_ERROR;
}
