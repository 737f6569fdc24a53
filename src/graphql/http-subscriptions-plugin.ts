import { HeaderMap, type ApolloServerPlugin } from "@apollo/server";
import type { RequestContext } from "./context.js";
import { AppError, ErrorCode } from "./errors.js";

/**
 * A subscription sent over HTTP: Apollo would execute it as a query, and a subscription
 * field has no query resolver, so the caller got INTERNAL_SERVER_ERROR. It is a request for
 * the other transport: 400 BAD_USER_INPUT saying where subscriptions are served.
 */
export function subscriptionsOverWebSocketOnlyPlugin(): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation }) {
          if (operation?.operation !== "subscription") return;
          throw new AppError(ErrorCode.BAD_USER_INPUT, "subscriptions are served over graphql-ws (protocol graphql-transport-ws) on ws://…/graphql, not over HTTP", {
            http: { status: 400, headers: new HeaderMap() },
          });
        },
      };
    },
  };
}
