import type { AddressInfo } from "node:net";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from "@apollo/server/plugin/disabled";
import { bearerToken, connectionToken, createAuthenticator, credentialsOf, type AuthTuning } from "../auth/authenticator.js";
import { authorisationPlugin } from "../auth/authorisation-plugin.js";
import { createOperationPolicy } from "../auth/operation-policy.js";
import { localLimiter, SharedRateLimiter, type MutationLimiter } from "../auth/shared-rate-limiter.js";
import type { Principal } from "../auth/principal.js";
import { whoamiResolvers } from "../auth/whoami-resolvers.js";
import { rateLimitResolvers } from "../auth/rate-limit-resolvers.js";
import { ClusterRegistry, type ClusterTuning } from "../cluster/cluster-registry.js";
import { historyClusterCheck } from "../cluster/unknown-cluster.js";
import { planClusters, sourceFromKubeconfigText, type ClusterPlan, type ClusterSource } from "../cluster/cluster-sources.js";
import type { Config } from "../config/config.js";
import { openDatabase, type Database } from "../db/database.js";
import { migrate } from "../db/migrator.js";
import { requestOf, type RequestContext } from "../graphql/context.js";
import { formatError } from "../graphql/errors.js";
import { compiledExecutorGateway } from "../graphql/executor.js";
import { graphqlHttpHandler } from "../graphql/http-handler.js";
import { PrerenderedAnswers } from "../graphql/prerendered-json.js";
import { nodeAnswerFragments } from "../inventory/node-answer-fragments.js";
import { InFlightLimiter } from "../graphql/in-flight.js";
import { legacyJsonStatusPlugin } from "../graphql/legacy-json-status-plugin.js";
import { UnexpectedErrors } from "../graphql/unexpected-errors.js";
import { subscriptionsOverWebSocketOnlyPlugin } from "../graphql/http-subscriptions-plugin.js";
import { MAX_DOCUMENT_TOKENS } from "../graphql/operation-limits.js";
import { buildSchema } from "../graphql/schema.js";
import { attachGraphqlWebSocket, type GraphqlWebSocketEndpoint } from "../graphql/websocket-server.js";
import { bindHttpPort, createHttpServer, requestIdOf, type Readiness } from "../http/http-server.js";
import { createPages } from "../http/pages.js";
import { readInstallationId, historyLeaseName } from "../history/installation.js";
import { HistoryQueries } from "../history/history-queries.js";
import { historyQueryResolvers } from "../history/history-resolvers.js";
import { NodeChangeQueries } from "../history/node-change-queries.js";
import { nodeChangeResolvers } from "../history/node-change-resolvers.js";
import { HistoryRecorder } from "../history/history-recorder.js";
import { HistoryRetention } from "../history/history-retention.js";
import { NodeEventsRecorder } from "../history/node-events-recorder.js";
import { nodeEventsResolvers } from "../history/node-events-resolvers.js";
import { NodeEventsStore } from "../history/node-events-store.js";
import { HistoryStore } from "../history/history-store.js";
import { InventoryService } from "../inventory/inventory-service.js";
import { PostgresPubSub } from "../pubsub/postgres-pubsub.js";
import { InProcessPubSub, type PubSub } from "../pubsub/pubsub.js";
import { AvailabilityQueries } from "../reports/availability-queries.js";
import { availabilityResolvers } from "../reports/availability-resolvers.js";
import { SubscriptionHub } from "../subscriptions/subscription-hub.js";
import { subscriptionResolvers } from "../subscriptions/subscription-resolvers.js";
import { ClusterStatusFeed } from "../subscriptions/cluster-status-feed.js";
import { inventoryResolvers } from "../inventory/inventory-resolvers.js";
import { nodeFactsResolvers } from "../inventory/node-facts-resolvers.js";
import { createLogger, type Logger } from "../log/logger.js";
import { DrainStore } from "../maintenance/drain-store.js";
import { maintenanceResolvers } from "../maintenance/maintenance-resolvers.js";
import { drainListResolvers } from "../maintenance/drain-list-resolvers.js";
import { NodeMetadataService } from "../maintenance/node-metadata-service.js";
import { nodeMetadataResolvers } from "../maintenance/node-metadata-resolvers.js";
import { nodeLifecycleResolvers } from "../node-lifecycle/node-lifecycle-resolvers.js";
import { KubeletConfigReader } from "../node-lifecycle/kubelet-config.js";
import { DebugPods } from "../node-lifecycle/debug-pods.js";
import { KubeProxyModes } from "../node-lifecycle/kube-proxy-mode.js";
import { MaintenanceService, type MaintenanceTuning } from "../maintenance/maintenance-service.js";
import { capacityResolvers } from "../reports/capacity-resolvers.js";
import { CapacityReports } from "../reports/capacity-service.js";
import { TrendsStore } from "../reports/trends-store.js";
import { UsageSampler } from "../reports/usage-sampler.js";
import { startSimulator, type Simulator } from "../sim/index.js";
import { ServiceMetrics } from "../observability/metrics.js";
import { buildSubgraph, NoServiceSdl } from "../federation/subgraph.js";
import { VERSION } from "../package-info.js";
import type { AppProbes } from "./app-probes.js";
import { serviceResolvers } from "./service-resolvers.js";

/** Parts a test (or an embedding program) may supply instead of having them built from config. */
export interface AppOverrides {
  logger?: Logger;
  /** An already-open database; the app migrates it but does not close it. */
  database?: Database;
  /** The clusters to watch, instead of those config.clusters finds. */
  clusters?: ClusterSource[];
  /** Watch and metrics timings (tests shorten them). */
  clusterTuning?: ClusterTuning;
  /** Lease timing and identity of the history recorder (tests shorten and name them). */
  recorderTuning?: { leaseDurationMs?: number; retryPeriodMs?: number; identity?: string; bufferSize?: number; stallAfterMs?: number; coverageIntervalMs?: number; reconnectGraceMs?: number };
  /** Events a subscription may have undelivered before its connection is closed. */
  subscriberQueue?: number;
  /** WebSocket ping interval; a peer that misses a pong for as long is dropped (12 s). */
  keepAliveMs?: number;
  /** Drain timings (retry, poll, heartbeat, takeover) and this replica's name as a drain runner. */
  maintenanceTuning?: MaintenanceTuning & { identity?: string };
  /** Between sweeps of expired debugging pods (default 15 s). */
  debugPodSweepMs?: number;
  /** How often the tokens file is polled and how soon the JWKS may be fetched again (tests shorten them). */
  authTuning?: AuthTuning;
  /** Filled as the app starts with what tests wait on (e.g. the hub's subscriber count) rather than sleep. */
  probes?: AppProbes;
}

/** Churn of the embedded demo cluster, in scenarios per simulated minute: alive but calm. */
const DEMO_CHURN = 2;

export type AppState = "created" | "starting" | "started" | "stopping" | "stopped" | "failed";

export interface App {
  /** `stopped` after a stop() that came while starting: start() then resolves without serving. */
  readonly state: AppState;
  /** http://host:port once started (with the real port when 0 was asked for). */
  readonly url: string;
  /** Opens the database, migrates it, starts GraphQL and listens. Rejects (and cleans up) on failure. */
  start(): Promise<void>;
  /** Stops intake, closes WebSockets with 1001, drains HTTP, disconnects the database. Idempotent; during start(), ends stopped. */
  stop(): Promise<void>;
}

/** How long in-flight HTTP requests get to finish on shutdown before their sockets are cut. */
const HTTP_DRAIN_MS = 3_000;

/**
 * Apollo's CSRF prevention, with the Authorization header among the headers that prove a
 * request is no browser's simple request: a page on another origin cannot send one without a
 * preflight, so a GET that carries a bearer token (urql's default, which sends no content type)
 * is served; one with neither that nor a non-simple content type is still refused.
 */
const CSRF_PREVENTION = { requestHeaders: ["x-apollo-operation-name", "apollo-require-preflight", "authorization"] };

/**
 * The composition root: builds every dependency from `config` (or takes it from
 * `overrides`) and owns the order in which they start and stop.
 */
export function createApp(config: Config, overrides: AppOverrides = {}): App {
  const logger = overrides.logger ?? createLogger(config.logLevel, undefined, config.logFormat);
  const apolloLogger = logger.child({ component: "apollo" });
  let state: AppState = "created";
  let url = "";
  let database: Database | undefined;
  let apollo: ApolloServer<RequestContext> | undefined;
  let subgraph: ApolloServer<RequestContext> | undefined;
  let httpServer: Server | undefined;
  let webSocket: GraphqlWebSocketEndpoint | undefined;
  let clusters: ClusterRegistry | undefined;
  let simulator: Simulator | undefined;
  let recorder: HistoryRecorder | undefined;
  let pubsub: PubSub | undefined;
  let hub: SubscriptionHub | undefined;
  let clusterFeed: ClusterStatusFeed | undefined;
  let retention: HistoryRetention | undefined;
  let maintenance: MaintenanceService | undefined;
  let sampler: UsageSampler | undefined;
  let debugPods: DebugPods | undefined;
  let nodeEvents: NodeEventsRecorder | undefined;
  let stopping: Promise<void> | undefined;
  let starting: Promise<void> | undefined;
  // Set by a stop() during start(): start() checks it between its steps and winds back.
  const abort = new AbortController();
  const unlessStopped = () => {
    if (abort.signal.aborted) throw new StartAborted();
  };

  const authenticator = createAuthenticator(config.auth, logger, overrides.authTuning);
  const authRequired = Boolean(config.auth.tokensFile || config.auth.oidc);
  const metrics = new ServiceMetrics(config.metricsOperations);
  // Per replica until the database is open; shared through it when replicas can share one (PostgreSQL).
  const rate = config.auth.mutationRateLimit;
  let limiter: MutationLimiter | undefined = rate > 0 ? localLimiter(rate) : undefined;
  // Filters are charged for the nodes they are matched against: those in the caches.
  const cachedNodes = () => clusters?.all().reduce((sum, cache) => sum + cache.nodeCount, 0) ?? 0;
  const policy = createOperationPolicy(config.limits, rate, () => limiter, cachedNodes);
  // Operations running at once, per caller and overall, shared by HTTP and WebSocket.
  const inFlight = new InFlightLimiter(config.limits.maxInFlightPerCaller, config.limits.maxInFlight);
  const contextFor = (req: IncomingMessage, principal: Principal): RequestContext => {
    const requestId = requestIdOf(req);
    return { requestId, logger: logger.child({ requestId }), loaders: new Map(), principal };
  };
  const prerenderedAnswers = new PrerenderedAnswers();
  const oneLogLinePerRequest =
    (handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>) =>
    (req: IncomingMessage, res: ServerResponse): Promise<void> =>
      unexpectedErrors.perRequest(() => handle(req, res));
  const unexpectedErrors = new UnexpectedErrors(logger);
  const reportUnexpected = unexpectedErrors.report;

  /** The clusters to watch; starts the embedded simulator when that is the plan. */
  async function clusterSources(plan: ClusterPlan | undefined): Promise<ClusterSource[]> {
    if (overrides.clusters || !plan) return overrides.clusters ?? [];
    if (plan.kind !== "simulator") {
      logger.info({ source: plan.kind, clusters: plan.sources.map((s) => s.name) }, "watching clusters");
      return plan.sources;
    }
    simulator = await startSimulator({ name: "sim", nodes: plan.nodes, churn: DEMO_CHURN, port: 0 });
    logger.warn(
      { url: simulator.url, nodes: plan.nodes },
      `serving the embedded SIMULATED cluster "${simulator.name}", not a real one (${config.clusters.simulate === undefined ? "no kubeconfig or in-cluster credentials found" : "--simulate"}); point --kubeconfig at a cluster to watch it`,
    );
    return [{ ...sourceFromKubeconfigText(simulator.name, simulator.kubeconfig()), simulated: true }];
  }

  function start(): Promise<void> {
    if (state !== "created") return Promise.reject(new Error(`cannot start an app that is ${state}`));
    state = "starting";
    starting = run();
    return starting;
  }

  async function run(): Promise<void> {
    try {
      const startedAt = new Date();
      // Fail fast, cheapest check first, each before anything slow: the configuration (a
      // server that would be open to anyone, a bad tokens file), then the port and the cluster
      // sources (kubeconfig readable, contexts present), then the database. No migration runs
      // until all of them passed.
      authenticator.start(config.host);
      const plan = overrides.clusters ? undefined : planClusters(config.clusters);
      const bound = await bindHttpPort(config.host, config.port, { total: config.limits.maxConnections, perAddress: config.limits.maxConnectionsPerAddress });
      httpServer = bound;
      unlessStopped();
      // The clusters are watched from here on, while the database opens and migrates: a first
      // sync is mostly the apiserver streaming and us parsing, which then fills the time PGlite
      // spends waiting. History loses nothing by it: the recorder reconciles each cluster when
      // it takes the cluster's Lease, and nothing is recorded before that.
      clusters = new ClusterRegistry(await clusterSources(plan), logger, overrides.clusterTuning);
      unlessStopped();
      clusters.start();
      database = metrics.observeDatabase(overrides.database ?? (await openDatabase(config.database)));
      logger.info({ database: database.description }, "database open");
      unlessStopped();
      await database.withConnection((connection) => migrate(connection, logger, undefined, abort.signal));
      unlessStopped();
      const installation = await readInstallationId(database);
      if (rate > 0 && database.kind === "postgres") limiter = new SharedRateLimiter(database, rate, logger.child({ component: "auth" }));

      const inventory = new InventoryService(clusters);
      // Several replicas share PostgreSQL, so notices go through it; PGlite is one process.
      if (config.database.kind === "postgres") {
        const postgres = new PostgresPubSub(config.database.url, logger.child({ component: "pubsub" }));
        await postgres.start();
        pubsub = postgres;
      } else {
        pubsub = new InProcessPubSub();
      }
      const historyQueries = new HistoryQueries(database, logger);
      hub = new SubscriptionHub(pubsub, historyQueries, clusters, logger.child({ component: "subscriptions" }));
      hub.start();
      clusterFeed = new ClusterStatusFeed(clusters);
      clusterFeed.start();
      if (overrides.probes) overrides.probes.subscriberCount = () => (hub?.subscriberCount ?? 0) + (clusterFeed?.listenerCount ?? 0);
      const tuning = overrides.recorderTuning ?? {};
      recorder = new HistoryRecorder({
        pubsub,
        clusters,
        store: new HistoryStore(database),
        logger: logger.child({ component: "history" }),
        ...(tuning.bufferSize !== undefined ? { bufferSize: tuning.bufferSize } : {}),
        ...(tuning.stallAfterMs !== undefined ? { stallAfterMs: tuning.stallAfterMs } : {}),
        coverage: {
          database,
          ...(tuning.coverageIntervalMs !== undefined ? { intervalMs: tuning.coverageIntervalMs } : {}),
          ...(tuning.reconnectGraceMs !== undefined ? { reconnectGraceMs: tuning.reconnectGraceMs } : {}),
        },
        lease: {
          namespace: config.history.leaseNamespace,
          // One Lease per installation (its database): replicas sharing a database share it,
          // installations with their own databases each record.
          name: historyLeaseName(installation),
          durationMs: tuning.leaseDurationMs ?? config.history.leaseDurationSeconds * 1000,
          retryPeriodMs: tuning.retryPeriodMs ?? Math.max(500, (config.history.leaseDurationSeconds * 1000) / 5),
          ...(tuning.identity ? { identity: tuning.identity } : {}),
        },
      });
      recorder.start();
      retention = new HistoryRetention(database, config.history.retentionDays, logger);
      retention.start();
      const { identity: runnerIdentity, ...maintenanceTuning } = overrides.maintenanceTuning ?? {};
      const drains = new DrainStore(database);
      maintenance = new MaintenanceService({
        clusters,
        inventory,
        store: drains,
        pubsub,
        logger: logger.child({ component: "maintenance" }),
        impersonate: config.auth.impersonate,
        defaultTimeoutSeconds: config.maintenance.drainTimeoutSeconds,
        observe: (operation) => metrics.drainSeen(operation),
        ...(runnerIdentity ? { identity: runnerIdentity } : {}),
        tuning: maintenanceTuning,
      });
      if (overrides.probes) overrides.probes.drainsRunning = () => maintenance?.runningIds() ?? [];
      await maintenance.start();
      unlessStopped();
      // Trends follow the history lease: the replica recording a cluster samples it.
      const trends = new TrendsStore(database, logger.child({ component: "trends" }));
      const leader = recorder;
      sampler = new UsageSampler({ clusters, inventory, store: trends, logger: logger.child({ component: "trends" }), leads: (cluster) => leader.leads(cluster), ...config.trends, retentionDays: config.history.retentionDays });
      sampler.start();
      // Expired debugging pods are swept by the replica recording the cluster, like trends.
      debugPods = new DebugPods({ clusters, inventory, database, pubsub, logger: logger.child({ component: "debug-pods" }), leads: (cluster) => leader.leads(cluster), impersonate: config.auth.impersonate, ...(overrides.debugPodSweepMs ? { sweepMs: overrides.debugPodSweepMs } : {}) });
      debugPods.start();
      // Node events follow the history lease too; they are written apart from node history (own queue, own table).
      const nodeEventsStore = new NodeEventsStore(database, logger);
      nodeEvents = new NodeEventsRecorder({ clusters, store: nodeEventsStore, logger: logger.child({ component: "node-events" }), leads: (cluster) => leader.leads(cluster), leadership: leader.leadership });
      nodeEvents.start();

      const resolverSets = [
        serviceResolvers(database, startedAt, () => recorder!.status, () => recorder!.leases()),
        inventoryResolvers(inventory),
        nodeFactsResolvers(clusters),
        nodeEventsResolvers(clusters, nodeEventsStore, historyClusterCheck(database, clusters)),
        historyQueryResolvers(historyQueries, historyClusterCheck(database, clusters)),
        availabilityResolvers(new AvailabilityQueries(database, logger), historyClusterCheck(database, clusters), clusters),
        capacityResolvers(new CapacityReports(clusters, inventory, trends, config.trends)),
        subscriptionResolvers(hub, overrides.subscriberQueue, clusters, { feed: clusterFeed, view: (name) => inventory.clusterViews().find((c) => c.name === name) }),
        maintenanceResolvers(maintenance, hub),
        whoamiResolvers(),
        rateLimitResolvers(config.limits.maxQueryCost, rate, () => limiter),
        // Node facts (issue 15): node changes, labels and taints, drains listed.
        nodeChangeResolvers(new NodeChangeQueries(database, logger), historyClusterCheck(database, clusters)),
        drainListResolvers(drains, maintenance, historyClusterCheck(database, clusters)),
        nodeMetadataResolvers(new NodeMetadataService({ clusters, inventory, logger: logger.child({ component: "maintenance" }), impersonate: config.auth.impersonate })),
        nodeLifecycleResolvers(inventory, clusters, new KubeletConfigReader(clusters), debugPods, new KubeProxyModes(clusters)),
      ];
      const schema = buildSchema(resolverSets);
      // The schema, executed by graphql-jit for the live inventory's queries (graphql/executor.ts).
      // Each node's part of an answer is written once and reused while its node, pods and metrics
      // sample are unchanged (inventory/node-answer-fragments.ts), and the answer's bytes go to
      // the socket as they are (graphql/prerendered-json.ts).
      const gateway = compiledExecutorGateway(schema, {
        answerFragments: { types: [nodeAnswerFragments(inventory)], partitionOf: (context) => (context as RequestContext).principal?.role ?? "" },
        requestOf: (context) => requestOf(context as RequestContext),
      });
      if (overrides.probes) {
        overrides.probes.compiledOperations = gateway.compiled;
        overrides.probes.answersFromFragments = gateway.answeredFromFragments;
      }
      apollo = new ApolloServer<RequestContext>({
        gateway,
        formatError: (formatted, error) => formatError(formatted, error, reportUnexpected),
        stringifyResult: prerenderedAnswers.stringifyResult,
        includeStacktraceInErrorResponses: false,
        // On by default; said here because the local admin of a server without auth depends on it.
        csrfPrevention: CSRF_PREVENTION,
        // Apollo's own lines as our JSON lines, not console text.
        logger: apolloLogger,
        parseOptions: { maxTokens: MAX_DOCUMENT_TOKENS },
        // Signals belong to the CLI, which stops the whole app in order (Apollo's own handler
        // would stop only Apollo, then kill the process again).
        stopOnTerminationSignals: false,
        // Cache control hooks every field resolution; nothing here is HTTP-cacheable anyway.
        plugins: [ApolloServerPluginLandingPageDisabled(), ApolloServerPluginCacheControlDisabled(), legacyJsonStatusPlugin(), subscriptionsOverWebSocketOnlyPlugin(), authorisationPlugin(policy), metrics.apolloPlugin()],
        // Said outright: Apollo's default turns it off when NODE_ENV is production.
        introspection: config.introspection !== false,
      });
      await apollo.start();
      // The same API as an Apollo Federation 2 subgraph, at /subgraph (src/federation).
      subgraph = new ApolloServer<RequestContext>({
        schema: buildSubgraph(resolverSets, inventory),
        formatError: (formatted, error) => formatError(formatted, error, reportUnexpected),
        includeStacktraceInErrorResponses: false,
        csrfPrevention: CSRF_PREVENTION,
        // "Enabling inline tracing for this subgraph" and the like, as our JSON lines.
        logger: apolloLogger,
        parseOptions: { maxTokens: MAX_DOCUMENT_TOKENS },
        stopOnTerminationSignals: false,
        // The same rules as /graphql: policy (role, depth, cost), subscriptions only over WebSocket, introspection.
        plugins: [ApolloServerPluginLandingPageDisabled(), ApolloServerPluginCacheControlDisabled(), subscriptionsOverWebSocketOnlyPlugin(), authorisationPlugin(policy), metrics.apolloPlugin()],
        introspection: config.introspection !== false,
        validationRules: config.introspection === false ? [NoServiceSdl] : [],
      });
      await subgraph.start();
      unlessStopped();

      const db = database;
      const registry = clusters;
      httpServer = createHttpServer(
        {
          graphql: oneLogLinePerRequest(
            graphqlHttpHandler(
              apollo,
              (req) => authenticator.authenticate(credentialsOf(req, requestIdOf(req), "http", bearerToken(req.headers.authorization))),
              contextFor,
              inFlight,
              prerenderedAnswers,
            ),
          ),
          // The same in-flight bound as /graphql, shared with it.
          subgraph: oneLogLinePerRequest(
            graphqlHttpHandler(
              subgraph,
              (req) => authenticator.authenticate(credentialsOf(req, requestIdOf(req), "http", bearerToken(req.headers.authorization))),
              contextFor,
              inFlight,
            ),
          ),
          metrics: metrics.handler((req) => authenticator.authenticate(credentialsOf(req, requestIdOf(req), "http", bearerToken(req.headers.authorization)))),
          readiness: async () => {
            const up = await db.ping();
            // A full disk answers reads (the ping) and refuses every write: unavailable all the same.
            const full = recorder!.status.diskFull;
            const checks: Readiness["checks"] = {
              database: !up ? { ok: false, detail: "not answering" } : full ? { ok: false, detail: "disk full: writes fail (history buffered, the cache still served)" } : { ok: true },
            };
            for (const cache of registry.all()) {
              const status = cache.status();
              // A cluster still loading holds readiness back; one that failed does not, so an
              // unreachable cluster never keeps the others from being served. Probes are
              // anonymous: the error itself (addresses, TLS details) is for the log and for
              // authenticated callers of `clusters { lastError }`.
              checks[`cluster:${cache.name}`] = status.synced
                ? { ok: true, ...(status.connected ? {} : { detail: "watch reconnecting; serving the last known state" }) }
                : status.lastError
                  ? // A missing permission is no address or TLS detail: say which, so a deployment's RBAC can be fixed from its probe.
                    { ok: true, detail: status.lastErrorReason === "Forbidden" ? `forbidden: ${status.lastError}` : status.lastErrorReason === "Unauthorized" ? "unauthorized: the cluster refused the credentials" : "unreachable (its error: clusters { lastError })" }
                  : { ok: false, detail: "syncing" };
            }
            const history = recorder!.status;
            const stalled = recorder!.stalled();
            checks["history"] = {
              // A recorder whose writes keep failing while the database answers is stuck, not waiting out an outage.
              ok: !stalled,
              ...(history.pending || history.dropped || history.refused || !history.databaseUp
                ? {
                    detail: `${history.pending} observations buffered, ${history.dropped} dropped, ${history.refused} refused${history.databaseUp ? "" : ", database not writable"}${stalled ? `, no progress since ${stalled.toISOString()}` : ""}`,
                  }
                : {}),
            };
            return { ready: Object.values(checks).every((check) => check.ok), checks };
          },
          // Probes are anonymous: they get ready or not in general terms; the details (cluster
          // names, buffer counts) go to a caller who authenticates (the local admin without auth).
          readinessDetails: async (req) => {
            if (authRequired && !req.headers.authorization) return false;
            return (await authenticator.authenticate(credentialsOf(req, requestIdOf(req), "http", bearerToken(req.headers.authorization)))).ok;
          },
          pages: createPages(
            schema,
            {
              version: VERSION,
              simulatedClusters: registry.names().filter((name) => registry.isSimulated(name)),
              authRequired,
              introspection: config.introspection !== false,
            },
            () => url.replace(/^https?:\/\//, ""),
          ),
        },
        logger,
        bound,
      );
      webSocket = attachGraphqlWebSocket({
        httpServer,
        path: "/graphql",
        schema,
        logger,
        authenticate: (req, params) => authenticator.authenticate(credentialsOf(req, requestIdOf(req), "websocket", connectionToken(params, req))),
        credentialsChanged: (listener) => authenticator.onCredentialsChanged(listener),
        contextFor,
        policy,
        parseOptions: { maxTokens: MAX_DOCUMENT_TOKENS },
        introspection: config.introspection !== false,
        formatError: (error) => formatError(error.toJSON(), error, reportUnexpected),
        inFlight,
        limits: {
          connectionsPerCaller: config.limits.maxWebSocketsPerCaller,
          subscriptionsPerConnection: config.limits.maxSubscriptionsPerConnection,
          subscriptionsPerCaller: config.limits.maxSubscriptionsPerCaller,
        },
        ...(overrides.keepAliveMs !== undefined ? { keepAliveMs: overrides.keepAliveMs } : {}),
        observe: (operation, errors, seconds) => metrics.operation(operation.name, operation.type, errors, seconds),
      });
      const sockets = webSocket;
      metrics.attach({ clusters: registry, recorder: recorder!, webSocketConnections: () => sockets.connectionCount(), subscriptions: () => hub?.subscriberCount ?? 0 });
      const { port } = httpServer.address() as AddressInfo;
      url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`;
      unlessStopped();
      state = "started";
      logger.info({ url, graphql: `${url}/graphql`, ms: Date.now() - startedAt.getTime() }, "node-inventory ready");
    } catch (error) {
      const stopped = abort.signal.aborted;
      state = stopped ? "stopping" : "failed";
      await shutdown();
      // A stop() during start() is not a failure: start() resolves, and the app is stopped.
      if (!stopped) throw error;
      state = "stopped";
      logger.info("stopped while starting");
    }
  }

  /** Each step runs even if an earlier one failed, so nothing is left open. */
  async function shutdown(): Promise<void> {
    const steps: [string, () => Promise<unknown> | undefined][] = [
      ["websocket", () => webSocket?.close()],
      ["http", () => (httpServer?.listening ? closeHttp(httpServer) : undefined)],
      ["graphql", () => Promise.all([apollo?.stop(), subgraph?.stop()])],
      // Drains stop before history, so their last states and events are written.
      ["maintenance", () => maintenance?.stop()],
      ["trends", () => Promise.all([sampler?.stop(), debugPods?.stop()])],
      ["history", () => Promise.all([recorder?.stop(), retention?.stop(), nodeEvents?.stop()])],
      ["subscriptions", async () => (clusterFeed?.stop(), await hub?.stop(), await pubsub?.close())],
      ["clusters", () => clusters?.stop()],
      ["simulator", () => simulator?.stop()],
      ["database", () => (overrides.database ? undefined : database?.close())],
      ["auth", async () => authenticator.stop()],
    ];
    for (const [name, step] of steps) {
      const began = Date.now();
      try {
        await step();
        logger.debug({ step: name, ms: Date.now() - began }, "shutdown step done");
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
        if (state === "starting") {
          logger.info("stop requested while starting: winding back");
          abort.abort();
          await starting?.catch(() => {});
          // start() wound back (stopped) or failed (already cleaned up); either way it is over.
          if ((state as AppState) !== "started") {
            state = "stopped";
            return;
          }
        }
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

/** What a start() stopped midway throws to its own catch, which winds it back. */
class StartAborted extends Error {
  override name = "StartAborted";
}

/** Stops accepting, lets in-flight requests finish for a moment, then cuts what is left. */
function closeHttp(server: Server): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), HTTP_DRAIN_MS);
    server.close(() => (clearTimeout(force), resolve()));
    server.closeIdleConnections();
  });
}
