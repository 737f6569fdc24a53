import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Database } from "../../src/db/database.js";
import { AppError } from "../../src/graphql/errors.js";
import { AvailabilityQueries } from "../../src/reports/availability-queries.js";
import type { AvailabilityGroup, NodeAvailability } from "../../src/reports/availability-report.js";
import { at, countingDatabase, migratedDatabase, type StatementCounts } from "../history/history-fixtures.js";
import { BACKENDS } from "../support/databases.js";

// History written row by row with exact timestamps, minutes from 2026-01-01T00:00Z. The
// report is over [minute 0, minute 600); every expected figure is worked out in the comments.
const FROM = at(0);
const TO = at(600);
const min = (m: number) => m * 60;
const ZONE = "topology.kubernetes.io/zone";
const OP = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;

async function nodeState(
  db: Database,
  cluster: string,
  name: string,
  uid: string,
  o: { zone?: string; ready?: string; unschedulable?: boolean; deletedAt?: number } = {},
) {
  await db.prisma.nodeState.create({
    data: {
      cluster,
      name,
      uid,
      conditions: { Ready: o.ready ?? "True", MemoryPressure: "False" },
      unschedulable: o.unschedulable ?? false,
      kubeletVersion: "v1.31.2",
      containerRuntime: "containerd://1.7.24",
      labels: o.zone ? { [ZONE]: o.zone } : {},
      taints: [],
      firstSeenAt: at(-5000),
      deletedAt: o.deletedAt === undefined ? null : at(o.deletedAt),
    },
  });
}

async function ready(db: Database, cluster: string, node: string, transitions: [minute: number, from: string | null, to: string][], type = "Ready") {
  for (const [minute, from, to] of transitions) await db.prisma.conditionTransition.create({ data: { cluster, node, type, from, to, at: at(minute) } });
}

async function lifetime(db: Database, cluster: string, node: string, field: "CREATED" | "DELETED", uid: string, minute: number) {
  const data = field === "CREATED" ? { before: undefined, after: { uid } } : { before: { uid }, after: undefined };
  await db.prisma.nodeChange.create({ data: { cluster, node, field, ...data, at: at(minute), key: `${field}:${uid}` } });
}

let dedupe = 0;
async function event(db: Database, cluster: string, node: string, kind: string, minute: number, operationId: string | null = null) {
  await db.prisma.maintenanceEvent.create({ data: { cluster, node, kind, actor: "alice", at: at(minute), operationId, dedupeKey: `k${++dedupe}` } });
}

/**
 * prod/a (zone a): an outage from -100 to 20 across `from` (full length 120), a 2-minute flap
 * at 300, an outage from 590 across `to`; cordoned 100–200 with a drain 110–130 inside.
 *   ready 20–300 + 302–590 = 568, notReady 2 + 10, unknown 20 (0–20); MTTR (120 + 2) / 2 = 61.
 * prod/b (zone a): Ready, Unknown from 400, deleted at 450; a drain from -50 to 60 (and an
 *   earlier one, ended before the period, that must not count).
 * prod/c (zone b): created at 100, NotReady for 3 minutes while booting; recorded unschedulable
 *   with no cordon event, so cordoned all its life.
 * prod/d: deleted before the period. prod/e: created after it. Neither is in the report.
 * prod/f (zone a): deleted at 200, created again as a new object at 250, Ready from 260.
 * prod/g (zone b): no Ready rows before `to` (pruned), recorded NotReady now, but a transition
 *   after `to` says it was Ready until 650; uncordoned at 50 with nothing earlier.
 * dev/a: Ready throughout, in another cluster.
 */
async function seedHistory(db: Database): Promise<void> {
  await nodeState(db, "prod", "a", "a1", { zone: "a", ready: "True" });
  await lifetime(db, "prod", "a", "CREATED", "a1", -2000);
  await ready(db, "prod", "a", [[-1000, null, "True"], [-100, "True", "False"], [-30, "False", "Unknown"], [20, "Unknown", "True"], [300, "True", "False"], [302, "False", "True"], [590, "True", "False"], [700, "False", "True"]]);
  await ready(db, "prod", "a", [[100, "False", "True"], [130, "True", "False"]], "MemoryPressure");
  await event(db, "prod", "a", "CORDONED", 100);
  await event(db, "prod", "a", "DRAIN_STARTED", 110, OP(1));
  await event(db, "prod", "a", "POD_EVICTED", 111, OP(1));
  await event(db, "prod", "a", "DRAIN_SUCCEEDED", 130, OP(1));
  await event(db, "prod", "a", "UNCORDONED", 200);

  await nodeState(db, "prod", "b", "b1", { zone: "a", ready: "Unknown", deletedAt: 450 });
  await lifetime(db, "prod", "b", "CREATED", "b1", -500);
  await ready(db, "prod", "b", [[-500, null, "True"], [400, "True", "Unknown"]]);
  await lifetime(db, "prod", "b", "DELETED", "b1", 450);
  await event(db, "prod", "b", "DRAIN_STARTED", -300, OP(3));
  await event(db, "prod", "b", "DRAIN_SUCCEEDED", -200, OP(3));
  await event(db, "prod", "b", "DRAIN_STARTED", -50, OP(2));
  await event(db, "prod", "b", "DRAIN_FAILED", 60, OP(2));

  await nodeState(db, "prod", "c", "c1", { zone: "b", ready: "True", unschedulable: true });
  await lifetime(db, "prod", "c", "CREATED", "c1", 100);
  await ready(db, "prod", "c", [[100, null, "False"], [103, "False", "True"]]);

  await nodeState(db, "prod", "d", "d1", { zone: "a", deletedAt: -100 });
  await lifetime(db, "prod", "d", "CREATED", "d1", -900);
  await ready(db, "prod", "d", [[-900, null, "True"]]);
  await lifetime(db, "prod", "d", "DELETED", "d1", -100);

  await nodeState(db, "prod", "e", "e1", { zone: "b" });
  await lifetime(db, "prod", "e", "CREATED", "e1", 700);
  await ready(db, "prod", "e", [[700, null, "True"]]);

  await nodeState(db, "prod", "f", "f2", { zone: "a" });
  await lifetime(db, "prod", "f", "CREATED", "f1", -2000);
  await ready(db, "prod", "f", [[-2000, null, "True"]]);
  await lifetime(db, "prod", "f", "DELETED", "f1", 200);
  await lifetime(db, "prod", "f", "CREATED", "f2", 250);
  await ready(db, "prod", "f", [[260, null, "True"]]);

  await nodeState(db, "prod", "g", "g1", { zone: "b", ready: "False" });
  await ready(db, "prod", "g", [[650, "True", "False"]]);
  await event(db, "prod", "g", "UNCORDONED", 50);

  await nodeState(db, "dev", "a", "dev-a1", { zone: "a" });
  await ready(db, "dev", "a", [[-100, null, "True"]]);
}

type Figures = Omit<NodeAvailability, "cluster" | "node" | "key" | "availability">;
const none = { notReadySeconds: 0, unknownSeconds: 0, outages: 0, longestOutageSeconds: 0, mttrSeconds: null, flaps: 0, maintenanceSeconds: 0, deleted: false };

const EXPECTED: Record<string, Figures> = {
  a: { observedSeconds: min(600), readySeconds: min(568), notReadySeconds: min(12), unknownSeconds: min(20), outages: 3, longestOutageSeconds: min(20), mttrSeconds: min(61), flaps: 1, maintenanceSeconds: min(100), deleted: false },
  b: { ...none, observedSeconds: min(450), readySeconds: min(400), unknownSeconds: min(50), outages: 1, longestOutageSeconds: min(50), maintenanceSeconds: min(60), deleted: true },
  c: { ...none, observedSeconds: min(500), readySeconds: min(497), notReadySeconds: min(3), outages: 1, longestOutageSeconds: min(3), mttrSeconds: min(3), flaps: 1, maintenanceSeconds: min(500) },
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
      assert.equal(report.nodes[0]!.availability, 568 / 600);
    });

    test("groups by zone", async () => {
      const report = await queries.report({ cluster: "prod", from: FROM, to: TO, groupBy: [{ by: "ZONE" }], flapThresholdSeconds: 300 });
      const [zoneA, zoneB] = report.groups as [AvailabilityGroup, AvailabilityGroup];
      assert.equal(report.groups.length, 2);
      assert.deepEqual(zoneA, {
        key: [{ dimension: "ZONE", value: "a" }],
        nodeCount: 3,
        observedSeconds: min(600 + 450 + 540),
        readySeconds: min(568 + 400 + 540),
        notReadySeconds: min(12),
        unknownSeconds: min(20 + 50),
        availability: 1508 / 1590,
        outages: 4,
        longestOutageSeconds: min(50),
        mttrSeconds: min(61),
        flaps: 1,
        maintenanceSeconds: min(160),
      });
      assert.deepEqual(zoneB, {
        key: [{ dimension: "ZONE", value: "b" }],
        nodeCount: 2,
        observedSeconds: min(1100),
        readySeconds: min(1097),
        notReadySeconds: min(3),
        unknownSeconds: 0,
        availability: 1097 / 1100,
        outages: 1,
        longestOutageSeconds: min(3),
        mttrSeconds: min(3),
        flaps: 1,
        maintenanceSeconds: min(550),
      });
      assert.equal(report.total.nodeCount, 5);
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

    test("one report is four SQL statements, however many nodes", async () => {
      counts.reset();
      await queries.report({ from: FROM, to: TO, groupBy: [{ by: "ZONE" }] });
      assert.equal(counts.total(), 4);
      for (let i = 0; i < 200; i++) await nodeState(db, "bulk", `n${i}`, `bulk-${i}`);
      counts.reset();
      const report = await queries.report({ from: FROM, to: TO });
      assert.equal(counts.total(), 4);
      assert.equal(report.nodes.length, 206);
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
