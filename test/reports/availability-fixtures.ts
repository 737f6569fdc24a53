import type { Database } from "../../src/db/database.js";
import { at } from "../history/history-fixtures.js";

// History written row by row with exact timestamps, minutes from 2026-01-01T00:00Z. The
// report is over [minute 0, minute 600); every expected figure is worked out in the comments.
export const FROM = at(0);
export const TO = at(600);
export const min = (m: number) => m * 60;
const ZONE = "topology.kubernetes.io/zone";
const OP = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;

export async function nodeState(db: Database, cluster: string, name: string, uid: string, o: { zone?: string; ready?: string; unschedulable?: boolean; deletedAt?: number } = {}) {
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

/** A stretch of time a replica recorded `cluster`, [fromMinute, toMinute). */
export async function coverage(db: Database, cluster: string, fromMinute: number, toMinute: number) {
  await db.prisma.recordingCoverage.create({ data: { cluster, startedAt: at(fromMinute), endedAt: at(toMinute) } });
}

async function ready(db: Database, cluster: string, node: string, transitions: [minute: number, from: string | null, to: string][], type = "Ready") {
  for (const [minute, from, to] of transitions) await db.prisma.conditionTransition.create({ data: { cluster, node, type, from, to, at: at(minute) } });
}

async function lifetime(db: Database, cluster: string, node: string, field: "CREATED" | "DELETED", uid: string, minute: number) {
  const data = field === "CREATED" ? { before: undefined, after: { uid } } : { before: { uid }, after: undefined };
  await db.prisma.nodeChange.create({ data: { cluster, node, field, ...data, at: at(minute), key: `${field}:${uid}` } });
}

async function reboot(db: Database, cluster: string, node: string, minute: number) {
  await db.prisma.nodeChange.create({ data: { cluster, node, field: "REBOOTED", before: `boot-${minute}-old`, after: `boot-${minute}`, at: at(minute), key: `rv-${minute}`, actor: "external" } });
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
 * Both clusters were recorded from minute -5000 to 1000, in two stretches that touch.
 * Reboots: prod/a at -10 (before the period), 300 and 590, 600 (at `to`, the next period's);
 *   prod/c at 101; prod/d at -200 (deleted before the period).
 */
export async function seedHistory(db: Database): Promise<void> {
  await coverage(db, "prod", -5000, 300);
  await coverage(db, "prod", 300, 1000);
  await coverage(db, "dev", -5000, 1000);
  await nodeState(db, "prod", "a", "a1", { zone: "a", ready: "True" });
  await lifetime(db, "prod", "a", "CREATED", "a1", -2000);
  await ready(db, "prod", "a", [
    [-1000, null, "True"],
    [-100, "True", "False"],
    [-30, "False", "Unknown"],
    [20, "Unknown", "True"],
    [300, "True", "False"],
    [302, "False", "True"],
    [590, "True", "False"],
    [700, "False", "True"],
  ]);
  await ready(
    db,
    "prod",
    "a",
    [
      [100, "False", "True"],
      [130, "True", "False"],
    ],
    "MemoryPressure",
  );
  await event(db, "prod", "a", "CORDONED", 100);
  await event(db, "prod", "a", "DRAIN_STARTED", 110, OP(1));
  await event(db, "prod", "a", "POD_EVICTED", 111, OP(1));
  await event(db, "prod", "a", "DRAIN_SUCCEEDED", 130, OP(1));
  await event(db, "prod", "a", "UNCORDONED", 200);
  for (const minute of [-10, 300, 590, 600]) await reboot(db, "prod", "a", minute);

  await nodeState(db, "prod", "b", "b1", { zone: "a", ready: "Unknown", deletedAt: 450 });
  await lifetime(db, "prod", "b", "CREATED", "b1", -500);
  await ready(db, "prod", "b", [
    [-500, null, "True"],
    [400, "True", "Unknown"],
  ]);
  await lifetime(db, "prod", "b", "DELETED", "b1", 450);
  await event(db, "prod", "b", "DRAIN_STARTED", -300, OP(3));
  await event(db, "prod", "b", "DRAIN_SUCCEEDED", -200, OP(3));
  await event(db, "prod", "b", "DRAIN_STARTED", -50, OP(2));
  await event(db, "prod", "b", "DRAIN_FAILED", 60, OP(2));

  await nodeState(db, "prod", "c", "c1", { zone: "b", ready: "True", unschedulable: true });
  await lifetime(db, "prod", "c", "CREATED", "c1", 100);
  await ready(db, "prod", "c", [
    [100, null, "False"],
    [103, "False", "True"],
  ]);
  await reboot(db, "prod", "c", 101);

  await nodeState(db, "prod", "d", "d1", { zone: "a", deletedAt: -100 });
  await lifetime(db, "prod", "d", "CREATED", "d1", -900);
  await ready(db, "prod", "d", [[-900, null, "True"]]);
  await reboot(db, "prod", "d", -200);
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
