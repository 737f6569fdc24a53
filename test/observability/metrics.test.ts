/**
 * GET /metrics as Prometheus reads it: parsed by a text-format parser (parse-prometheus-text-format),
 * the values checked after known activity: a query, a condition flip, a drain, a subscription.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createClient } from "graphql-ws";
import parsePrometheusTextFormat, { type MetricFamily, type Sample } from "parse-prometheus-text-format";
import WebSocket from "ws";
import type { App } from "../../src/app/create-app.js";
import { PACKAGE_ROOT } from "../../src/package-info.js";
import { graphql, startTestApp, type CapturedLogs } from "../support/app.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";
import { bearer, tokensFile, TOKENS, wsUrl } from "../auth/support.js";

type Scrape = Map<string, MetricFamily>;

async function scrape(url: string, token = TOKENS.viewer): Promise<Scrape> {
  const res = await fetch(`${url}/metrics`, { headers: bearer(token) });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  return new Map(parsePrometheusTextFormat(await res.text()).map((family) => [family.name, family]));
}

/** The sample of `name` whose labels include `labels`; undefined when there is none. */
function sample(scraped: Scrape, name: string, labels: Record<string, string> = {}): Sample | undefined {
  const family = scraped.get(name);
  assert.ok(family, `no metric ${name}`);
  return family.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
}

function value(scraped: Scrape, name: string, labels: Record<string, string> = {}): number {
  const found = sample(scraped, name, labels);
  return found ? Number(found.value) : 0;
}

/** Histograms carry no labels but `le`: parse-prometheus-text-format 1.1.1 reads only unlabelled ones. */
const histogramCount = (scraped: Scrape, name: string) => Number(sample(scraped, name)?.count ?? 0);

describe("/metrics", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;
  let tokens: ReturnType<typeof tokensFile>;
  let logs: CapturedLogs;

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 6, seed: 7, clockSpeed: 30 });
    tokens = tokensFile();
    ({ app, url, logs } = await startTestApp(
      { clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] }, auth: { tokensFile: tokens.path, mutationRateLimit: 0 }, metricsOperations: ["Broken", "Sneaky", "Watch"] },
      {
        recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200 },
        maintenanceTuning: { evictionRetryMs: 300, deletionPollMs: 100, heartbeatMs: 300, staleAfterMs: 1_500 },
      },
    ));
    await eventually(async () => (await fetch(`${url}/readyz`)).status === 200, "ready", 30_000);
  });
  after(async () => {
    await app.stop();
    await sim.stop();
    tokens.remove();
  });

  test("with authentication configured it needs a valid token, of any role", async () => {
    const anonymous = await fetch(`${url}/metrics`);
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.headers.get("www-authenticate"), "Bearer");
    assert.equal((await fetch(`${url}/metrics`, { headers: bearer("not-a-token-of-this-service") })).status, 401);
    for (const token of [TOKENS.viewer, TOKENS.operator, TOKENS.admin]) assert.equal((await fetch(`${url}/metrics`, { headers: bearer(token) })).status, 200);
  });

  test("names start node_inventory_ beside the standard process_ and nodejs_ defaults; every series has help and a type", async () => {
    const scraped = await scrape(url);
    assert.ok(scraped.has("process_cpu_seconds_total") && scraped.has("process_resident_memory_bytes") && scraped.has("nodejs_heap_size_used_bytes"));
    const ours = [...scraped.keys()].filter((name) => !name.startsWith("process_") && !name.startsWith("nodejs_"));
    assert.deepEqual(ours.filter((name) => !name.startsWith("node_inventory_")), []);
    for (const name of ours) assert.ok(scraped.get(name)!.help, `${name} has no help`);
    for (const [name, family] of scraped) if (family.type === "COUNTER") assert.match(name, /_total$/);
  });

  test("each cluster's watch: connected, synced, the objects it caches, its lists, a fresh last event", async () => {
    const scraped = await scrape(url);
    assert.equal(value(scraped, "node_inventory_watch_connected", { cluster: "sim" }), 1);
    assert.equal(value(scraped, "node_inventory_watch_synced", { cluster: "sim" }), 1);
    assert.equal(value(scraped, "node_inventory_cached_objects", { cluster: "sim", resource: "nodes" }), 6);
    assert.equal(value(scraped, "node_inventory_cached_objects", { cluster: "sim", resource: "pods" }), sim.sim.cluster.list("pods").length);
    assert.equal(value(scraped, "node_inventory_watch_relists_total", { cluster: "sim", resource: "nodes" }), 1);
    assert.equal(value(scraped, "node_inventory_watch_restarts_total", { cluster: "sim", resource: "pods" }), 0);
    const age = value(scraped, "node_inventory_watch_last_event_age_seconds", { cluster: "sim", resource: "nodes" });
    assert.ok(age >= 0 && age < 60, `last event ${age} s ago`);
    assert.equal(value(scraped, "node_inventory_database_errors_total"), 0);
  });

  test("a query is counted by name, type and outcome, with its duration; a refused one by its error code", async () => {
    const before = await scrape(url);
    const fleet = await graphql(url, "query Fleet { nodes { totalCount } }", undefined, bearer(TOKENS.viewer));
    assert.equal(fleet.body.data.nodes.totalCount, 6);
    await graphql(url, "query Broken { noSuchField }", undefined, bearer(TOKENS.viewer));
    await graphql(url, `mutation Sneaky { cordonNode(name: "x") { name } }`, undefined, bearer(TOKENS.viewer));
    const afterwards = await scrape(url);
    const grew = (labels: Record<string, string>) => value(afterwards, "node_inventory_graphql_operations_total", labels) - value(before, "node_inventory_graphql_operations_total", labels);
    assert.equal(grew({ operation: "Fleet", type: "query", code: "OK" }), 1);
    assert.equal(grew({ operation: "Broken", type: "query", code: "GRAPHQL_VALIDATION_FAILED" }), 1);
    assert.equal(grew({ operation: "Sneaky", type: "mutation", code: "FORBIDDEN" }), 1);
    const durations = (s: Scrape) => histogramCount(s, "node_inventory_graphql_operation_duration_seconds");
    assert.equal(durations(afterwards) - durations(before), 3);
  });

  test("a condition flip: this replica leads the cluster's history and writes one transition row", async () => {
    await eventually(async () => value(await scrape(url), "node_inventory_history_leader", { cluster: "sim" }) === 1, "the history Lease held", 15_000);
    // History settled: nothing buffered before the flip.
    await eventually(async () => value(await scrape(url), "node_inventory_history_observations_buffered") === 0, "history written", 15_000);
    const before = await scrape(url);
    const node = sim.sim.cluster.nodeNames().find((n) => !n.startsWith("control-plane"))!;
    sim.sim.cluster.setNodeCondition(node, "Ready", "False", "KubeletNotReady");
    const transitions = (s: Scrape) => value(s, "node_inventory_history_rows_written_total", { kind: "transition" });
    const afterwards = await eventually(async () => {
      const s = await scrape(url);
      return transitions(s) > transitions(before) ? s : undefined;
    }, "the transition written", 15_000);
    assert.equal(transitions(afterwards) - transitions(before), 1);
    assert.equal(value(afterwards, "node_inventory_history_observations_dropped_total"), 0);
    assert.equal(value(afterwards, "node_inventory_history_database_writable"), 1);
    sim.sim.cluster.setNodeCondition(node, "Ready", "True", "KubeletReady");
  });

  test("a drain is counted by its outcome, with its duration", async () => {
    const node = sim.sim.cluster.nodeNames().find((n) => !n.startsWith("control-plane"))!;
    const started = await graphql(
      url,
      `mutation Drain($n: String!) { drainNode(name: $n, options: { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true, disableEviction: true, gracePeriodSeconds: 0 }) { id } }`,
      { n: node },
      bearer(TOKENS.operator),
    );
    const id = started.body.data.drainNode.id;
    const done = await eventually(async () => {
      const op = (await graphql(url, `query($id: ID!) { drainOperation(id: $id) { status message } }`, { id }, bearer(TOKENS.viewer))).body.data.drainOperation;
      return op.status !== "PENDING" && op.status !== "RUNNING" ? op : undefined;
    }, "the drain to end", 30_000);
    assert.equal(done.status, "SUCCEEDED", done.message);
    const scraped = await eventually(async () => {
      const s = await scrape(url);
      return value(s, "node_inventory_drains_total", { outcome: "SUCCEEDED" }) ? s : undefined;
    }, "the drain counted");
    assert.equal(value(scraped, "node_inventory_drains_total", { outcome: "SUCCEEDED" }), 1);
    assert.equal(value(scraped, "node_inventory_drains_total", { outcome: "FAILED" }), 0);
    assert.equal(histogramCount(scraped, "node_inventory_drain_duration_seconds"), 1);
    assert.ok(Number(sample(scraped, "node_inventory_drain_duration_seconds")!.sum) > 0);
    assert.equal(value(scraped, "node_inventory_graphql_operations_total", { operation: "Drain", type: "mutation", code: "OK" }), 1);
    await graphql(url, `mutation($n: String!) { uncordonNode(name: $n) { name } }`, { n: node }, bearer(TOKENS.operator));
  });

  test("open WebSocket connections and subscriptions", async () => {
    const before = await scrape(url);
    assert.equal(value(before, "node_inventory_websocket_connections"), 0);
    const client = createClient({ url: wsUrl(url), webSocketImpl: WebSocket, connectionParams: { token: TOKENS.viewer }, lazy: false, retryAttempts: 0 });
    const events: unknown[] = [];
    const unsubscribe = client.subscribe({ query: "subscription Watch { nodeStatusChanged { node { name } } }" }, { next: (e) => events.push(e), error: () => {}, complete: () => {} });
    try {
      const scraped = await eventually(async () => {
        const s = await scrape(url);
        return value(s, "node_inventory_subscriptions") >= 1 ? s : undefined;
      }, "the subscription registered");
      assert.equal(value(scraped, "node_inventory_websocket_connections"), 1);
      assert.equal(value(scraped, "node_inventory_graphql_operations_total", { operation: "Watch", type: "subscription", code: "OK" }), 1);
    } finally {
      unsubscribe();
      await client.dispose();
    }
    await eventually(async () => value(await scrape(url), "node_inventory_websocket_connections") === 0, "the connection closed");
  });

  test("a scrape after all of the above passes promtool check metrics", async () => {
    const res = await fetch(`${url}/metrics`, { headers: bearer(TOKENS.viewer) });
    const checked = spawnSync("promtool", ["check", "metrics"], { input: await res.text(), encoding: "utf8" });
    assert.deepEqual({ status: checked.status, said: checked.stdout + checked.stderr }, { status: 0, said: "" });
  });

  test("Apollo's own lines are JSON lines of ours; a page's assets are logged at debug, not a line each", async () => {
    assert.ok(logs.lines.some((l) => l.component === "apollo" && /inline tracing/.test(String(l.msg))), "Apollo's start-up line among ours");
    const asset = readdirSync(join(PACKAGE_ROOT, "dist", "web", "assets"))[0]!;
    assert.equal((await fetch(`${url}/assets/${asset}`)).status, 200);
    await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json", ...bearer(TOKENS.viewer) }, body: '{"query":"{ __typename }"}' });
    const levelOf = (path: string) => logs.lines.findLast((l) => l.msg === "request" && l.path === path)?.level;
    assert.deepEqual([levelOf(`/assets/${asset}`), levelOf("/graphql")], [20, 30]);
  });
});

describe("/metrics without authentication configured", () => {
  test("answers loopback callers, as the rest of the service does", async () => {
    const { app, url } = await startTestApp();
    try {
      const res = await fetch(`${url}/metrics`);
      assert.equal(res.status, 200);
      const families = parsePrometheusTextFormat(await res.text());
      assert.ok(families.some((f) => f.name === "node_inventory_watch_synced"));
    } finally {
      await app.stop();
    }
  });

});
