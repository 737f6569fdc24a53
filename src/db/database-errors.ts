import { AppError, ErrorCode } from "../graphql/errors.js";
import type { Logger } from "../log/logger.js";

/**
 * The one mapping of database failures to what a caller sees. Only a failure to reach or
 * keep the database is UNAVAILABLE (an outage: try again later); any other database error is
 * a bug or bad data, which must not pass for an outage: it goes on as it is, and the GraphQL
 * formatter answers INTERNAL_SERVER_ERROR and logs it with its detail.
 *
 * | seen as | examples | becomes |
 * |---|---|---|
 * | Prisma connection codes | P1001 can't reach, P1002/P1008 timed out, P1017 server closed the connection, P2024 no pooled connection in time | UNAVAILABLE |
 * | driver adapter kinds | DatabaseNotReachable, ConnectionClosed, SocketTimeout, TlsConnectionError, TooManyConnections, DatabaseDoesNotExist, DatabaseAccessDenied, AuthenticationFailed | UNAVAILABLE |
 * | PostgreSQL SQLSTATE | class 08 (connection exception), 57P01-57P03 (shut down, cannot connect now), 53300 (too many connections), any FATAL or PANIC (the session is gone) | UNAVAILABLE |
 * | socket errors | ECONNREFUSED, ECONNRESET, ETIMEDOUT, ENOTFOUND, EPIPE, EHOSTUNREACH, ENETUNREACH, EAI_AGAIN | UNAVAILABLE |
 * | a closed client | pg: "Connection terminated", "Cannot use a pool after calling end"; "PGlite is closed" | UNAVAILABLE |
 * | anything else | 22021 invalid byte sequence, 22003 out of range, 42P01 no such table, a Prisma validation error | unchanged: INTERNAL_SERVER_ERROR, logged |
 */

const PRISMA_CONNECTION_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);
const ADAPTER_CONNECTION_KINDS = new Set([
  "DatabaseNotReachable",
  "ConnectionClosed",
  "SocketTimeout",
  "TlsConnectionError",
  "TooManyConnections",
  "DatabaseDoesNotExist",
  "DatabaseAccessDenied",
  "AuthenticationFailed",
]);
const SQLSTATE_CONNECTION = new Set(["57P01", "57P02", "57P03", "53300"]);
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);
const CLOSED_CLIENT = /Connection terminated|Cannot use a pool after calling end|Client has encountered a connection error|timeout exceeded when trying to connect|PGlite is closed/i;

interface ErrorShape {
  code?: unknown;
  severity?: unknown;
  kind?: unknown;
  message?: unknown;
  meta?: { driverAdapterError?: { cause?: ErrorShape } };
  cause?: unknown;
  errors?: unknown[];
}

/** True when `error` (or what it wraps) says the database could not be reached or the connection was lost. */
export function isConnectionFailure(error: unknown, depth = 0): boolean {
  if (typeof error !== "object" || error === null || depth > 5) return false;
  const e = error as ErrorShape;
  const code = typeof e.code === "string" ? e.code : undefined;
  if (code && (PRISMA_CONNECTION_CODES.has(code) || SOCKET_CODES.has(code) || SQLSTATE_CONNECTION.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
  if (typeof e.kind === "string") {
    if (ADAPTER_CONNECTION_KINDS.has(e.kind)) return true;
    if (e.kind === "postgres" && typeof e.code === "string" && (SQLSTATE_CONNECTION.has(e.code) || e.code.startsWith("08"))) return true;
  }
  if (e.severity === "FATAL" || e.severity === "PANIC") return true;
  if (typeof e.message === "string" && CLOSED_CLIENT.test(e.message)) return true;
  const adapterCause = e.meta?.driverAdapterError?.cause;
  if (adapterCause && isConnectionFailure(adapterCause, depth + 1)) return true;
  if (e.cause !== undefined && isConnectionFailure(e.cause, depth + 1)) return true;
  // An AggregateError (pg tries IPv4 and IPv6) fails to connect when each attempt did.
  return Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every((inner) => isConnectionFailure(inner, depth + 1));
}

/**
 * What a caller's request that failed on the database throws: an AppError as it is, a
 * connection failure as UNAVAILABLE `unavailable` (the cause goes to `logger` at warn, since
 * the caller never sees it), anything else unchanged, for the formatter to answer
 * INTERNAL_SERVER_ERROR and log with its detail.
 */
export function callerDatabaseError(error: unknown, unavailable: string, logger?: Logger): unknown {
  if (error instanceof AppError) return error;
  if (!isConnectionFailure(error)) return error;
  logger?.warn({ err: error }, unavailable);
  return new AppError(ErrorCode.UNAVAILABLE, unavailable);
}

/** Runs a caller's database read or write and maps its failure with {@link callerDatabaseError}. */
export async function forCaller<T>(run: () => Promise<T>, unavailable: string, logger?: Logger): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw callerDatabaseError(error, unavailable, logger);
  }
}

/** Prisma's codes for a value the database would not take (too long, out of range, a constraint). */
const PRISMA_CONTENT_CODES = new Set(["P2000", "P2003", "P2004", "P2005", "P2006", "P2007", "P2011", "P2019", "P2020", "P2023", "P2033"]);
const ADAPTER_CONTENT_KINDS = new Set(["LengthMismatch", "ValueOutOfRange", "InvalidInputValue", "NullConstraintViolation", "ForeignKeyConstraintViolation", "UniqueConstraintViolation"]);

/**
 * True when the database refused a statement for the values in it rather than for anything
 * about the connection or the schema: SQLSTATE class 22 (data exception: 22021 a NUL byte,
 * 22P05 a NUL in JSON, 22003 out of range) or 23 (a constraint). Writing the same values
 * again will fail the same way, so a writer must set them aside rather than retry.
 */
export function isContentRefusal(error: unknown, depth = 0): boolean {
  if (typeof error !== "object" || error === null || depth > 5 || isConnectionFailure(error)) return false;
  const e = error as ErrorShape & { originalCode?: unknown };
  const sqlstate = typeof e.originalCode === "string" ? e.originalCode : e.kind === "postgres" || typeof e.severity === "string" ? e.code : undefined;
  if (typeof sqlstate === "string" && /^2[23][0-9A-Z]{3}$/.test(sqlstate)) return true;
  if (typeof e.kind === "string" && ADAPTER_CONTENT_KINDS.has(e.kind)) return true;
  if (typeof e.code === "string" && PRISMA_CONTENT_CODES.has(e.code)) return true;
  const adapterCause = e.meta?.driverAdapterError?.cause;
  if (adapterCause && isContentRefusal(adapterCause, depth + 1)) return true;
  return e.cause !== undefined && isContentRefusal(e.cause, depth + 1);
}

/**
 * True when the database could not write for want of disk space: SQLSTATE 53100 (disk full),
 * or the operating system's ENOSPC in its words (PGlite's file system layer says only that).
 */
export function isDiskFull(error: unknown, depth = 0): boolean {
  if (typeof error !== "object" || error === null || depth > 5) return false;
  const e = error as ErrorShape & { originalCode?: unknown };
  if (e.originalCode === "53100" || e.code === "53100") return true;
  if (typeof e.message === "string" && /No space left on device|ENOSPC|`53100`/.test(e.message)) return true;
  const adapterCause = e.meta?.driverAdapterError?.cause;
  if (adapterCause && isDiskFull(adapterCause, depth + 1)) return true;
  return e.cause !== undefined && isDiskFull(e.cause, depth + 1);
}
