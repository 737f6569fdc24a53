import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import type { Database } from "../../src/db/database.js";
import { createLogger } from "../../src/log/logger.js";
import { PACKAGE_ROOT } from "../../src/package-info.js";
import { groupValue } from "../../src/reports/grouping.js";
import { TrendsStore } from "../../src/reports/trends-store.js";
import { migratedDatabase } from "../history/history-fixtures.js";
import { graphql, startTestApp } from "../support/app.js";
import { launchBrowser, type TestBrowser } from "../support/browser.js";
import { BACKENDS, type TestDatabase } from "../support/databases.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const ARTIFACTS = join(PACKAGE_ROOT, "test-artifacts");
const HOUR = 3_600_000;
const CELL = [{ by: "NODE_POOL" }, { by: "ZONE" }, { by: "INSTANCE_TYPE" }, { by: "ROLE" }] as const;

interface LiveNode {
  name: string;
  labels: { key: string; value: string }[];
}

// The Reports page on the real app watching the simulator (cluster "sim"), over a PostgreSQL
// database that also holds the recorded history of cluster "old", no longer configured, whose
// node has the same name as one of sim's; and six hours of sampled requests, growing in one pool.
describe("the Reports page in a real browser", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;
  let db: Database;
  let fresh: TestDatabase;
  let dispose: () => Promise<void>;
  let browser: TestBrowser;
  let shared: string;
  let pools: { name: string; cpu: number; memory: number }[];
  const now = Date.now();
  const query = async (text: string, variables: Record<string, unknown> = {}) => {
    const { body } = await graphql(url, text, variables);
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    return body.data;
  };

  before(async () => {
    ({ db, fresh, dispose } = await migratedDatabase(BACKENDS.find((b) => b.name === "postgres")!));
    sim = await startSimWithKubeconfig({ nodes: 12, seed: 1, clockSpeed: 1 });
    ({ app, url } = await startTestApp({ database: fresh.config, clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] } }));
    await eventually(async () => (await graphql(url, "{ clusters { synced } }")).body.data?.clusters[0].synced, "sync", 20_000);
    const live: LiveNode[] = (await query("{ nodes(first: 100) { edges { node { name labels { key value } } } } }")).nodes.edges.map((e: { node: LiveNode }) => e.node);
    shared = live.map((n) => n.name).find((n) => !n.startsWith("control-plane"))!;

    // "old": recorded from 20 h ago to 2 h ago (18 h observed, 6 h of the day unobserved), with one 65 s outage.
    await db.prisma.nodeState.create({
      data: {
        cluster: "old",
        name: shared,
        uid: "old-uid",
        conditions: { Ready: "True" },
        unschedulable: false,
        kubeletVersion: "v1.31.2",
        containerRuntime: "containerd://1.7.24",
        labels: {},
        taints: [],
        firstSeenAt: new Date(now - 30 * HOUR),
        deletedAt: null,
      },
    });
    await db.prisma.recordingCoverage.create({ data: { cluster: "old", startedAt: new Date(now - 20 * HOUR), endedAt: new Date(now - 2 * HOUR) } });
    await db.prisma.conditionTransition.create({ data: { cluster: "old", node: shared, type: "Ready", from: "True", to: "False", at: new Date(now - 10 * HOUR) } });
    await db.prisma.conditionTransition.create({ data: { cluster: "old", node: shared, type: "Ready", from: "False", to: "True", at: new Date(now - 10 * HOUR + 65_000) } });

    // sim: the same node name goes NotReady and back, recorded by the app from the live watch,
    // once the recording covers the cluster (before that nothing counts as observed).
    const window = () => ({ from: new Date(now - 24 * HOUR).toISOString(), to: new Date(Date.now() + 60_000).toISOString() });
    await eventually(
      async () =>
        (await query(`query($from: DateTime!, $to: DateTime!) { availabilityReport(from: $from, to: $to) { nodes { cluster node observedSeconds } } }`, window())).availabilityReport.nodes.some(
          (n: { cluster: string; node: string; observedSeconds: number }) => n.cluster === "sim" && n.node === shared && n.observedSeconds > 0,
        ),
      "the recording of sim to begin",
      30_000,
    );
    sim.sim.cluster.setNodeCondition(shared, "Ready", "False", "KubeletNotReady");
    await eventually(async () => (await query(`query($n: String!) { node(name: $n) { ready } }`, { n: shared })).node.ready === "FALSE", "NotReady seen", 10_000);
    sim.sim.cluster.setNodeCondition(shared, "Ready", "True", "KubeletReady");
    await eventually(async () => (await query(`query($n: String!) { node(name: $n) { ready } }`, { n: shared })).node.ready === "TRUE", "Ready again", 10_000);

    const day = { from: new Date(now - 24 * HOUR).toISOString(), to: new Date(Date.now() + 60_000).toISOString() };
    let seen: unknown;
    await eventually(
      async () => {
        seen = (
          await query(`query($from: DateTime!, $to: DateTime!) { availabilityReport(from: $from, to: $to) { nodes { cluster node outages availability unobservedSeconds } } }`, day)
        ).availabilityReport.nodes.filter((n: { node: string }) => n.node === shared);
        return (seen as { cluster: string; outages: number }[]).filter((n) => n.outages > 0).length === 2;
      },
      "both outages recorded",
      15_000,
    ).catch((e) => assert.fail(`${e}: ${JSON.stringify(seen)}`));

    // Six hours of samplings every 10 minutes: requests in the first pool grow from 40% to 70% of
    // its allocatable CPU (full 6 h from now) and memory (full later); the other pools stay flat.
    pools = (await query("{ capacityReport(groupBy: [{ by: NODE_POOL }]) { groups { key { value } cpu { allocatable } memory { allocatable } } } }")).capacityReport.groups
      .map((g: { key: { value: string }[]; cpu: { allocatable: number }; memory: { allocatable: number } }) => ({ name: g.key[0]!.value, cpu: g.cpu.allocatable, memory: g.memory.allocatable }))
      .sort((a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name));
    assert.ok(pools.length >= 2, JSON.stringify(pools));
    const store = new TrendsStore(db, createLogger("silent"));
    const start = now - 6 * HOUR;
    for (let t = start; t < now - 10 * 60_000; t += 10 * 60_000) {
      const hours = (t - start) / HOUR;
      const samples = live.map((n) => {
        const labels = Object.fromEntries(n.labels.map((l) => [l.key, l.value]));
        const cell = CELL.map((grouping) => groupValue(grouping, "sim", labels));
        const pool = pools.find((p) => p.name === cell[0])!;
        const members = live.filter((m) => groupValue(CELL[0], "sim", Object.fromEntries(m.labels.map((l) => [l.key, l.value]))) === pool.name).length;
        const grows = pool === pools[0];
        const cpuShare = grows ? 0.4 + 0.05 * hours : 0.3;
        const memoryShare = grows ? 0.4 + 0.02 * hours : 0.3;
        return {
          node: n.name,
          cell: [cell[0]!, cell[1]!, cell[2]!, cell[3]!] as const,
          labels: {},
          cpuUsage: null,
          memoryUsage: null,
          cpuRequests: Math.round((pool.cpu * cpuShare) / members),
          memoryRequests: Math.round((pool.memory * memoryShare) / members),
        };
      });
      await store.writeSampling("sim", new Date(t), samples);
    }
    browser = await launchBrowser({ width: 1280, height: 1000 });
    mkdirSync(ARTIFACTS, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await app?.stop();
    await sim?.stop();
    await dispose?.();
  });

  test("the outage list names each node cluster/node, marks the cluster not configured, and shows unobserved time apart", async () => {
    const { page } = browser;
    await page.goto(`${url}/ui/reports`);
    const list = page.locator('[data-report="availability"] ul.outage-list');
    await list.locator(`li[data-node="sim/${shared}"]`).waitFor({ timeout: 30_000 });
    const rows = await list.locator("li").evaluateAll((items) => items.map((li) => [li.getAttribute("data-node"), li.getAttribute("data-not-configured"), li.textContent]));
    const old = rows.find(([node]) => node === `old/${shared}`);
    const live = rows.find(([node]) => node === `sim/${shared}`);
    assert.ok(old && live, JSON.stringify(rows));
    assert.equal(old[1], "true");
    assert.equal(live[1], "false");
    // 65 s down of 18 h observed: 99.89%, not "100%"; the 6 h nobody recorded are said, not counted as available.
    assert.match(old[2]!, new RegExp(`^old/${shared} \\(cluster not configured: recorded history only\\): 99.89% of observed time available, 6h( \\d+s)? unobserved, 1 outage$`));
    assert.match(live[2]!, new RegExp(`^sim/${shared}: \\d+\\.\\d+% of observed time available, \\d+h( \\d+m)? unobserved, 1 outage$`));
    assert.equal(await page.locator("[data-clusters-not-configured]").getAttribute("data-clusters-not-configured"), "old");
    const strips = await page.locator("svg.outages").getAttribute("aria-label");
    assert.ok(strips!.includes(`old/${shared} (not configured) 99.89% of observed time available`), strips!);
    await page.locator('[data-report="availability"]').screenshot({ path: join(ARTIFACTS, "reports-availability.png") });
  });

  test("the requests chart projects when the growing pool reaches allocatable, and says no trend for the flat ones", async () => {
    const { page } = browser;
    const trends = page.locator('[data-report="trends"]');
    await trends.getByLabel("Of").selectOption("p95Requests");
    const growing = trends.locator(`li[data-forecast-group="${pools[0]!.name}"]`).first();
    await growing.waitFor({ timeout: 30_000 });
    const api = (
      await query(
        `query($since: DateTime!, $until: DateTime!) { capacityReport(groupBy: [{ by: NODE_POOL }], trendsSince: $since, trendsUntil: $until) { groups { key { value } forecast { cpuRequestsFullAt } } } }`,
        { since: new Date(now - 6 * HOUR).toISOString(), until: new Date(now).toISOString() },
      )
    ).capacityReport.groups;
    const fullAt = Date.parse(api.find((g: { key: { value: string }[] }) => g.key[0]!.value === pools[0]!.name).forecast.cpuRequestsFullAt);
    // 40% + 5% an hour reaches 100% twelve hours after the first sampling, six from now (the hourly p95 is each hour's last sample).
    assert.ok(Math.abs(fullAt - (now + 6 * HOUR)) < HOUR, new Date(fullAt).toISOString());
    const shown = Date.parse((await growing.getAttribute("data-full-at"))!);
    assert.ok(Math.abs(shown - fullAt) < 60 * 60_000, `${new Date(shown).toISOString()} against ${new Date(fullAt).toISOString()}`);
    assert.match((await growing.textContent())!, new RegExp(`^${pools[0]!.name}: requests reach allocatable [\\d.]+ cores on \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC \\(in \\d+ hours\\)$`));
    const cpuChart = trends.locator("figure.chart-figure").first();
    assert.equal(await cpuChart.locator(`g[data-forecast="${pools[0]!.name}"] .full-marker`).count(), 1, "a marker where requests reach allocatable");
    assert.equal(await cpuChart.locator(`g[data-forecast="${pools[0]!.name}"] line.projection`).count(), 1);
    for (const pool of pools.slice(1)) {
      const item = cpuChart.locator(`li[data-forecast-group="${pool.name}"]`);
      assert.equal(await item.getAttribute("data-full-at"), "");
      assert.match((await item.textContent())!, /: no trend to full/);
      assert.equal(await cpuChart.locator(`g[data-forecast="${pool.name}"]`).count(), 0, "nothing drawn without a trend");
    }
    await trends.screenshot({ path: join(ARTIFACTS, "reports-forecast.png") });
  });
});
