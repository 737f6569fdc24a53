import type { ApolloServerOptions, ApolloServerPlugin } from "@apollo/server";
import type { GatewayInterface } from "@apollo/server-gateway-interface";
import type { GraphQLSchema } from "graphql";
import type { Logger } from "../log/logger.js";
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from "@apollo/server/plugin/disabled";
import type { RequestContext } from "./context.js";
import { formatError } from "./errors.js";
import { subscriptionsOverWebSocketOnlyPlugin } from "./http-subscriptions-plugin.js";
import { MAX_DOCUMENT_TOKENS } from "./operation-limits.js";

/**
 * Apollo's CSRF prevention, with the Authorization header among the headers that prove a
 * request is no browser's simple request: a page on another origin cannot send one without a
 * preflight, so a GET that carries a bearer token (urql's default, which sends no content type)
 * is served; one with neither that nor a non-simple content type is still refused.
 */
const CSRF_PREVENTION = { requestHeaders: ["x-apollo-operation-name", "apollo-require-preflight", "authorization"] };

/** The rules every Apollo server of the app follows (/graphql and /subgraph alike). */
export interface ApolloRules {
  logger: Logger;
  /** Logs an unexpected error once, for the error formatter. */
  reportUnexpected: (error: unknown) => void;
  /** Role, depth and cost (auth/authorisation-plugin.ts): a new plugin for each server. */
  authorisation: () => ApolloServerPlugin<RequestContext>;
  /** Operation counts and durations (observability/metrics.ts): a new plugin for each server. */
  metrics: () => ApolloServerPlugin<RequestContext>;
  introspection: boolean;
}

/** What varies between the servers: their schema or gateway, their own plugins (placed before the shared rules), a few options. */
export type ApolloSpecifics = ({ gateway: GatewayInterface } | { schema: GraphQLSchema }) & {
  plugins?: ApolloServerPlugin<RequestContext>[];
} & Pick<ApolloServerOptions<RequestContext>, "stringifyResult" | "validationRules">;

/**
 * The options of one Apollo server, built the same way for each, so /graphql and /subgraph
 * cannot drift apart in error formatting, parse limits, CSRF, policy or introspection.
 */
export function apolloOptions(rules: ApolloRules, specifics: ApolloSpecifics): ApolloServerOptions<RequestContext> {
  const { plugins = [], ...rest } = specifics;
  return {
    formatError: (formatted, error) => formatError(formatted, error, rules.reportUnexpected),
    includeStacktraceInErrorResponses: false,
    // On by default; said here because the local admin of a server without auth depends on it.
    csrfPrevention: CSRF_PREVENTION,
    // Apollo's own lines as our JSON lines, not console text.
    logger: rules.logger,
    parseOptions: { maxTokens: MAX_DOCUMENT_TOKENS },
    // Signals belong to the CLI, which stops the whole app in order (Apollo's own handler
    // would stop only Apollo, then kill the process again).
    stopOnTerminationSignals: false,
    // Cache control hooks every field resolution; nothing here is HTTP-cacheable anyway.
    plugins: [ApolloServerPluginLandingPageDisabled(), ApolloServerPluginCacheControlDisabled(), ...plugins, subscriptionsOverWebSocketOnlyPlugin(), rules.authorisation(), rules.metrics()],
    // Said outright: Apollo's default turns it off when NODE_ENV is production.
    introspection: rules.introspection,
    ...rest,
  };
}
