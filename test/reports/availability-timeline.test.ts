import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { nodeFigures, type NodeFigures, type RecordedNode, type Spans, type TimelineEvent } from "../../src/reports/availability-timeline.js";

// Times are minutes from the start of the period, which runs from minute 0 to minute 100.
const MINUTE = 60_000;
const FROM = Date.UTC(2026, 0, 1);
const t = (minute: number) => FROM + minute * MINUTE;
const ALWAYS: Spans = [[-Infinity, Infinity]];
const PERIOD = { from: t(0), end: t(100), flapThresholdMs: 5 * MINUTE, watched: ALWAYS };

let seq = 0;
const ready = (minute: number, from: string | null, to: string): TimelineEvent => ({ kind: "READY", at: t(minute), from, to, seq: ++seq });
const created = (minute: number, uid: string | null = "u1"): TimelineEvent => ({ kind: "CREATED", at: t(minute), uid });
const deleted = (minute: number, uid: string | null = "u1"): TimelineEvent => ({ kind: "DELETED", at: t(minute), uid });
const cordoned = (minute: number): TimelineEvent => ({ kind: "CORDONED", at: t(minute), seq: ++seq });
const uncordoned = (minute: number): TimelineEvent => ({ kind: "UNCORDONED", at: t(minute), seq: ++seq });
const drain = (minute: number, operation: string): TimelineEvent => ({ kind: "DRAIN_STARTED", at: t(minute), operation, seq: ++seq });
const drained = (minute: number, operation: string): TimelineEvent => ({ kind: "DRAIN_ENDED", at: t(minute), operation, seq: ++seq });

/** The expected figures, times in minutes; what is not named is zero (or not deleted). */
interface Expected {
  observed?: number;
  unobserved?: number;
  ready?: number;
  notReady?: number;
  unknown?: number;
  outages?: number;
  longest?: number;
  /** Full lengths of the outages that ended in the period (MTTR's parts). */
  ended?: number[];
  flaps?: number;
  maintenance?: number;
  deleted?: boolean;
}

function inMinutes(f: NodeFigures): Required<Expected> {
  return {
    observed: f.observedMs / MINUTE,
    unobserved: f.unobservedMs / MINUTE,
    ready: f.readyMs / MINUTE,
    notReady: f.notReadyMs / MINUTE,
    unknown: f.unknownMs / MINUTE,
    outages: f.outages,
    longest: f.longestOutageMs / MINUTE,
    ended: [f.endedOutages, f.endedOutageMs / MINUTE],
    flaps: f.flaps,
    maintenance: f.maintenanceMs / MINUTE,
    deleted: f.deleted,
  };
}

function expected(e: Expected): Required<Expected> {
  const ended = e.ended ?? [];
  return {
    observed: e.observed ?? 0,
    unobserved: e.unobserved ?? 0,
    ready: e.ready ?? 0,
    notReady: e.notReady ?? 0,
    unknown: e.unknown ?? 0,
    outages: e.outages ?? 0,
    longest: e.longest ?? 0,
    ended: [ended.length, ended.reduce((a, b) => a + b, 0)],
    flaps: e.flaps ?? 0,
    maintenance: e.maintenance ?? 0,
    deleted: e.deleted ?? false,
  };
}

const NODE: RecordedNode = { cluster: "prod", name: "n1", uid: "u1", labels: {}, ready: "True", unschedulable: false };
const READY_BEFORE = ready(-50, null, "True");

interface Case {
  name: string;
  events: TimelineEvent[];
  node?: Partial<RecordedNode>;
  period?: Partial<typeof PERIOD>;
  expect: Expected;
}

const CASES: Case[] = [
  // Status at `from` and what is observed.
  { name: "Ready since before the period: all of it Ready", events: [READY_BEFORE], expect: { observed: 100, ready: 100 } },
  { name: "no rows at all (history pruned): the recorded current status holds throughout", events: [], expect: { observed: 100, ready: 100 } },
  {
    name: "no rows and recorded NotReady: one outage over the whole period, not ended",
    events: [],
    node: { ready: "False" },
    expect: { observed: 100, notReady: 100, outages: 1, longest: 100 },
  },
  {
    name: "the first loaded transition's `from` is the status before it (nothing recorded earlier)",
    events: [ready(30, "False", "True")],
    expect: { observed: 100, notReady: 30, ready: 70, outages: 1, longest: 30 },
  },
  {
    name: "a transition after `to` says what the status was in the period, over the recorded current one",
    events: [ready(120, "True", "False")],
    node: { ready: "False" },
    expect: { observed: 100, ready: 100 },
  },
  {
    name: "first seen mid-period (a null `from`): observed from that transition on",
    events: [ready(40, null, "True")],
    expect: { observed: 60, ready: 60 },
  },
  {
    name: "an unknown stored status counts as Unknown",
    events: [READY_BEFORE, ready(10, "True", "Bogus"), ready(20, "Bogus", "True")],
    expect: { observed: 100, ready: 90, unknown: 10, outages: 1, longest: 10, ended: [10] },
  },

  // Outages.
  {
    name: "a 3-minute outage inside the period: counted, ended, a flap",
    events: [READY_BEFORE, ready(10, "True", "False"), ready(13, "False", "True")],
    expect: { observed: 100, ready: 97, notReady: 3, outages: 1, longest: 3, ended: [3], flaps: 1 },
  },
  {
    name: "NotReady then Unknown then Ready is one outage, its seconds split by status",
    events: [READY_BEFORE, ready(20, "True", "False"), ready(30, "False", "Unknown"), ready(50, "Unknown", "True")],
    expect: { observed: 100, ready: 70, notReady: 10, unknown: 20, outages: 1, longest: 30, ended: [30] },
  },
  {
    name: "two outages: longest is the larger, both ended",
    events: [READY_BEFORE, ready(10, "True", "False"), ready(12, "False", "True"), ready(40, "True", "Unknown"), ready(60, "Unknown", "True")],
    expect: { observed: 100, ready: 78, notReady: 2, unknown: 20, outages: 2, longest: 20, ended: [2, 20], flaps: 1 },
  },
  {
    name: "an outage crossing `from`: clipped seconds, but its full length (from minute -20) in MTTR",
    events: [ready(-100, null, "True"), ready(-20, "True", "False"), ready(-5, "False", "Unknown"), ready(10, "Unknown", "True")],
    expect: { observed: 100, ready: 90, unknown: 10, outages: 1, longest: 10, ended: [30] },
  },
  {
    name: "a 7-minute outage ending 2 minutes into the period is no flap",
    events: [READY_BEFORE, ready(-5, "True", "False"), ready(2, "False", "True")],
    expect: { observed: 100, ready: 98, notReady: 2, outages: 1, longest: 2, ended: [7] },
  },
  {
    name: "an outage crossing `to`: clipped, counted, not ended",
    events: [READY_BEFORE, ready(90, "True", "False"), ready(130, "False", "True")],
    expect: { observed: 100, ready: 90, notReady: 10, outages: 1, longest: 10 },
  },
  {
    name: "a recovery exactly at `to` ended in this period; exactly the threshold long is no flap",
    events: [READY_BEFORE, ready(95, "True", "False"), ready(100, "False", "True")],
    expect: { observed: 100, ready: 95, notReady: 5, outages: 1, longest: 5, ended: [5] },
  },
  {
    name: "a recovery exactly at `from` belongs to the period before",
    events: [READY_BEFORE, ready(-10, "True", "False"), ready(0, "False", "True")],
    expect: { observed: 100, ready: 100 },
  },
  {
    name: "an outage beginning exactly at `to` belongs to the period after",
    events: [READY_BEFORE, ready(100, "True", "False")],
    expect: { observed: 100, ready: 100 },
  },
  {
    name: "an outage whose start is not recorded is counted but left out of MTTR and flaps",
    events: [ready(2, "False", "True")],
    expect: { observed: 100, ready: 98, notReady: 2, outages: 1, longest: 2 },
  },
  {
    name: "False and back to True within one recorded second: an outage of length 0, a flap",
    events: [READY_BEFORE, ready(30, "True", "False"), ready(30, "False", "True")],
    expect: { observed: 100, ready: 100, outages: 1, ended: [0], flaps: 1 },
  },
  {
    name: "a zero-length outage exactly at `from` belongs to the period before",
    events: [READY_BEFORE, ready(0, "True", "False"), ready(0, "False", "True")],
    expect: { observed: 100, ready: 100 },
  },
  {
    name: "a zero-length outage exactly at `to` belongs to this period",
    events: [READY_BEFORE, ready(100, "True", "False"), ready(100, "False", "True")],
    expect: { observed: 100, ready: 100, outages: 1, ended: [0], flaps: 1 },
  },
  {
    name: "a flap threshold of 0 makes no flaps",
    events: [READY_BEFORE, ready(10, "True", "False"), ready(10, "False", "True"), ready(20, "True", "False"), ready(21, "False", "True")],
    period: { flapThresholdMs: 0 },
    expect: { observed: 100, ready: 99, notReady: 1, outages: 2, longest: 1, ended: [0, 1] },
  },
  {
    name: "the period ends at `now` when `to` is later: nothing after now is observed",
    events: [READY_BEFORE, ready(40, "True", "False")],
    period: { end: t(50) },
    expect: { observed: 50, ready: 40, notReady: 10, outages: 1, longest: 10 },
  },

  // Lifetimes.
  {
    name: "created mid-period: observed from its first Ready status; booting NotReady is an outage",
    events: [created(30), ready(31, null, "False"), ready(32, "False", "True")],
    expect: { observed: 69, ready: 68, notReady: 1, outages: 1, longest: 1, ended: [1], flaps: 1 },
  },
  {
    name: "created and Ready at the same instant: observed from then",
    events: [created(30), ready(30, null, "True")],
    expect: { observed: 70, ready: 70 },
  },
  {
    name: "created before the period with no Ready transition: the recorded status of this, its latest object",
    events: [created(-10)],
    expect: { observed: 100, ready: 100 },
  },
  {
    name: "deleted mid-period while Unknown: deleted, the outage cut short did not end",
    events: [READY_BEFORE, ready(60, "True", "Unknown"), deleted(70)],
    expect: { observed: 70, ready: 60, unknown: 10, outages: 1, longest: 10, deleted: true },
  },
  {
    name: "deleted exactly at `to`: not deleted within the period",
    events: [READY_BEFORE, deleted(100)],
    expect: { observed: 100, ready: 100 },
  },
  {
    name: "deleted and created again under the same name: two lifetimes, the gap not observed",
    events: [READY_BEFORE, deleted(20, "u1"), created(40, "u2"), ready(40, null, "True")],
    node: { uid: "u2" },
    expect: { observed: 80, ready: 80 },
  },
  {
    name: "an older object without Ready rows does not borrow the latest object's status",
    events: [created(-10, "u1"), deleted(50, "u1"), created(60, "u2"), ready(60, null, "False")],
    node: { uid: "u2", ready: "False" },
    expect: { observed: 40, notReady: 40, outages: 1, longest: 40 },
  },
  {
    name: "replaced while nobody watched: the old object's late-detected deletion is ignored",
    events: [READY_BEFORE, created(30, "u2"), ready(31, null, "True"), deleted(60, "u1")],
    node: { uid: "u2" },
    expect: { observed: 99, ready: 99 },
  },
  {
    name: "an outage is cut by the object's replacement and does not end",
    events: [READY_BEFORE, ready(20, "True", "False"), created(30, "u2"), ready(30, null, "True")],
    node: { uid: "u2" },
    expect: { observed: 100, ready: 90, notReady: 10, outages: 1, longest: 10 },
  },

  // Maintenance.
  { name: "cordoned for 20 minutes", events: [READY_BEFORE, cordoned(10), uncordoned(30)], expect: { observed: 100, ready: 100, maintenance: 20 } },
  {
    name: "a drain inside a cordon is not counted twice",
    events: [READY_BEFORE, cordoned(10), drain(15, "op"), drained(25, "op"), uncordoned(40)],
    expect: { observed: 100, ready: 100, maintenance: 30 },
  },
  {
    name: "a drain then an uncordon: the union of both spans",
    events: [READY_BEFORE, drain(10, "op"), cordoned(10), drained(20, "op"), uncordoned(35)],
    expect: { observed: 100, ready: 100, maintenance: 25 },
  },
  {
    name: "two overlapping drains count from the first start to the last end",
    events: [READY_BEFORE, drain(10, "a"), drain(20, "b"), drained(30, "a"), drained(40, "b")],
    expect: { observed: 100, ready: 100, maintenance: 30 },
  },
  {
    name: "cordoned before the period, uncordoned in it",
    events: [READY_BEFORE, cordoned(-30), uncordoned(20)],
    expect: { observed: 100, ready: 100, maintenance: 20 },
  },
  {
    name: "an uncordon with no earlier event: it was cordoned before",
    events: [READY_BEFORE, uncordoned(20)],
    expect: { observed: 100, ready: 100, maintenance: 20 },
  },
  {
    name: "no cordon events and recorded unschedulable: cordoned throughout",
    events: [READY_BEFORE],
    node: { unschedulable: true },
    expect: { observed: 100, ready: 100, maintenance: 100 },
  },
  {
    name: "a drain started before the period and never ended runs to its end",
    events: [READY_BEFORE, drain(-10, "op")],
    expect: { observed: 100, ready: 100, maintenance: 100 },
  },
  {
    name: "a drain's end whose start is no longer recorded: draining since before",
    events: [READY_BEFORE, drained(30, "op")],
    expect: { observed: 100, ready: 100, maintenance: 30 },
  },
  {
    name: "maintenance stops with the node's deletion",
    events: [READY_BEFORE, cordoned(50), deleted(60)],
    expect: { observed: 60, ready: 60, maintenance: 10, deleted: true },
  },
  {
    name: "maintenance while NotReady counts as both",
    events: [READY_BEFORE, cordoned(10), ready(20, "True", "False"), ready(40, "False", "True"), uncordoned(50)],
    expect: { observed: 100, ready: 80, notReady: 20, outages: 1, longest: 20, ended: [20], maintenance: 40 },
  },
  // Watched time: what no replica recorded is unobserved, whatever the rows say of it.
  {
    name: "a fresh installation watching from minute 70: Ready since long before, observed only since then",
    events: [ready(-5000, null, "True")],
    period: { watched: [[t(70), Infinity]] },
    expect: { observed: 30, ready: 30, unobserved: 70 },
  },
  {
    name: "first seen cordoned (no cordon event): in maintenance only from when it was watched",
    events: [created(-5000), ready(-5000, null, "True")],
    node: { unschedulable: true },
    period: { watched: [[t(90), Infinity]] },
    expect: { observed: 10, ready: 10, maintenance: 10, unobserved: 90 },
  },
  {
    name: "a gap in the recording from 20 to 50: neither Ready nor an outage, and unobserved",
    events: [READY_BEFORE, ready(30, "True", "False"), ready(40, "False", "True"), ready(60, "True", "False"), ready(65, "False", "True")],
    period: {
      watched: [
        [t(-100), t(20)],
        [t(50), t(200)],
      ],
    },
    expect: { observed: 70, ready: 65, notReady: 5, outages: 1, longest: 5, ended: [5], flaps: 0, unobserved: 30 },
  },
  {
    name: "an outage across a gap counts only its watched part",
    events: [READY_BEFORE, ready(10, "True", "False"), ready(60, "False", "True")],
    period: {
      watched: [
        [t(-100), t(20)],
        [t(50), t(200)],
      ],
    },
    expect: { observed: 70, ready: 50, notReady: 20, outages: 1, longest: 20, ended: [50], unobserved: 30 },
  },
  {
    name: "never watched: nothing observed, all of it unobserved",
    events: [READY_BEFORE],
    period: { watched: [] },
    expect: { unobserved: 100 },
  },
];

describe("one node's availability over [minute 0, minute 100)", () => {
  for (const c of CASES) {
    test(c.name, () => {
      const figures = nodeFigures({ ...NODE, ...c.node }, c.events, { ...PERIOD, ...c.period });
      assert.deepEqual(inMinutes(figures), expected(c.expect));
    });
  }

  test("the order rows arrive in does not matter", () => {
    const events = [READY_BEFORE, ready(20, "True", "False"), ready(30, "False", "Unknown"), ready(50, "Unknown", "True"), cordoned(10), uncordoned(30)];
    const inOrder = nodeFigures(NODE, events, PERIOD);
    assert.deepEqual(nodeFigures(NODE, [...events].reverse(), PERIOD), inOrder);
  });
});
