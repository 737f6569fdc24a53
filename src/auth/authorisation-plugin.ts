import { HeaderMap, type ApolloServerPlugin } from "@apollo/server";
import type { RequestContext } from "../graphql/context.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import { RefusalReason, type AuditDone, type OperationPolicy } from "./operation-policy.js";

/**
 * The operation policy on Apollo Server (HTTP): checked once the operation is known and
 * before any resolver runs; a mutation's audit line is written with the response.
 */
export function authorisationPlugin(policy: OperationPolicy): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      let audit: AuditDone | undefined;
      return {
        async didResolveOperation({ contextValue, schema, document, operation, request }) {
          // Without an operation Apollo answers with an error and runs nothing.
          if (!operation) return;
          try {
            audit = await policy.admit({ context: contextValue, schema, document, operation, variables: request.variables, transport: "http" });
          } catch (error) {
            throw withHttpStatus(error);
          }
        },
        async willSendResponse({ response }) {
          audit?.(response.body.kind === "single" ? response.body.singleResult.errors : response.body.initialResult.errors);
        },
      };
    },
  };
}

/** The HTTP status of a refusal: 401, 403, 429 with Retry-After, 400. */
function withHttpStatus(error: unknown): unknown {
  if (!(error instanceof AppError)) return error;
  const { code, reason, retryAfterSeconds } = error.extensions;
  const headers = new HeaderMap();
  let status = 400;
  if (code === ErrorCode.UNAUTHENTICATED) status = 401;
  else if (code === ErrorCode.RATE_LIMITED || reason === RefusalReason.RATE_LIMITED) {
    status = 429;
    headers.set("retry-after", String(retryAfterSeconds));
  } else if (code === ErrorCode.FORBIDDEN) status = 403;
  return new AppError(code as ErrorCode, error.message, { ...error.extensions, http: { status, headers } });
}
