import { ApolloServerErrorCode } from "@apollo/server/errors";
import { GraphQLError, type GraphQLFormattedError } from "graphql";

/**
 * The `extensions.code` values clients see: the API contract's, and where the GraphQL ecosystem
 * has a word of its own for a case the contract calls BAD_USER_INPUT or FORBIDDEN, that word
 * (Apollo Server's request codes, which Apollo Client's and urql's persisted-query links and
 * most tooling look for, and RATE_LIMITED for a caller over its allowance, as public APIs say).
 */
export const ErrorCode = {
  UNAUTHENTICATED: "UNAUTHENTICATED",
  FORBIDDEN: "FORBIDDEN",
  NOT_FOUND: "NOT_FOUND",
  BAD_USER_INPUT: "BAD_USER_INPUT",
  CONFLICT: "CONFLICT",
  UNAVAILABLE: "UNAVAILABLE",
  INTERNAL_SERVER_ERROR: "INTERNAL_SERVER_ERROR",
  /** A document that is not GraphQL (a BAD_USER_INPUT in the contract's words). */
  GRAPHQL_PARSE_FAILED: "GRAPHQL_PARSE_FAILED",
  /** A document the schema refuses (a BAD_USER_INPUT in the contract's words). */
  GRAPHQL_VALIDATION_FAILED: "GRAPHQL_VALIDATION_FAILED",
  /** An automatic persisted query's hash this server does not hold yet: send the query with it. */
  PERSISTED_QUERY_NOT_FOUND: "PERSISTED_QUERY_NOT_FOUND",
  PERSISTED_QUERY_NOT_SUPPORTED: "PERSISTED_QUERY_NOT_SUPPORTED",
  /** Over a per-caller allowance (mutations a minute, operations at once, subscriptions): retry after `retryAfterSeconds`. */
  RATE_LIMITED: "RATE_LIMITED",
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const CONTRACT_CODES = new Set<string>(Object.values(ErrorCode));

/** True for the codes of the contract. */
export function isContractCode(code: unknown): code is ErrorCode {
  return typeof code === "string" && CONTRACT_CODES.has(code);
}

/** A failure the caller should see as is: its message is written for them and holds no secret. */
export class AppError extends GraphQLError {
  constructor(code: ErrorCode, message: string, extensions: Record<string, unknown> = {}) {
    super(message, { extensions: { ...extensions, code } });
    this.name = "AppError";
  }
}

/**
 * What each of Apollo's own codes means in the contract. A Record, so a code added to
 * Apollo's enum fails the build until it is mapped here.
 */
const FROM_APOLLO: Record<ApolloServerErrorCode, ErrorCode> = {
  [ApolloServerErrorCode.INTERNAL_SERVER_ERROR]: ErrorCode.INTERNAL_SERVER_ERROR,
  [ApolloServerErrorCode.GRAPHQL_PARSE_FAILED]: ErrorCode.GRAPHQL_PARSE_FAILED,
  [ApolloServerErrorCode.GRAPHQL_VALIDATION_FAILED]: ErrorCode.GRAPHQL_VALIDATION_FAILED,
  [ApolloServerErrorCode.PERSISTED_QUERY_NOT_FOUND]: ErrorCode.PERSISTED_QUERY_NOT_FOUND,
  [ApolloServerErrorCode.PERSISTED_QUERY_NOT_SUPPORTED]: ErrorCode.PERSISTED_QUERY_NOT_SUPPORTED,
  [ApolloServerErrorCode.BAD_USER_INPUT]: ErrorCode.BAD_USER_INPUT,
  [ApolloServerErrorCode.OPERATION_RESOLUTION_FAILURE]: ErrorCode.BAD_USER_INPUT,
  [ApolloServerErrorCode.BAD_REQUEST]: ErrorCode.BAD_USER_INPUT,
};

function apolloRequestError(original: unknown): boolean {
  if (!(original instanceof GraphQLError) || original.originalError !== undefined || original.extensions["code"] !== undefined) return false;
  const status = (original.extensions["http"] as { status?: unknown } | undefined)?.status;
  return typeof status === "number" && status >= 400 && status < 500;
}

/**
 * The longest error message a caller is sent: messages quote what was wrong, and a huge input
 * (a selector, a key, a name) must not come back whole.
 */
export const MAX_ERROR_MESSAGE_LENGTH = 1_000;

function bounded(message: string): string {
  return message.length <= MAX_ERROR_MESSAGE_LENGTH ? message : `${message.slice(0, MAX_ERROR_MESSAGE_LENGTH)}… (message cut: ${message.length} characters)`;
}

/**
 * The one error formatter for HTTP and WebSocket. Never throws. Errors we raised on purpose
 * and GraphQL's own request errors pass with a contract code; anything else is an internal
 * error whose message is replaced, so no stack, SQL or credential leaks. `report` receives
 * those unexpected errors for logging.
 */
export function formatError(
  formatted: GraphQLFormattedError,
  original: unknown,
  report: (error: unknown) => void = () => {},
): GraphQLFormattedError {
  // Apollo sets INTERNAL_SERVER_ERROR on a request error it raised without a code but with a
  // 4xx status of its own (an APQ hash that does not match the query): the caller's error.
  const given = apolloRequestError(original) ? ErrorCode.BAD_USER_INPUT : formatted.extensions?.code;
  const cause = original instanceof GraphQLError ? (original.originalError ?? original) : original;
  const code =
    isContractCode(given)
      ? given
      : typeof given === "string" && given in FROM_APOLLO
        ? FROM_APOLLO[given as ApolloServerErrorCode]
        : // GraphQL's own request errors (syntax, validation, variable coercion) wrap nothing.
          original instanceof GraphQLError && original.originalError === undefined
          ? ErrorCode.BAD_USER_INPUT
          : ErrorCode.INTERNAL_SERVER_ERROR;
  if (code === ErrorCode.INTERNAL_SERVER_ERROR && !(cause instanceof AppError)) {
    report(cause);
    return {
      message: "Internal server error",
      ...(formatted.path ? { path: formatted.path } : {}),
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      extensions: { code },
    };
  }
  const { stacktrace: _stack, http: _http, ...extensions } = formatted.extensions ?? {};
  return { ...formatted, message: bounded(formatted.message), extensions: { ...extensions, code } };
}
