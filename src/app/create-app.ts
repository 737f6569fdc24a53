import type { AddressInfo } from "node:net";
import type { IncomingMessage, Server } from "node:http";
import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginLandingPageDisabled } from "@apollo/server/plugin/disabled";
import type { Config } from "../config/config.js";
import { openDatabase, type Database } from "../db/database.js";
import { migrate } from "../db/migrator.js";
import type { RequestContext } from "../graphql/context.js";
import { formatError } from "../graphql/errors.js";
import { graphqlHttpHandler } from "../graphql/http-handler.js";
import { legacyJsonStatusPlugin } from "../graphql/legacy-json-status-plugin.js";
import { buildSchema } from "../graphql/schema.js";
import { attachGraphqlWebSocket, type GraphqlWebSocketEndpoint } from "../graphql/websocket-server.js";
import { createHttpServer, requestIdOf } from "../http/http-server.js";
import { createLogger, type Logger } from "../log/logger.js";
import { serviceResolvers } from "./service-resolvers.js";

/** Parts a test (or an embedding program) may supply instead of having them built from config. */
export interface AppOverrides {
  logger?: Logger;
  /** An already-open database; the app migrates it but does not close it. */
  database?: Database;
}

export type AppState = "created" | "starting" | "started" | "stopping" | "stopped" | "failed";

export interface App {
  readonly state: AppState;
  /** http://host:port once started (with the real port when 0 was asked for). */
  readonly url: string;
  /** Opens the database, migrates it, starts GraphQL and listens. Rejects (and cleans up) on failure. */
  start(): Promise<void>;
  /** Stops intake, closes WebSockets with 1001, drains HTTP, disconnects the database. Idempotent. */
  stop(): Promise<void>;
}

/** How long in-flight HTTP requests get to finish on shutdown before their sockets are cut. */
const HTTP_DRAIN_MS = 3_000;

/**
 * The composition root: builds every dependency from `config` (or takes it from
 * `overrides`) and owns the order in which they start and stop.
 */
export function createApp(config: Config, overrides: AppOverrides = {}): App {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  let state: AppState = "created";
  let url = "";
  let database: Database | undefined;
  let apollo: ApolloServer<RequestContext> | undefined;
  let httpServer: Server | undefined;
  let webSocket: GraphqlWebSocketEndpoint | undefined;
  let stopping: Promise<void> | undefined;

  const contextFor = (req: IncomingMessage): RequestContext => {
    const requestId = requestIdOf(req);
    return { requestId, logger: logger.child({ requestId }) };
  };
  const reportUnexpected = (error: unknown) => logger.error({ err: error }, "unexpected error in a GraphQL operation");

  async function start(): Promise<void> {
    if (state !== "created") throw new Error(`cannot start an app that is ${state}`);
    state = "starting";
    try {
      const startedAt = new Date();
      database = overrides.database ?? (await openDatabase(config.database));
      logger.info({ database: database.description }, "database open");
      await database.withConnection((connection) => migrate(connection, logger));

      const schema = buildSchema([serviceResolvers(database, startedAt)]);
      apollo = new ApolloServer<RequestContext>({
        schema,
        formatError: (formatted, error) => formatError(formatted, error, reportUnexpected),
        includeStacktraceInErrorResponses: false,
        // Signals belong to the CLI, which stops the whole app in order (Apollo's own handler
        // would stop only Apollo, then kill the process again).
        stopOnTerminationSignals: false,
        plugins: [ApolloServerPluginLandingPageDisabled(), legacyJsonStatusPlugin()],
      });
      await apollo.start();

      const db = database;
      httpServer = createHttpServer(
        {
          graphql: graphqlHttpHandler(apollo, contextFor),
          readiness: async () => {
            const up = await db.ping();
            return { ready: up, checks: { database: up ? { ok: true } : { ok: false, detail: "not answering" } } };
          },
        },
        logger,
      );
      webSocket = attachGraphqlWebSocket({
        httpServer,
        path: "/graphql",
        schema,
        logger,
        contextFor,
        formatError: (error) => formatError(error.toJSON(), error, reportUnexpected),
      });
      await listen(httpServer, config.host, config.port);
      const { port } = httpServer.address() as AddressInfo;
      url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`;
      state = "started";
      logger.info({ url, graphql: `${url}/graphql`, ms: Date.now() - startedAt.getTime() }, "node-inventory ready");
    } catch (error) {
      state = "failed";
      await shutdown();
      throw error;
    }
  }

  /** Each step runs even if an earlier one failed, so nothing is left open. */
  async function shutdown(): Promise<void> {
    const steps: [string, () => Promise<unknown> | undefined][] = [
      ["websocket", () => webSocket?.close()],
      ["http", () => (httpServer?.listening ? closeHttp(httpServer) : undefined)],
      ["graphql", () => apollo?.stop()],
      ["database", () => (overrides.database ? undefined : database?.close())],
    ];
    for (const [name, step] of steps) {
      try {
        await step();
      } catch (error) {
        logger.warn({ err: error, step: name }, "shutdown step failed");
      }
    }
  }

  return {
    get state() {
      return state;
    },
    get url() {
      return url;
    },
    start,
    stop() {
      if (state === "created" || state === "stopped") return Promise.resolve();
      stopping ??= (async () => {
        state = "stopping";
        logger.info("shutting down");
        await shutdown();
        state = "stopped";
        logger.info("stopped");
      })();
      return stopping;
    },
  };
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/** Stops accepting, lets in-flight requests finish for a moment, then cuts what is left. */
function closeHttp(server: Server): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), HTTP_DRAIN_MS);
    server.close(() => (clearTimeout(force), resolve()));
    server.closeIdleConnections();
  });
}
