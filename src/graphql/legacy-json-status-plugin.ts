import type { ApolloServerPlugin } from "@apollo/server";

const GRAPHQL_RESPONSE_JSON = "application/graphql-response+json";

/**
 * GraphQL over HTTP: a client that does not accept application/graphql-response+json gets
 * application/json, and for such legacy clients a GraphQL request error (syntax, validation,
 * variable coercion) must still be a 200, or many of them never read the errors. Apollo
 * answers 400 regardless; this restores the spec's behaviour. Malformed HTTP requests
 * (no body, wrong parameter types) never reach plugins and stay 400.
 */
export function legacyJsonStatusPlugin<T extends object>(): ApolloServerPlugin<T> {
  return {
    async requestDidStart({ request }) {
      const accept = request.http?.headers.get("accept") ?? "";
      // Without a query string it is not a GraphQL request at all: an HTTP 400 is right.
      if (accept.includes(GRAPHQL_RESPONSE_JSON) || typeof request.query !== "string" || request.query === "") return;
      return {
        async willSendResponse({ response }) {
          if (response.http.status === 400) response.http.status = 200;
        },
      };
    },
  };
}
