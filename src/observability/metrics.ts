import type { IncomingMessage, ServerResponse } from "node:http";
import type { ApolloServerPlugin } from "@apollo/server";
import { getOperationAST, type GraphQLFormattedError } from "graphql";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Authentication } from "../graphql/caller.js";
import type { ClusterRegistry } from "../cluster/cluster-registry.js";
import type { Database } from "../db/database.js";
import type { HistoryRecorder } from "../history/history-recorder.js";
import type { DrainOperation } from "../maintenance/drain-operation.js";
import { SHIPPED_OPERATIONS } from "./operation-names.js";

/** What the gauges read at scrape time: the app's own state, so hot paths carry no hooks. */
export interface MetricSources {
  clusters: ClusterRegistry;
  recorder: HistoryRecorder;
  webSocketConnections(): number;
  subscriptions(): number;
}

/** The `operation` label of an operation without a name. */
const ANONYMOUS = "anonymous";
/** The `operation` label of every name not on the allow-list. */
const OTHER = "other";
/** Drains remembered as counted, so a final state published twice counts once. */
const COUNTED_DRAINS = 1_000;

/**
 * The service's Prometheus metrics (`GET /metrics`), in a registry of its own so several apps in
 * one process (tests) never share series. Gauges and the counters the app already keeps are
 * read when Prometheus scrapes; only what nothing else counts (GraphQL operations, drain
 * outcomes, database errors) is counted as it happens. Names and units: README, "Metrics".
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private sources: MetricSources | undefined;
  /** The names counted as themselves: the shipped UI's and CLI's, and those the operator listed. */
  private readonly operationNames: ReadonlySet<string>;
  private readonly countedDrains = new Set<string>();
  private readonly operations: Counter<"operation" | "type" | "code">;
  private readonly operationSeconds: Histogram;
  private readonly drains: Counter<"outcome">;
  private readonly drainSeconds: Histogram;
  private readonly databaseErrors: Counter;

  constructor(operationNames: readonly string[] = []) {
    this.operationNames = new Set([...SHIPPED_OPERATIONS, ...operationNames]);
    // Process and Node.js defaults keep their standard names (process_cpu_seconds_total, nodejs_heap_size_used_bytes …).
    collectDefaultMetrics({ register: this.registry });
    // Except three gauges named like counters (`promtool check metrics` refuses a gauge ending in
    // _total): their values are the sums of nodejs_active_handles, _requests and _resources by type.
    for (const name of ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"]) this.registry.removeSingleMetric(name);
    const registers = [this.registry];
    const metrics = this;
    const perCluster = (read: (cache: ReturnType<ClusterRegistry["all"]>[number]) => number) => (gauge: Gauge<"cluster">) => {
      gauge.reset();
      for (const cache of metrics.sources?.clusters.all() ?? []) gauge.set({ cluster: cache.name }, read(cache));
    };
    const perWatch = (read: (state: WatchState) => number | undefined) => (gauge: Gauge<"cluster" | "resource">) => {
      gauge.reset();
      for (const cache of metrics.sources?.clusters.all() ?? []) {
        for (const [resource, state] of Object.entries(cache.watchStates())) {
          const value = read(state);
          if (value !== undefined) gauge.set({ cluster: cache.name, resource }, value);
        }
      }
    };
    gauge("node_inventory_watch_connected", "1 while the cluster's node watch is open, else 0", ["cluster"], perCluster((c) => Number(c.status().connected)));
    gauge("node_inventory_watch_synced", "1 once the cluster's nodes and pods have been fully listed, else 0", ["cluster"], perCluster((c) => Number(c.status().synced)));
    gauge("node_inventory_metrics_api_available", "1 while metrics.k8s.io answered the cluster's last poll, else 0", ["cluster"], perCluster((c) => Number(c.status().metricsAvailable)));
    gauge("node_inventory_cached_objects", "objects in the watch cache", ["cluster", "resource"], perWatch((s) => s.cached));
    gauge("node_inventory_watch_last_event_age_seconds", "seconds since the watch last delivered anything (an event, a bookmark or a list)", ["cluster", "resource"], perWatch((s) => (s.lastEventAt === undefined ? undefined : (Date.now() - s.lastEventAt) / 1000)));
    cumulative("node_inventory_watch_relists_total", "full lists of the resource (the first, and each after a 410 or a restart)", ["cluster", "resource"], () =>
      (metrics.sources?.clusters.all() ?? []).flatMap((c) => Object.entries(c.watchStates()).map(([resource, s]) => [{ cluster: c.name, resource }, s.relists] as const)),
    );
    cumulative("node_inventory_cluster_resets_total", "times the cluster came back as another (its resourceVersions went back) and everything was listed again", ["cluster"], () =>
      (metrics.sources?.clusters.all() ?? []).map((c) => [{ cluster: c.name }, c.status().resets] as const),
    );
    cumulative("node_inventory_watch_restarts_total", "list or watch failures retried with backoff", ["cluster", "resource"], () =>
      (metrics.sources?.clusters.all() ?? []).flatMap((c) => Object.entries(c.watchStates()).map(([resource, s]) => [{ cluster: c.name, resource }, s.restarts] as const)),
    );

    gauge("node_inventory_history_leader", "1 while this replica holds the cluster's history Lease (records its history), else 0", ["cluster"], perCluster((c) => Number(metrics.sources?.recorder.leads(c.name) ?? false)));
    cumulative("node_inventory_history_rows_written_total", "history rows written, by kind", ["kind"], () => {
      const recorded = metrics.sources?.recorder.status.recorded;
      return recorded ? [[{ kind: "transition" }, recorded.transitions], [{ kind: "node_change" }, recorded.changes], [{ kind: "maintenance" }, recorded.maintenance]] : [];
    });
    gauge("node_inventory_history_observations_buffered", "observations waiting to be written", [], (g) => g.set(metrics.sources?.recorder.status.pending ?? 0));
    cumulative("node_inventory_history_observations_dropped_total", "observations dropped because the buffer was full (a reconcile fills the gap)", [], () => [[{}, metrics.sources?.recorder.status.dropped ?? 0]]);
    cumulative("node_inventory_history_rows_refused_total", "history rows the database refused (bad data), set aside so history goes on", [], () => [[{}, (metrics.sources?.recorder.status as { refused?: number } | undefined)?.refused ?? 0]]);
    gauge("node_inventory_history_lag_seconds", "age of the oldest observation not yet written (0 when none waits)", [], (g) => {
      const oldest = metrics.sources?.recorder.oldestPendingAt();
      g.set(oldest ? Math.max(0, (Date.now() - oldest.getTime()) / 1000) : 0);
    });
    gauge("node_inventory_history_database_writable", "1 while the last history write succeeded, else 0", [], (g) => g.set(Number(metrics.sources?.recorder.status.databaseUp ?? true)));

    this.operations = new Counter({ name: "node_inventory_graphql_operations_total", help: "GraphQL operations by name, type and outcome (OK or the error code)", labelNames: ["operation", "type", "code"], registers });
    this.operationSeconds = new Histogram({
      name: "node_inventory_graphql_operation_duration_seconds",
      help: "time to answer a query or mutation, over HTTP or WebSocket",
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    gauge("node_inventory_websocket_connections", "open graphql-ws connections", [], (g) => g.set(metrics.sources?.webSocketConnections() ?? 0));
    gauge("node_inventory_subscriptions", "active subscriptions", [], (g) => g.set(metrics.sources?.subscriptions() ?? 0));

    this.drains = new Counter({ name: "node_inventory_drains_total", help: "drains ended, by outcome", labelNames: ["outcome"], registers });
    this.drainSeconds = new Histogram({
      name: "node_inventory_drain_duration_seconds",
      help: "from a drain's start to its end, whatever the outcome",
      buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600],
      registers,
    });
    this.databaseErrors = new Counter({ name: "node_inventory_database_errors_total", help: "database queries that failed", registers });
    for (const outcome of ["SUCCEEDED", "FAILED", "CANCELLED"]) this.drains.inc({ outcome }, 0);
    this.databaseErrors.inc(0);

    function gauge<L extends string>(name: string, help: string, labelNames: L[], collect: (g: Gauge<L>) => void): void {
      new Gauge<L>({ name, help, labelNames, registers, collect() { collect(this); } });
    }
    /** A counter over a running total kept elsewhere: each scrape adds what the total grew by. */
    function cumulative<L extends string>(name: string, help: string, labelNames: L[], totals: () => readonly (readonly [Partial<Record<L, string>>, number])[]): void {
      const last = new Map<string, number>();
      new Counter<L>({
        name,
        help,
        labelNames,
        registers,
        collect() {
          for (const [labels, total] of totals()) {
            const key = JSON.stringify(labels);
            const grown = total - (last.get(key) ?? 0);
            if (grown > 0 || !last.has(key)) this.inc(labels, Math.max(0, grown));
            last.set(key, Math.max(total, last.get(key) ?? 0));
          }
        },
      });
    }
  }

  /** Hands the gauges the app's parts once they exist. */
  attach(sources: MetricSources): void {
    this.sources = sources;
  }

  /** One GraphQL operation answered, over HTTP or WebSocket; its name is a label only if allowed ({@link SHIPPED_OPERATIONS}, `--metrics-operations`). */
  operation(name: string | null | undefined, type: string | undefined, errors: readonly GraphQLFormattedError[] | undefined, seconds: number | undefined): void {
    const label = !name ? ANONYMOUS : this.operationNames.has(name) ? name : OTHER;
    const code = errors?.length ? String(errors[0]!.extensions?.code ?? "INTERNAL_SERVER_ERROR") : "OK";
    this.operations.inc({ operation: label, type: type ?? "unknown", code });
    // A subscription's time is its life, not an answer's: it would swamp the histogram.
    if (seconds !== undefined && type !== "subscription") this.operationSeconds.observe(seconds);
  }

  /** Counts GraphQL over HTTP: every request Apollo answers, its errors as the caller sees them. */
  apolloPlugin(): ApolloServerPlugin {
    const metrics = this;
    return {
      async requestDidStart() {
        const began = performance.now();
        return {
          async willSendResponse({ request, document, operation, response }) {
            const body = response.body;
            const errors = body.kind === "single" ? body.singleResult.errors : body.initialResult.errors;
            // A document that failed validation has no resolved operation; its text still names one.
            const named = operation ?? (document ? getOperationAST(document, request.operationName) : null);
            metrics.operation(request.operationName ?? named?.name?.value, named?.operation, errors, (performance.now() - began) / 1000);
          },
        };
      },
    };
  }

  /** Counts a drain that reached its end; the same drain seen again (a repeated save) counts once. */
  drainSeen(operation: DrainOperation): void {
    if (operation.dryRun || operation.status === "PENDING" || operation.status === "RUNNING" || this.countedDrains.has(operation.id)) return;
    this.countedDrains.add(operation.id);
    if (this.countedDrains.size > COUNTED_DRAINS) this.countedDrains.delete(this.countedDrains.values().next().value!);
    this.drains.inc({ outcome: operation.status });
    const ended = operation.finishedAt ?? new Date();
    this.drainSeconds.observe(Math.max(0, (ended.getTime() - operation.startedAt.getTime()) / 1000));
  }

  /** The same database, its Prisma queries counted when they fail. */
  observeDatabase(database: Database): Database {
    const errors = this.databaseErrors;
    const prisma = database.prisma.$extends({
      query: {
        async $allOperations({ args, query }) {
          try {
            return await query(args);
          } catch (error) {
            errors.inc();
            throw error;
          }
        },
      },
    }) as unknown as Database["prisma"];
    return Object.assign(Object.create(Object.getPrototypeOf(database)) as Database, database, { prisma });
  }

  /**
   * GET /metrics: as open as the rest of the service. Without authentication configured, only
   * for loopback callers (the authenticator's local rule); with it, any valid token, whatever
   * its role (Prometheus sends one: README, "Metrics").
   */
  handler(authenticate: (req: IncomingMessage) => Promise<Authentication>): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
    return async (req, res) => {
      res.setHeader("cache-control", "no-store");
      if (req.method !== "GET" && req.method !== "HEAD") {
        res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" }).end("GET /metrics\n");
        return;
      }
      const auth = await authenticate(req);
      if (!auth.ok) {
        const status = auth.code === "UNAVAILABLE" ? 503 : auth.code === "FORBIDDEN" ? 403 : 401;
        res.writeHead(status, { "content-type": "text/plain; charset=utf-8", ...(status === 401 ? { "www-authenticate": "Bearer" } : {}) }).end(`${auth.code}: ${auth.message}\n`);
        return;
      }
      const text = await this.registry.metrics();
      res.writeHead(200, { "content-type": this.registry.contentType }).end(req.method === "HEAD" ? undefined : text);
    };
  }
}

/** What a reflector reports, as the metrics read it. */
interface WatchState {
  relists: number;
  restarts: number;
  cached: number;
  lastEventAt?: number | undefined;
}
