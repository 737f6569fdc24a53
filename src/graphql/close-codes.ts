import { CloseCode as GraphqlWsCloseCode } from "graphql-ws";

/**
 * Every code the server closes a WebSocket with, one name each: RFC 6455's own and the
 * graphql-ws protocol's (which its clients act on), so no code is spelled twice.
 */
export const CloseCode = {
  /** 1001 (RFC 6455 "Going Away"): the server is shutting down. */
  GoingAway: 1001,
  /**
   * 1013 (RFC 6455 "Try Again Later"): credentials could not be checked just now, or a
   * subscriber fell too far behind; reconnecting later may work.
   */
  TryAgainLater: 1013,
  /** 4401: no or expired credentials (graphql-ws). */
  Unauthorized: GraphqlWsCloseCode.Unauthorized,
  /** 4403: the credentials do not allow this (graphql-ws). */
  Forbidden: GraphqlWsCloseCode.Forbidden,
  /** 4429 (graphql-ws, which its clients do not retry): the caller already holds as many connections as allowed. */
  TooManyConnections: GraphqlWsCloseCode.TooManyInitialisationRequests,
  /** 4500: the server failed handling a message (graphql-ws). */
  InternalServerError: GraphqlWsCloseCode.InternalServerError,
} as const;
export type CloseCode = (typeof CloseCode)[keyof typeof CloseCode];
