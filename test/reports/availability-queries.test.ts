import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Database } from "../../src/db/database.js";
import { AppError } from "../../src/graphql/errors.js";
import { AvailabilityQueries } from "../../src/reports/availability-queries.js";
import type { AvailabilityGroup, NodeAvailability } from "../../src/reports/availability-report.js";
import { at, countingDatabase, migratedDatabase, type StatementCounts } from "../history/history-fixtures.js";
import { BACKENDS } from "../support/databases.js";
import { coverage, FROM, min, nodeState, seedHistory, TO } from "./availability-fixtures.js";

// The history of availability-fixtures.ts; every expected figure is worked out in its comments.

type Figures = Omit<NodeAvailability, "cluster" | "node" | "key" | "availability">;
const none = { unobservedSeconds: 0, notReadySeconds: 0, unknownSeconds: 0, outages: 0, longestOutageSeconds: 0, mttrSeconds: null, flaps: 0, maintenanceSeconds: 0, reboots: 0, deleted: false };

const EXPECTED: Record<string, Figures> = {
  a: {
    observedSeconds: min(600),
    unobservedSeconds: 0,
    readySeconds: min(568),
    notReadySeconds: min(12),
    unknownSeconds: min(20),
    outages: 3,
    longestOutageSeconds: min(20),
    mttrSeconds: min(61),
    flaps: 1,
    maintenanceSeconds: min(100),
    reboots: 2,
    deleted: false,
  },
  b: { ...none, observedSeconds: min(450), readySeconds: min(400), unknownSeconds: min(50), outages: 1, longestOutageSeconds: min(50), maintenanceSeconds: min(60), deleted: true },
  c: {
    ...none,
    observedSeconds: min(500),
    readySeconds: min(497),
    notReadySeconds: min(3),
    outages: 1,
    longestOutageSeconds: min(3),
    mttrSeconds: min(3),
    flaps: 1,
    maintenanceSeconds: min(500),
    reboots: 1,
  },
  f: { ...none, observedSeconds: min(540), readySeconds: min(540) },
  g: { ...none, observedSeconds: min(600), readySeconds: min(600), maintenanceSeconds: min(50) },
};

function figures(n: NodeAvailability): Figures {
  const { cluster: _c, node: _n, key: _k, availability: _a, ...rest } = n;
  return rest;
}

for (const backend of BACKENDS) {
  describe(`availability report from recorded history on ${backend.name}`, () => {
    let db: Database;
    let dispose: () => Promise<void>;
    let queries: AvailabilityQueries;
    let counts: StatementCounts;

    before(async () => {
      ({ db, dispose } = await migratedDatabase(backend));
      await seedHistory(db);
      const counting = countingDatabase(db);
      counts = counting.counts;
      queries = new AvailabilityQueries(counting.database);
    });
    after(() => dispose());

    test("every node's figures over the period, boundaries handled exactly", async () => {
      const report = await queries.report({ cluster: "prod", from: FROM, to: TO });
      assert.deepEqual(
        report.nodes.map((n) => n.node),
        ["a", "b", "c", "f", "g"],
      );
      for (const node of report.nodes) assert.deepEqual(figures(node), EXPECTED[node.node], `node ${node.node}`);
      assert.equal(report.nodes[0]!.availability, 0.946667);
    });

    test("groups by zone", async () => {
      const report = await queries.report({ cluster: "prod", from: FROM, to: TO, groupBy: [{ by: "ZONE" }], flapThresholdSeconds: 300 });
      const [zoneA, zoneB] = report.groups as [AvailabilityGroup, AvailabilityGroup];
      assert.equal(report.groups.length, 2);
      assert.deepEqual(zoneA, {
        key: [{ dimension: "ZONE", value: "a" }],
        nodeCount: 3,
        observedSeconds: min(600 + 450 + 540),
        unobservedSeconds: 0,
        readySeconds: min(568 + 400 + 540),
        notReadySeconds: min(12),
        unknownSeconds: min(20 + 50),
        availability: 0.948428,
        outages: 4,
        longestOutageSeconds: min(50),
        mttrSeconds: min(61),
        flaps: 1,
        maintenanceSeconds: min(160),
        reboots: 2,
      });
      assert.deepEqual(zoneB, {
        key: [{ dimension: "ZONE", value: "b" }],
        nodeCount: 2,
        observedSeconds: min(1100),
        unobservedSeconds: 0,
        readySeconds: min(1097),
        notReadySeconds: min(3),
        unknownSeconds: 0,
        availability: 0.997273,
        outages: 1,
        longestOutageSeconds: min(3),
        mttrSeconds: min(3),
        flaps: 1,
        maintenanceSeconds: min(550),
        reboots: 1,
      });
      assert.equal(report.total.nodeCount, 5);
      assert.equal(report.total.reboots, 3);
      assert.equal(report.total.mttrSeconds, min((120 + 2 + 3) / 3));
    });

    test("a flap threshold of 3 minutes or more counts c's 3-minute boot as no flap; 0 counts none", async () => {
      const total = async (flapThresholdSeconds: number) => (await queries.report({ cluster: "prod", from: FROM, to: TO, flapThresholdSeconds })).total.flaps;
      assert.equal(await total(180), 1);
      assert.equal(await total(181), 2);
      assert.equal(await total(0), 0);
    });

    test("without a cluster every cluster is reported; an unknown cluster has no nodes", async () => {
      const all = await queries.report({ from: FROM, to: TO });
      assert.deepEqual(
        all.nodes.map((n) => `${n.cluster}/${n.node}`),
        ["dev/a", "prod/a", "prod/b", "prod/c", "prod/f", "prod/g"],
      );
      const none = await queries.report({ cluster: "nowhere", from: FROM, to: TO });
      assert.deepEqual([none.nodes, none.groups, none.total.nodeCount], [[], [], 0]);
    });

    test("a period ending inside an outage and one starting inside it split its seconds and count its recovery once", async () => {
      const first = await queries.report({ cluster: "prod", from: at(-200), to: at(10) });
      const second = await queries.report({ cluster: "prod", from: at(10), to: at(600) });
      const nodeA = (r: typeof first) => r.nodes.find((n) => n.node === "a")!;
      assert.deepEqual([nodeA(first).outages, nodeA(first).mttrSeconds, nodeA(first).notReadySeconds + nodeA(first).unknownSeconds], [1, null, min(110)]);
      assert.deepEqual([nodeA(second).outages, nodeA(second).mttrSeconds, nodeA(second).unknownSeconds], [3, min(61), min(10)]);
    });

    test("a gap in the recording is unobserved: neither available nor an outage", async () => {
      // gap/a: Ready since minute -100, NotReady 250-260 while nobody recorded (200-300), then
      // NotReady 400-410 while recorded. A stretch before the period and one after count nothing.
      await coverage(db, "gap", -3000, -2000);
      await coverage(db, "gap", -100, 200);
      await coverage(db, "gap", 300, 2000);
      await nodeState(db, "gap", "a", "gap-a1");
      for (const [minute, from, to] of [
        [-100, null, "True"],
        [250, "True", "False"],
        [260, "False", "True"],
        [400, "True", "False"],
        [410, "False", "True"],
      ] as const) {
        await db.prisma.conditionTransition.create({ data: { cluster: "gap", node: "a", type: "Ready", from, to, at: at(minute) } });
      }
      const report = await queries.report({ cluster: "gap", from: FROM, to: TO });
      assert.deepEqual(figures(report.nodes[0]!), {
        ...none,
        observedSeconds: min(500),
        unobservedSeconds: min(100),
        readySeconds: min(490),
        notReadySeconds: min(10),
        outages: 1,
        longestOutageSeconds: min(10),
        mttrSeconds: min(10),
      });
      assert.deepEqual([report.total.observedSeconds, report.total.unobservedSeconds], [min(500), min(100)]);
    });

    test("a cluster nobody recorded has no node observed", async () => {
      await nodeState(db, "unwatched", "a", "unwatched-a1");
      await db.prisma.conditionTransition.create({ data: { cluster: "unwatched", node: "a", type: "Ready", from: null, to: "True", at: at(-100) } });
      const report = await queries.report({ cluster: "unwatched", from: FROM, to: TO });
      assert.deepEqual([report.nodes, report.total.nodeCount], [[], 0]);
    });

    test("one report is five SQL statements, however many nodes", async () => {
      counts.reset();
      await queries.report({ from: FROM, to: TO, groupBy: [{ by: "ZONE" }] });
      assert.equal(counts.total(), 5);
      await coverage(db, "bulk", -10, 1000);
      for (let i = 0; i < 200; i++) await nodeState(db, "bulk", `n${i}`, `bulk-${i}`);
      counts.reset();
      const report = await queries.report({ from: FROM, to: TO });
      assert.equal(counts.total(), 5);
      assert.equal(report.nodes.length, 207);
    });

    test("bad arguments are BAD_USER_INPUT before any query", async () => {
      counts.reset();
      for (const args of [
        { from: TO, to: FROM },
        { from: FROM, to: TO, flapThresholdSeconds: -5 },
        { from: FROM, to: TO, groupBy: [{ by: "ROLE" as const }, { by: "ROLE" as const }] },
      ]) {
        await assert.rejects(queries.report(args), (error: unknown) => error instanceof AppError && error.extensions.code === "BAD_USER_INPUT");
      }
      assert.equal(counts.total(), 0);
    });
  });
}
