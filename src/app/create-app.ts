import type { AddressInfo } from "node:net";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { ApolloServer } from "@apollo/server";
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
import { answerCache } from "../performance/answer-cache.js";
import { graphqlHttpHandler } from "../graphql/http-handler.js";
import { PrerenderedAnswers } from "../performance/prerendered-json.js";
import { nodeAnswerFragments } from "../inventory/node-answer-fragments.js";
import { InFlightLimiter } from "../graphql/in-flight.js";
import { legacyJsonStatusPlugin } from "../graphql/legacy-json-status-plugin.js";
import { UnexpectedErrors } from "../graphql/unexpected-errors.js";
import { apolloOptions, type ApolloRules } from "../graphql/apollo-options.js";
import { MAX_DOCUMENT_TOKENS } from "../graphql/operation-limits.js";
import { buildSchema } from "../graphql/schema.js";
import { attachGraphqlWebSocket, type GraphqlWebSocketEndpoint } from "../graphql/websocket-server.js";
import { bindHttpPort, createHttpServer, requestIdOf } from "../http/http-server.js";
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
import { Parts } from "./parts.js";
import { readinessOf } from "./readiness.js";
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
 * The composition root: builds every dependency from `config` (or takes it from
 * `overrides`), starts them as a list of parts and stops them in the reverse order.
 */
export function createApp(config: Config, overrides: AppOverrides = {}): App {
  const logger = overrides.logger ?? createLogger(config.logLevel, undefined, config.logFormat);
  let state: AppState = "created";
  let url = "";
  let stopping: Promise<void> | undefined;
  let starting: Promise<void> | undefined;
  // Set by a stop() during start(): the parts check it as each starts, and the start winds back.
  const abort = new AbortController();
  const parts = new Parts(logger, abort.signal);

  const authenticator = createAuthenticator(config.auth, logger, overrides.authTuning);
  const authRequired = Boolean(config.auth.tokensFile || config.auth.oidc);
  /** The caller of an HTTP request, from its bearer token (every HTTP route asks the same way). */
  const httpCaller = (req: IncomingMessage) => authenticator.authenticate(credentialsOf(req, requestIdOf(req), "http", bearerToken(req.headers.authorization)));
  const metrics = new ServiceMetrics(config.metricsOperations);
  // Per replica until the database is open; shared through it when replicas can share one (PostgreSQL).
  const rate = config.auth.mutationRateLimit;
  let limiter: MutationLimiter | undefined = rate > 0 ? localLimiter(rate) : undefined;
  let clusters: ClusterRegistry | undefined;
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
  const unexpectedErrors = new UnexpectedErrors(logger);
  const reportUnexpected = unexpectedErrors.report;
  const oneLogLinePerRequest =
    (handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>) =>
    (req: IncomingMessage, res: ServerResponse): Promise<void> =>
      unexpectedErrors.perRequest(() => handle(req, res));
  const introspection = config.introspection !== false;
  const apolloRules: ApolloRules = {
    logger: logger.child({ component: "apollo" }),
    reportUnexpected,
    authorisation: () => authorisationPlugin(policy),
    metrics: () => metrics.apolloPlugin(),
    introspection,
  };

  /** The clusters to watch; starts the embedded simulator when that is the plan. */
  async function clusterSources(plan: ClusterPlan | undefined): Promise<ClusterSource[]> {
    if (overrides.clusters || !plan) return overrides.clusters ?? [];
    if (plan.kind !== "simulator") {
      logger.info({ source: plan.kind, clusters: plan.sources.map((s) => s.name) }, "watching clusters");
      return plan.sources;
    }
    const simulator: Simulator = await startSimulator({ name: "sim", nodes: plan.nodes, churn: DEMO_CHURN, port: 0 });
    parts.add({ name: "simulator", stop: () => simulator.stop() });
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

  /** Starts the parts in order; the order they are listed in is the reverse of the order they stop in. */
  async function run(): Promise<void> {
    try {
      const startedAt = new Date();
      // Fail fast, cheapest check first, each before anything slow: the configuration (a
      // server that would be open to anyone, a bad tokens file), then the port and the cluster
      // sources (kubeconfig readable, contexts present), then the database. No migration runs
      // until all of them passed.
      await parts.start({ name: "auth", stop: () => authenticator.stop() }, () => authenticator.start(config.host));
      const plan = overrides.clusters ? undefined : planClusters(config.clusters);
      const bound = await bindHttpPort(config.host, config.port, { total: config.limits.maxConnections, perAddress: config.limits.maxConnectionsPerAddress });
      // Closed here only when the start fails before serving; once serving, the "http" part closes it first.
      await parts.start({ name: "port", stop: () => (bound.listening ? closeHttp(bound) : undefined) }, () => undefined);
      // The clusters are watched from here on, while the database opens and migrates: a first
      // sync is mostly the apiserver streaming and us parsing, which then fills the time PGlite
      // spends waiting. History loses nothing by it: the recorder reconciles each cluster when
      // it takes the cluster's Lease, and nothing is recorded before that.
      const registry = new ClusterRegistry(await clusterSources(plan), logger, overrides.clusterTuning);
      parts.throwIfAborted();
      clusters = registry;
      await parts.start({ name: "clusters", stop: () => registry.stop() }, () => registry.start());
      const database = metrics.observeDatabase(overrides.database ?? (await openDatabase(config.database)));
      // An already-open database handed in belongs to its owner, who closes it.
      await parts.start({ name: "database", stop: () => (overrides.database ? undefined : database.close()) }, () => logger.info({ database: database.description }, "database open"));
      await database.withConnection((connection) => migrate(connection, logger, undefined, abort.signal));
      parts.throwIfAborted();
      const installation = await readInstallationId(database);
      if (rate > 0 && database.kind === "postgres") limiter = new SharedRateLimiter(database, rate, logger.child({ component: "auth" }));

      const inventory = new InventoryService(registry);
      // Several replicas share PostgreSQL, so notices go through it; PGlite is one process.
      let pubsub: PubSub;
      if (config.database.kind === "postgres") {
        const postgres = new PostgresPubSub(config.database.url, logger.child({ component: "pubsub" }));
        await postgres.start();
        pubsub = postgres;
      } else {
        pubsub = new InProcessPubSub();
      }
      parts.add({ name: "pubsub", stop: () => pubsub.close() });
      const historyQueries = new HistoryQueries(database, logger);
      const hub = new SubscriptionHub(pubsub, historyQueries, registry, logger.child({ component: "subscriptions" }));
      await parts.start({ name: "subscriptions", stop: () => hub.stop() }, () => hub.start());
      const clusterFeed = new ClusterStatusFeed(registry);
      await parts.start({ name: "cluster status feed", stop: () => clusterFeed.stop() }, () => clusterFeed.start());
      if (overrides.probes) overrides.probes.subscriberCount = () => hub.subscriberCount + clusterFeed.listenerCount;
      const recorder = historyRecorder(registry, database, pubsub, installation);
      await parts.start({ name: "history", stop: () => recorder.stop() }, () => recorder.start());
      if (overrides.probes) {
        overrides.probes.historyPending = () => recorder.status.pending;
        overrides.probes.cachedNodeVersions = (name) => Object.fromEntries([...(registry.get(name)?.allNodes() ?? [])].map((node) => [node.name, node.resourceVersion]));
      }
      const retention = new HistoryRetention(database, config.history.retentionDays, logger);
      await parts.start({ name: "history retention", stop: () => retention.stop() }, () => retention.start());
      const { identity: runnerIdentity, ...maintenanceTuning } = overrides.maintenanceTuning ?? {};
      const drains = new DrainStore(database);
      const maintenance = new MaintenanceService({
        clusters: registry,
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
      if (overrides.probes) {
        overrides.probes.drainsRunning = () => maintenance.runningIds();
        overrides.probes.drainRunnerStatus = (id) => maintenance.runnerStatus(id);
      }
      // Started after history, so stopped before it: the drains' last states and events are written.
      await parts.start({ name: "maintenance", stop: () => maintenance.stop() }, () => maintenance.start());
      // Trends follow the history lease: the replica recording a cluster samples it.
      const trends = new TrendsStore(database, logger.child({ component: "trends" }));
      const sampler = new UsageSampler({
        clusters: registry,
        inventory,
        store: trends,
        logger: logger.child({ component: "trends" }),
        leads: (cluster) => recorder.leads(cluster),
        ...config.trends,
        retentionDays: config.history.retentionDays,
      });
      await parts.start({ name: "trends", stop: () => sampler.stop() }, () => sampler.start());
      // Expired debugging pods are swept by the replica recording the cluster, like trends.
      const debugPods = new DebugPods({
        clusters: registry,
        inventory,
        database,
        pubsub,
        logger: logger.child({ component: "debug-pods" }),
        leads: (cluster) => recorder.leads(cluster),
        impersonate: config.auth.impersonate,
        ...(overrides.debugPodSweepMs ? { sweepMs: overrides.debugPodSweepMs } : {}),
      });
      await parts.start({ name: "debug pods", stop: () => debugPods.stop() }, () => debugPods.start());
      // Node events follow the history lease too; they are written apart from node history (own queue, own table).
      const nodeEventsStore = new NodeEventsStore(database, logger);
      const nodeEvents = new NodeEventsRecorder({
        clusters: registry,
        store: nodeEventsStore,
        logger: logger.child({ component: "node-events" }),
        leads: (cluster) => recorder.leads(cluster),
        leadership: recorder.leadership,
      });
      await parts.start({ name: "node events", stop: () => nodeEvents.stop() }, () => nodeEvents.start());

      // A history answer may name a configured cluster or one the database recorded.
      const historyCluster = historyClusterCheck(database, registry);
      const resolverSets = [
        serviceResolvers(
          database,
          startedAt,
          () => recorder.status,
          () => recorder.leases(),
        ),
        inventoryResolvers(inventory),
        nodeFactsResolvers(registry),
        nodeEventsResolvers(registry, nodeEventsStore, historyCluster),
        historyQueryResolvers(historyQueries, historyCluster),
        availabilityResolvers(new AvailabilityQueries(database, logger), historyCluster, registry),
        capacityResolvers(new CapacityReports(registry, inventory, trends, config.trends)),
        subscriptionResolvers(hub, overrides.subscriberQueue, registry, { feed: clusterFeed, view: (name) => inventory.clusterViews().find((c) => c.name === name) }),
        maintenanceResolvers(maintenance, hub),
        whoamiResolvers(),
        rateLimitResolvers(config.limits.maxQueryCost, rate, () => limiter),
        nodeChangeResolvers(new NodeChangeQueries(database, logger), historyCluster),
        drainListResolvers(drains, maintenance, historyCluster),
        nodeMetadataResolvers(new NodeMetadataService({ clusters: registry, inventory, logger: logger.child({ component: "maintenance" }), impersonate: config.auth.impersonate })),
        nodeLifecycleResolvers(inventory, registry, new KubeletConfigReader(registry), debugPods, new KubeProxyModes(registry)),
      ];
      const schema = buildSchema(resolverSets);
      // The live inventory's queries compiled, nodes' JSON reused, large answers written as bytes
      // (src/performance); `--answer-cache=off` runs plain graphql-js.
      const fastPaths = answerCache(config.answerCache !== false, schema, prerenderedAnswers, {
        answerFragments: { types: [nodeAnswerFragments(inventory)], partitionOf: (context) => (context as RequestContext).principal?.role ?? "" },
        requestOf: (context) => requestOf(context as RequestContext),
      });
      if (overrides.probes) {
        overrides.probes.compiledOperations = fastPaths.compiled;
        overrides.probes.answersFromFragments = fastPaths.answeredFromFragments;
        overrides.probes.compileCost = fastPaths.compileCost;
      }
      const apollo = new ApolloServer<RequestContext>(apolloOptions(apolloRules, { ...fastPaths.execution, plugins: [legacyJsonStatusPlugin()] }));
      await parts.start({ name: "graphql", stop: () => apollo.stop() }, () => apollo.start());
      // The same API as an Apollo Federation 2 subgraph, at /subgraph (src/federation), under the same rules.
      const subgraph = new ApolloServer<RequestContext>(
        apolloOptions(apolloRules, {
          schema: buildSubgraph(resolverSets, inventory),
          validationRules: introspection ? [] : [NoServiceSdl],
        }),
      );
      await parts.start({ name: "subgraph", stop: () => subgraph.stop() }, () => subgraph.start());

      const httpServer = createHttpServer(
        {
          graphql: oneLogLinePerRequest(graphqlHttpHandler(apollo, httpCaller, contextFor, inFlight, prerenderedAnswers)),
          // The same in-flight bound as /graphql, shared with it.
          subgraph: oneLogLinePerRequest(graphqlHttpHandler(subgraph, httpCaller, contextFor, inFlight)),
          metrics: metrics.handler(httpCaller),
          readiness: readinessOf({ database, clusters: registry, recorder }),
          // Probes are anonymous: they get ready or not in general terms; the details (cluster
          // names, buffer counts) go to a caller who authenticates (the local admin without auth).
          readinessDetails: async (req) => {
            if (authRequired && !req.headers.authorization) return false;
            return (await httpCaller(req)).ok;
          },
          pages: createPages(schema, { version: VERSION, simulatedClusters: registry.names().filter((name) => registry.isSimulated(name)), authRequired, introspection }, () =>
            url.replace(/^https?:\/\//, ""),
          ),
        },
        logger,
        bound,
      );
      await parts.start({ name: "http", stop: () => (httpServer.listening ? closeHttp(httpServer) : undefined) }, () => undefined);
      const webSocket: GraphqlWebSocketEndpoint = attachGraphqlWebSocket({
        httpServer,
        path: "/graphql",
        schema,
        logger,
        authenticate: (req, params) => authenticator.authenticate(credentialsOf(req, requestIdOf(req), "websocket", connectionToken(params, req))),
        credentialsChanged: (listener) => authenticator.onCredentialsChanged(listener),
        contextFor,
        policy,
        parseOptions: { maxTokens: MAX_DOCUMENT_TOKENS },
        introspection,
        formatError: (error) => formatError(error.toJSON(), error, reportUnexpected),
        textFrames: fastPaths.textFrames,
        inFlight,
        limits: {
          connectionsPerCaller: config.limits.maxWebSocketsPerCaller,
          subscriptionsPerConnection: config.limits.maxSubscriptionsPerConnection,
          subscriptionsPerCaller: config.limits.maxSubscriptionsPerCaller,
        },
        ...(overrides.keepAliveMs !== undefined ? { keepAliveMs: overrides.keepAliveMs } : {}),
        observe: (operation, errors, seconds) => metrics.operation(operation.name, operation.type, errors, seconds),
      });
      await parts.start({ name: "websocket", stop: () => webSocket.close() }, () => undefined);
      metrics.attach({ clusters: registry, recorder, webSocketConnections: () => webSocket.connectionCount(), subscriptions: () => hub.subscriberCount });
      const { port } = httpServer.address() as AddressInfo;
      url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`;
      state = "started";
      logger.info({ url, graphql: `${url}/graphql`, ms: Date.now() - startedAt.getTime() }, "node-inventory ready");
    } catch (error) {
      const stopped = abort.signal.aborted;
      state = stopped ? "stopping" : "failed";
      await parts.stopAll();
      // A stop() during start() is not a failure: start() resolves, and the app is stopped.
      if (!stopped) throw error;
      state = "stopped";
      logger.info("stopped while starting");
    }
  }

  /** The history recorder, holding one Lease per installation and cluster. */
  function historyRecorder(registry: ClusterRegistry, database: Database, pubsub: PubSub, installation: string): HistoryRecorder {
    const tuning = overrides.recorderTuning ?? {};
    return new HistoryRecorder({
      pubsub,
      clusters: registry,
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
        await parts.stopAll();
        state = "stopped";
        logger.info("stopped");
      })();
      return stopping;
    },
  };
}

/** Stops accepting, lets in-flight requests finish for a moment, then cuts what is left. */
function closeHttp(server: Server): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), HTTP_DRAIN_MS);
    server.close(() => (clearTimeout(force), resolve()));
    server.closeIdleConnections();
  });
}
