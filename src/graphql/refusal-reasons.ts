/** Why an operation was refused, in `extensions.reason`: every reason the service gives, in one place (like close-codes.ts). */
export const RefusalReason = {
  QUERY_TOO_DEEP: "QUERY_TOO_DEEP",
  QUERY_TOO_COSTLY: "QUERY_TOO_COSTLY",
  /** Too many fragment spreads, or more field selections than a document could spell out. */
  QUERY_TOO_COMPLEX: "QUERY_TOO_COMPLEX",
  RATE_LIMITED: "RATE_LIMITED",
  /** The caller has as many operations running as it may (HTTP 429). */
  TOO_MANY_IN_FLIGHT: "TOO_MANY_IN_FLIGHT",
  /** The service has as many operations running as it takes (HTTP 503). */
  SERVER_BUSY: "SERVER_BUSY",
  /** A connection or caller holds as many subscriptions as it may. */
  TOO_MANY_SUBSCRIPTIONS: "TOO_MANY_SUBSCRIPTIONS",
} as const;
export type RefusalReason = (typeof RefusalReason)[keyof typeof RefusalReason];
