/**
 * What the GraphQL transports (HTTP and WebSocket) need to know of authentication and of the
 * per-operation policy: the caller, the answer to "who is this?", and the hook every operation
 * passes. Defined here, on the transports' side, and implemented by src/auth, so auth depends
 * on graphql and never the other way round.
 */

import type { DocumentNode, GraphQLFormattedError, GraphQLSchema, OperationDefinitionNode } from "graphql";
import type { Principal, RequestContext } from "./context.js";
import type { ErrorCode } from "./errors.js";

export type { Principal, Role } from "./context.js";

/** Who is calling, or why they may not: `message` is for the caller, `reason` only for the log. */
export type Authentication =
  | { ok: true; principal: Principal /** epoch ms after which the credential is no longer good */; expiresAt?: number }
  | {
      ok: false;
      code: typeof ErrorCode.UNAUTHENTICATED | typeof ErrorCode.FORBIDDEN | typeof ErrorCode.UNAVAILABLE;
      message: string;
      /** A credential was presented (and was bad), as opposed to none at all. */
      presented: boolean;
    };

/** An operation about to run, from either transport. */
export interface OperationRequest {
  context: RequestContext;
  schema: GraphQLSchema;
  document: DocumentNode;
  operation: OperationDefinitionNode;
  variables: Record<string, unknown> | undefined;
  transport: "http" | "websocket";
}

/** Writes a mutation's audit line once its outcome is known (its errors, formatted or not). */
export type AuditDone = (errors: readonly Pick<GraphQLFormattedError, "extensions">[] | undefined) => void;

export interface OperationPolicy {
  /**
   * Lets the operation run or throws the AppError that refuses it. For a mutation it returns
   * the function that writes its audit line; a refused mutation's line is already written.
   */
  admit(request: OperationRequest): Promise<AuditDone | undefined>;
}
