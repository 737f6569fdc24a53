import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { graphql as execute, type GraphQLSchema } from "graphql";
import { ClusterRegistry } from "../../src/cluster/cluster-registry.js";
import { sourceFromKubeconfigText } from "../../src/cluster/cluster-sources.js";
import type { Database } from "../../src/db/database.js";
import { buildSchema } from "../../src/graphql/schema.js";
import { InventoryService } from "../../src/inventory/inventory-service.js";
import { bytes, cpuMillicores } from "../../src/k8s/quantity.js";
import { createLogger } from "../../src/log/logger.js";
import { capacityResolvers } from "../../src/reports/capacity-resolvers.js";
import { CapacityReports } from "../../src/reports/capacity-service.js";
import { TrendsStore } from "../../src/reports/trends-store.js";
import { UsageSampler } from "../../src/reports/usage-sampler.js";
import { R } from "../../src/sim/index.js";
import { nodeMetrics } from "../../src/sim/metrics.js";
import { migratedDatabase } from "../history/history-fixtures.js";
import { graphql, startTestApp } from "../support/app.js";
import { BACKENDS } from "../support/databases.js";
import { eventually, type SimWithKubeconfig } from "../support/sim-cluster.js";
import { defineNode, definePod, emptySim } from "./known-cluster.js";

const logger = createLogger("silent");
const Gi = 1024 ** 3;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** The first sampling, on an hour three hours ago (so within the raw retention); every later one is a minute on. */
const T0 = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR;

const TRENDS = `query($groupBy: [ReportGrouping!], $filter: NodeFilter, $since: DateTime, $until: DateTime) {
  capacityReport(groupBy: $groupBy, filter: $filter, trendsSince: $since, trendsUntil: $until) {
    total { nodeCount trends { from to samples cpu { peakUsage p95Usage peakRequests p95Requests } memory { peakUsage p95Usage peakRequests p95Requests } } }
    groups { key { value } nodeCount trends { samples cpu { peakUsage p95Usage peakRequests p95Requests } memory { peakUsage p95Usage peakRequests p95Requests } } } } }`;

/** Nearest-rank percentile of equally weighted values: the ceil(p·n)-th smallest. */
function nearestRank(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(p * sorted.length) - 1]!;
}

type Figures = { cpuRequests: number; memoryRequests: number; cpuUsage: number; memoryUsage: number };
/** What one sampling must have seen: per pool, and each node's usage. */
type Sampling = { a: Figures; b: Figures; usage: Record<"a1" | "a2" | "b1", { cpu: number; memory: number }> };

const m4 = { capacity: { cpu: "4", memory: "16Gi", pods: "20" }, allocatable: { cpu: "3800m", memory: "15Gi", pods: "20" } };

for (const backend of BACKENDS) {
  describe(`capacity trends on ${backend.name}`, () => {
    let sim: SimWithKubeconfig;
    let db: Database;
    let dispose: () => Promise<void>;
    let registry: ClusterRegistry;
    let inventory: InventoryService;
    let sampler: UsageSampler;
    /** As a replica configured without label keys samples (before `tier` was configured). */
    let samplerWithoutKeys: UsageSampler;
    let schema: GraphQLSchema;
    const leading = new Set(["sim"]);
    /** Per sampling, per pool: what the sampler must have seen (requests by construction, usage from the simulator). */
    const seen: Sampling[] = [];

    const report = async (variables: Record<string, unknown>) => {
      const result = await execute({ schema, source: TRENDS, variableValues: variables, contextValue: { requestId: "t", logger, loaders: new Map() } });
      assert.equal(result.errors, undefined, JSON.stringify(result.errors));
      return JSON.parse(JSON.stringify(result.data)).capacityReport;
    };
    const rows = () => db.prisma.nodeUsageSample.findMany({ orderBy: [{ at: "asc" }, { node: "asc" }] });
    const hourlyRows = () => db.prisma.nodeUsageHourly.findMany({ orderBy: [{ at: "asc" }, { node: "asc" }] });
    const cache = () => registry.get("sim")!;

    before(async () => {
      sim = await emptySim();
      const c = sim.sim.cluster;
      defineNode(c, { name: "a1", pool: "a", zone: "z1", instanceType: "m4", role: "worker", labels: { tier: "gold" }, ...m4 });
      defineNode(c, { name: "a2", pool: "a", zone: "z1", instanceType: "m4", role: "worker", labels: { tier: "gold" }, ...m4 });
      defineNode(c, { name: "b1", pool: "b", zone: "z1", instanceType: "m4", role: "worker", ...m4 });
      definePod(c, { name: "base-a1", node: "a1", requests: { cpu: "500m", memory: "1Gi" } });
      definePod(c, { name: "base-a2", node: "a2", requests: { cpu: "250m", memory: "1Gi" } });
      definePod(c, { name: "base-b1", node: "b1", requests: { cpu: "2", memory: "4Gi" } });
      ({ db, dispose } = await migratedDatabase(backend));
      registry = new ClusterRegistry([sourceFromKubeconfigText("sim", sim.sim.kubeconfig())], logger, { metricsIntervalMs: 50 });
      registry.start();
      await eventually(() => cache().status().synced && cache().status().metricsAvailable, "sync", 10_000);
      inventory = new InventoryService(registry);
      const store = new TrendsStore(db, logger);
      // Cells are also split by the label `tier` (pool a's nodes are gold, b1 has none).
      const options = { clusters: registry, inventory, store, logger, leads: (name: string) => leading.has(name), intervalSeconds: 60, rawRetentionHours: 48, retentionDays: 90 };
      sampler = new UsageSampler({ ...options, labelKeys: ["tier"] });
      samplerWithoutKeys = new UsageSampler({ ...options, labelKeys: [] });
      schema = buildSchema([capacityResolvers(new CapacityReports(registry, inventory, store, { rawRetentionHours: 48, labelKeys: ["tier"] }))]);
    });
    after(async () => {
      await registry.stop();
      await dispose();
      await sim.stop();
    });

    /** Pods `burst` (1 core, 1Gi on a1) and `spike` (3 cores on a2) present or not; the cache caught up with them and with the metrics. */
    const arrange = async (burst: boolean, spike: boolean): Promise<Sampling> => {
      const c = sim.sim.cluster;
      const has = (name: string) => Boolean(c.get(R.pods, name, "default"));
      if (burst && !has("burst")) definePod(c, { name: "burst", node: "a1", requests: { cpu: "1", memory: "1Gi" } });
      if (!burst && has("burst")) c.store.remove(R.pods, "default/burst");
      if (spike && !has("spike")) definePod(c, { name: "spike", node: "a2", requests: { cpu: "3" } });
      if (!spike && has("spike")) c.store.remove(R.pods, "default/spike");
      c.advance(MINUTE);
      const expectedUsage = (name: string) => {
        const m = nodeMetrics(c, c.get(R.nodes, name)!) as { usage: { cpu: string; memory: string } };
        return { cpu: cpuMillicores(m.usage.cpu), memory: bytes(m.usage.memory) };
      };
      const requests = { a1: 500 + (burst ? 1000 : 0), a2: 250 + (spike ? 3000 : 0), b1: 2000 };
      await eventually(
        () =>
          (["a1", "a2", "b1"] as const).every((name) => {
            const node = cache().node(name)!;
            const usage = cache().usage(name);
            return inventory.podTotals(node).requests.cpu === requests[name] && usage?.cpuMillicores === expectedUsage(name).cpu && usage.memoryBytes === expectedUsage(name).memory;
          }),
        "the cache sees the pods and the metrics",
        10_000,
      );
      const u = { a1: expectedUsage("a1"), a2: expectedUsage("a2"), b1: expectedUsage("b1") };
      return {
        a: { cpuRequests: requests.a1 + requests.a2, memoryRequests: (burst ? 3 : 2) * Gi, cpuUsage: u.a1.cpu + u.a2.cpu, memoryUsage: u.a1.memory + u.a2.memory },
        b: { cpuRequests: 2000, memoryRequests: 4 * Gi, cpuUsage: u.b1.cpu, memoryUsage: u.b1.memory },
        usage: u,
      };
    };

    test("each sampling writes one row per node at the interval boundary; a repeat writes nothing", async () => {
      // 20 samplings a minute apart, each taken 17 s into its minute: burst at samplings 5-7, spike at 12.
      for (let i = 0; i < 20; i++) {
        seen.push(await arrange(i >= 5 && i <= 7, i === 12));
        assert.equal(await sampler.sampleAt(new Date(T0 + i * MINUTE + 17_000)), 3);
      }
      assert.equal(await sampler.sampleAt(new Date(T0 + 19 * MINUTE + 59_000)), 0, "the same interval again: already written");
      const all = await rows();
      assert.equal(all.length, 60);
      assert.deepEqual(
        [...new Set(all.map((r) => r.at.getTime()))],
        Array.from({ length: 20 }, (_, i) => T0 + i * MINUTE),
      );
      assert.deepEqual(
        all.filter((r) => r.node === "a1").map((r) => r.cpuRequests),
        Array.from({ length: 20 }, (_, i) => (i >= 5 && i <= 7 ? 1500 : 500)),
      );
    });

    test("a replica that does not lead the cluster samples nothing", async () => {
      leading.delete("sim");
      try {
        assert.equal(await sampler.sampleAt(new Date(T0 + 30 * MINUTE)), 0);
      } finally {
        leading.add("sim");
      }
    });

    /** By pool: read from the cell rows. By the node-pool label (same groups): read from the node rows. */
    const BY_CELL = [{ by: "NODE_POOL" }];
    const BY_NODE = [{ by: "LABEL", labelKey: "node-pool" }];
    /** By a label key configured for trends: read from the cell rows when every row of the period carries it. */
    const BY_TIER = [{ by: "LABEL", labelKey: "tier" }];
    /** The trends of a report, without the dimension names (which differ between the two groupings). */
    const trendsOf = (r: any) => ({ groups: r.groups.map((g: any) => [g.key.map((k: any) => k.value), g.nodeCount, g.trends]), total: r.total.trends });

    test("per group over a short recent period: the nodes summed per sampling, then the peak and the nearest-rank p95 over the samplings", async () => {
      const period = { since: new Date(T0).toISOString(), until: new Date(T0 + HOUR).toISOString() };
      const r = await report({ groupBy: BY_CELL, ...period });
      const expected = (pick: (s: Sampling) => Figures) => {
        const series = seen.map(pick);
        const trend = (values: number[]) => ({ peak: Math.max(...values), p95: nearestRank(values, 0.95) });
        const cpuU = trend(series.map((s) => s.cpuUsage));
        const cpuR = trend(series.map((s) => s.cpuRequests));
        const memU = trend(series.map((s) => s.memoryUsage));
        const memR = trend(series.map((s) => s.memoryRequests));
        return {
          samples: 20,
          cpu: { peakUsage: cpuU.peak, p95Usage: cpuU.p95, peakRequests: cpuR.peak, p95Requests: cpuR.p95 },
          memory: { peakUsage: memU.peak, p95Usage: memU.p95, peakRequests: memR.peak, p95Requests: memR.p95 },
        };
      };
      const sum = (s: Sampling): Figures => ({
        cpuRequests: s.a.cpuRequests + s.b.cpuRequests,
        memoryRequests: s.a.memoryRequests + s.b.memoryRequests,
        cpuUsage: s.a.cpuUsage + s.b.cpuUsage,
        memoryUsage: s.a.memoryUsage + s.b.memoryUsage,
      });
      assert.deepEqual(
        r.groups.map((g: any) => g.key[0].value),
        ["a", "b"],
      );
      assert.deepEqual(
        r.groups[0].trends,
        expected((s) => s.a),
      );
      assert.deepEqual(
        r.groups[1].trends,
        expected((s) => s.b),
      );
      assert.deepEqual({ ...r.total.trends, from: undefined, to: undefined }, { ...expected(sum), from: undefined, to: undefined });
      assert.deepEqual([r.total.trends.from, r.total.trends.to], [period.since, period.until]);
      // By hand, for cpu requests of pool a: 16 samplings at 750, three at 1750, one at 3750.
      assert.deepEqual([r.groups[0].trends.cpu.peakRequests, r.groups[0].trends.cpu.p95Requests], [3750, 1750]);
      assert.deepEqual([r.total.trends.cpu.peakRequests, r.total.trends.cpu.p95Requests], [5750, 3750]);
      assert.deepEqual(trendsOf(await report({ groupBy: BY_NODE, ...period })), trendsOf(r), "node rows give the same answer as cell rows");
      assert.deepEqual((await report({ groupBy: BY_CELL, filter: { labelSelector: "node-pool" }, ...period })).total.trends, r.total.trends, "a filter: node rows");

      const window = await report({ since: new Date(T0 + 5 * MINUTE).toISOString(), until: new Date(T0 + 8 * MINUTE).toISOString() });
      assert.equal(window.total.trends.samples, 3, "[since, until) holds samplings 5, 6 and 7");
      assert.deepEqual([window.total.trends.cpu.peakRequests, window.total.trends.cpu.p95Requests], [3750, 3750]);
      const empty = await report({ since: new Date(T0 - HOUR).toISOString(), until: new Date(T0).toISOString() });
      assert.deepEqual(empty.total.trends.samples, 0);
      assert.deepEqual(empty.total.trends.cpu, { peakUsage: null, p95Usage: null, peakRequests: 0, p95Requests: 0 });
    });

    test("by a label key configured for trends: the same figures as by node rows; rows sampled before the key was configured are read by node", async () => {
      const period = { since: new Date(T0).toISOString(), until: new Date(T0 + HOUR).toISOString() };
      const byPool = await report({ groupBy: BY_CELL, ...period });
      const byTier = await report({ groupBy: BY_TIER, ...period });
      assert.deepEqual(
        byTier.groups.map((g: any) => [g.key[0].value, g.nodeCount]),
        [
          ["gold", 2],
          [null, 1],
        ],
      );
      assert.deepEqual(
        byTier.groups.map((g: any) => g.trends),
        byPool.groups.map((g: any) => g.trends),
        "gold is pool a, no tier is pool b",
      );
      assert.deepEqual(trendsOf(await report({ groupBy: BY_TIER, filter: { labelSelector: "node-pool" }, ...period })), trendsOf(byTier), "a filter: node rows, the same answer");
      assert.deepEqual(
        [...new Set((await db.prisma.cellUsageSample.findMany({ where: { at: { gte: new Date(T0), lt: new Date(T0 + HOUR) } } })).map((r) => JSON.stringify([r.pool, r.labels])))].sort(),
        [JSON.stringify(["a", { tier: "gold" }]), JSON.stringify(["b", { tier: null }])],
        "each cell row carries the configured key's value",
      );

      // Two samplings by a replica without label keys, then two with: the cells of the first two
      // cannot say which tier their nodes had, so the report reads node rows and counts all four.
      const later = T0 + 120 * HOUR;
      try {
        await samplerWithoutKeys.sampleAt(new Date(later));
        await samplerWithoutKeys.sampleAt(new Date(later + MINUTE));
        await sampler.sampleAt(new Date(later + 2 * MINUTE));
        await sampler.sampleAt(new Date(later + 3 * MINUTE));
        const mixed = await report({ groupBy: BY_TIER, since: new Date(later).toISOString(), until: new Date(later + HOUR).toISOString() });
        const current = seen.at(-1)!;
        assert.deepEqual(
          mixed.groups.map((g: any) => [g.key[0].value, g.trends.samples, g.trends.cpu.peakRequests]),
          [
            ["gold", 4, current.a.cpuRequests],
            [null, 4, current.b.cpuRequests],
          ],
        );
      } finally {
        for (const table of [db.prisma.nodeUsageSample, db.prisma.cellUsageSample] as any[]) await table.deleteMany({ where: { at: { gte: new Date(later) } } });
      }
    });

    test("over a longer period, hour by hour: the same answer from raw rows as after they are rolled up and deleted", async () => {
      const period = { since: new Date(T0 + 10 * MINUTE).toISOString(), until: new Date(T0 + 7 * HOUR).toISOString() };
      const byCell = await report({ groupBy: BY_CELL, ...period });
      const byNode = await report({ groupBy: BY_NODE, ...period });
      const byTier = await report({ groupBy: BY_TIER, ...period });
      assert.equal(byCell.total.trends.from, new Date(T0).toISOString(), "whole hours, from the one `since` falls in");
      // Cell rows: pool a's sums over the hour are 750 x16, 1750 x3, 3750 -> hourly p95 1750, max 3750: exact.
      const a = byCell.groups[0].trends;
      assert.deepEqual([a.samples, a.cpu.peakRequests, a.cpu.p95Requests], [1, 3750, 1750]);
      assert.deepEqual(
        [a.cpu.peakUsage, a.cpu.p95Usage],
        [
          Math.max(...seen.map((s) => s.a.cpuUsage)),
          nearestRank(
            seen.map((s) => s.a.cpuUsage),
            0.95,
          ),
        ],
      );
      // Node rows: a1 is 500 x17 and 1500 x3 (p95 1500, max 1500), a2 is 250 x19 and 3250 (p95 250, max 3250):
      // the hour's p95 is 1500 + 250, its peak 1500 + 3250, above the true 3750.
      const n = byNode.groups[0].trends;
      assert.deepEqual([n.samples, n.cpu.peakRequests, n.cpu.p95Requests], [1, 4750, 1750]);
      const usage = (node: "a1" | "a2") => seen.map((s) => s.usage[node].cpu);
      assert.deepEqual([n.cpu.peakUsage, n.cpu.p95Usage], [Math.max(...usage("a1")) + Math.max(...usage("a2")), nearestRank(usage("a1"), 0.95) + nearestRank(usage("a2"), 0.95)]);
      assert.ok(n.cpu.peakUsage >= a.cpu.peakUsage, "an hourly peak is never below the true one");
      assert.deepEqual(byTier.groups[0].trends, a, "by the configured label key: cell rows, exact as by pool");

      assert.deepEqual(await sampler.housekeep(new Date()), { rolledUp: 3, deleted: 0 });
      assert.deepEqual(
        (await hourlyRows()).map((r) => [r.node, r.at.getTime(), r.samples, r.cpuRequests, r.cpuRequestsPeak, r.memoryRequests, r.memoryRequestsPeak]),
        [
          ["a1", T0, 20, 1500, 1500, 2 * Gi, 2 * Gi],
          ["a2", T0, 20, 250, 3250, Gi, Gi],
          ["b1", T0, 20, 2000, 2000, 4 * Gi, 4 * Gi],
        ],
      );
      assert.deepEqual(
        (await db.prisma.cellUsageHourly.findMany({ orderBy: { cell: "asc" } })).map((r) => [r.pool, r.zone, r.instanceType, r.role, r.labels, r.samples, r.cpuRequests, r.cpuRequestsPeak]),
        [
          ["a", "z1", "m4", "worker", { tier: "gold" }, 20, 1750, 3750],
          ["b", "z1", "m4", "worker", { tier: null }, 20, 2000, 2000],
        ],
      );
      assert.deepEqual(await report({ groupBy: BY_CELL, ...period }), byCell, "rolled up: the same answer");
      assert.deepEqual(await report({ groupBy: BY_NODE, ...period }), byNode, "rolled up: the same answer");
      assert.deepEqual(await report({ groupBy: BY_TIER, ...period }), byTier, "rolled up: the same answer");
      assert.deepEqual(await sampler.housekeep(new Date()), { rolledUp: 0, deleted: 0 }, "nothing new to roll up");

      // Three samplings two hours on, with burst and spike, not rolled up yet: read from raw rows.
      for (let i = 0; i < 3; i++) {
        await arrange(true, true);
        await sampler.sampleAt(new Date(T0 + 2 * HOUR + i * MINUTE));
      }
      // Pool a's second hour: 1500 + 3250 = 4750 in every sampling. Points 1750 and 4750: p95 (2nd of 2) 4750.
      const mixed = { byCell: await report({ groupBy: BY_CELL, ...period }), byNode: await report({ groupBy: BY_NODE, ...period }) };
      assert.deepEqual([mixed.byCell.groups[0].trends.samples, mixed.byCell.groups[0].trends.cpu.peakRequests, mixed.byCell.groups[0].trends.cpu.p95Requests], [2, 4750, 4750]);
      assert.deepEqual([mixed.byNode.groups[0].trends.samples, mixed.byNode.groups[0].trends.cpu.peakRequests, mixed.byNode.groups[0].trends.cpu.p95Requests], [2, 4750, 4750]);

      const store = new TrendsStore(db, logger);
      assert.equal(await store.dropRawRows("sim", new Date(T0 + 50 * HOUR)), 60, "only the raw rows of hours rolled up go");
      assert.equal((await rows()).length, 9);
      assert.deepEqual(await sampler.housekeep(new Date(T0 + 51 * HOUR)), { rolledUp: 3, deleted: 9 }, "the later hour rolled up, then its raw rows past the raw retention dropped");
      assert.deepEqual(await db.prisma.cellUsageSample.count(), 0);
      assert.deepEqual({ byCell: await report({ groupBy: BY_CELL, ...period }), byNode: await report({ groupBy: BY_NODE, ...period }) }, mixed, "rolled up and deleted: the same answer");
    });

    test("a node deleted during the period still counts: by cell as sampled, by node in the group its recorded labels give it", async () => {
      const store = new TrendsStore(db, logger);
      const sample = { cpuUsage: 100, memoryUsage: Gi, cpuRequests: 700, memoryRequests: Gi };
      await db.prisma.nodeState.createMany({
        data: [
          {
            cluster: "sim",
            name: "c1",
            uid: "u1",
            conditions: { Ready: "True" },
            unschedulable: false,
            kubeletVersion: "v1",
            containerRuntime: "containerd://1",
            labels: { "node-pool": "c" },
            taints: [],
            firstSeenAt: new Date(T0 - HOUR),
            deletedAt: new Date(T0 + 100 * HOUR + 30 * MINUTE),
          },
          {
            cluster: "sim",
            name: "old",
            uid: "u2",
            conditions: { Ready: "True" },
            unschedulable: false,
            kubeletVersion: "v1",
            containerRuntime: "containerd://1",
            labels: { "node-pool": "d" },
            taints: [],
            firstSeenAt: new Date(T0 - 3 * HOUR),
            deletedAt: new Date(T0 + 98 * HOUR),
          },
        ],
      });
      await store.writeSampling("sim", new Date(T0 + 100 * HOUR), [{ node: "c1", cell: ["c", null, null, null], labels: {}, ...sample }]);
      await store.writeSampling("sim", new Date(T0 + 97 * HOUR), [{ node: "old", cell: ["d", null, null, null], labels: {}, ...sample }]);
      const period = { since: new Date(T0 + 99 * HOUR).toISOString(), until: new Date(T0 + 101 * HOUR).toISOString() };
      const expected = [
        [["a"], 2, 0, 0],
        [["b"], 1, 0, 0],
        [["c"], 0, 1, 700],
      ];
      const summary = (r: any) => r.groups.map((g: any) => [g.key.map((k: any) => k.value), g.nodeCount, g.trends.samples, g.trends.cpu.peakRequests]);
      assert.deepEqual(summary(await report({ groupBy: BY_CELL, ...period })), expected, "pool c is shown for its samples; `old`'s are before the period");
      assert.deepEqual(summary(await report({ groupBy: BY_NODE, ...period })), expected);
      const ready = await execute({
        schema,
        source: `query($s: DateTime, $u: DateTime) { capacityReport(filter: { ready: true }, groupBy: [{ by: NODE_POOL }], trendsSince: $s, trendsUntil: $u) { groups { key { value } trends { samples } } } }`,
        variableValues: { s: period.since, u: period.until },
        contextValue: { requestId: "t", logger, loaders: new Map() },
      });
      assert.deepEqual(
        JSON.parse(JSON.stringify(ready.data)).capacityReport.groups.map((g: any) => [g.key[0].value, g.trends.samples]),
        [
          ["a", 0],
          ["b", 0],
          ["c", 1],
        ],
        "filtered: node rows, c1 matched as last recorded (Ready)",
      );
    });

    test("retention deletes rows older than the history retention; a database that fails makes trends UNAVAILABLE, not the live figures", async () => {
      assert.ok((await rows()).length > 0 && (await hourlyRows()).length > 0);
      const done = await sampler.housekeep(new Date(T0 + 100 * 24 * HOUR));
      assert.ok(done.deleted > 0);
      assert.deepEqual([(await rows()).length, (await hourlyRows()).length], [0, 0], "every row is older than 90 days");

      await db.close();
      const live = await execute({ schema, source: `{ capacityReport { total { nodeCount } } }`, contextValue: { requestId: "t", logger, loaders: new Map() } });
      assert.equal(live.errors, undefined);
      const trends = await execute({ schema, source: TRENDS, variableValues: { since: new Date(T0).toISOString() }, contextValue: { requestId: "t", logger, loaders: new Map() } });
      assert.equal(trends.errors?.[0]?.extensions.code, "UNAVAILABLE");
      assert.equal(trends.errors?.[0]?.message, "the trends database cannot be reached");
    });
  });
}

describe("the service samples on its own", () => {
  test("as the leader, at each interval boundary, until it stops", async () => {
    const sim = await emptySim();
    defineNode(sim.sim.cluster, { name: "a1", pool: "a", zone: "z1", instanceType: "m4", role: "worker", ...m4 });
    defineNode(sim.sim.cluster, { name: "b1", pool: "b", zone: "z1", instanceType: "m4", role: "worker", ...m4 });
    const { db, dispose } = await migratedDatabase(BACKENDS[0]!);
    const { app, url } = await startTestApp(
      { clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] }, trends: { intervalSeconds: 1, rawRetentionHours: 48, labelKeys: [] } },
      { database: db, recorderTuning: { leaseDurationMs: 1_500, retryPeriodMs: 200 } },
    );
    try {
      const all = await eventually(
        async () => {
          const found = await db.prisma.nodeUsageSample.findMany({ orderBy: { at: "asc" } });
          return new Set(found.map((r) => r.at.getTime())).size >= 3 && found;
        },
        "three samplings",
        10_000,
      );
      assert.ok(
        all.every((r) => r.at.getTime() % 1000 === 0),
        "stamped on whole seconds",
      );
      const perTime = new Map<number, string[]>();
      for (const r of all) perTime.set(r.at.getTime(), [...(perTime.get(r.at.getTime()) ?? []), r.node].sort());
      assert.ok(
        [...perTime.values()].every((nodes) => nodes.join() === "a1,b1"),
        "every node in every sampling",
      );
      const since = new Date(all[0]!.at.getTime()).toISOString();
      const { body } = await graphql(url, `query($s: DateTime) { capacityReport(trendsSince: $s) { total { trends { samples cpu { peakRequests } } } } }`, { s: since });
      assert.ok(body.data.capacityReport.total.trends.samples >= 3);
    } finally {
      // That nothing runs after stop() is the periodic task's promise (test/lifecycle/periodic-task).
      await app.stop();
      await dispose();
      await sim.stop();
    }
  });
});
