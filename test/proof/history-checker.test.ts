import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { checkHistory, parseGroundTruth, type RecordedHistory, type RecordedTransition } from "../../src/proof/history-checker.js";
import { nodeFacts, type GroundTruthFact } from "../../src/sim/ground-truth.js";
import type { KObject } from "../../src/sim/store.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const s = (n: number) => T0 + n * 1000;

const fact = (type: string, from: string | null, to: string, at: number, node = "n1"): GroundTruthFact => ({ kind: "transition", cluster: "c", node, uid: "u1", type, from, to, at, rv: 0 });
let nextId = 1;
const row = (type: string, from: string | null, to: string, at: number, extra: Partial<RecordedTransition> = {}): RecordedTransition => ({
  id: nextId++,
  cluster: "c",
  node: "n1",
  type,
  from,
  to,
  at,
  reconciled: false,
  ...extra,
});
const history = (h: Partial<RecordedHistory>): RecordedHistory => ({ transitions: [], changes: [], maintenance: [], drains: [], ...h });
const opts = { toleranceMs: 5_000 };

const truth = [fact("Ready", null, "True", s(0)), fact("Ready", "True", "False", s(10)), fact("Ready", "False", "True", s(20))];

describe("the history checker: transitions", () => {
  const cases: { name: string; rows: () => RecordedTransition[]; expect: Partial<Record<"lost" | "duplicated" | "phantom" | "outOfOrder" | "chainBreaks" | "timeOff", number>>; failed: boolean }[] = [
    { name: "every transition once passes", rows: () => [row("Ready", null, "True", s(0)), row("Ready", "True", "False", s(10)), row("Ready", "False", "True", s(20))], expect: {}, failed: false },
    {
      name: "a missing transition is lost and breaks the chain",
      rows: () => [row("Ready", null, "True", s(0)), row("Ready", "False", "True", s(20))],
      expect: { lost: 1, chainBreaks: 1 },
      failed: true,
    },
    {
      name: "a transition written twice is a duplicate",
      rows: () => [row("Ready", null, "True", s(0)), row("Ready", "True", "False", s(10)), row("Ready", "True", "False", s(10)), row("Ready", "False", "True", s(20))],
      expect: { duplicated: 1, chainBreaks: 1 },
      failed: true,
    },
    {
      name: "a transition that never happened is a phantom",
      rows: () => [row("Ready", null, "True", s(0)), row("Ready", "True", "False", s(10)), row("Ready", "False", "True", s(20)), row("MemoryPressure", null, "True", s(30))],
      expect: { phantom: 1 },
      failed: true,
    },
    {
      name: "a transition recorded at another time is a wrong time, not a loss",
      rows: () => [row("Ready", null, "True", s(0)), row("Ready", "True", "False", s(12)), row("Ready", "False", "True", s(20))],
      expect: { timeOff: 1 },
      failed: false,
    },
    {
      name: "rows written out of order are reported",
      rows: () => [row("Ready", null, "True", s(0)), row("Ready", "False", "True", s(20)), row("Ready", "True", "False", s(10))],
      expect: { outOfOrder: 1 },
      failed: false,
    },
    {
      name: "a reconciled row at the condition's time counts as recorded",
      rows: () => [row("Ready", null, "True", s(0)), row("Ready", "True", "False", s(10), { reconciled: true }), row("Ready", "False", "True", s(20))],
      expect: {},
      failed: false,
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const report = checkHistory(truth, history({ transitions: c.rows() }), opts);
      const want = { checked: 3, lost: 0, unobservable: 0, duplicated: 0, phantom: 0, outOfOrder: 0, chainBreaks: 0, timeOff: 0, ...c.expect };
      assert.deepEqual(report.transitions, want);
      assert.equal(report.failed, c.failed);
      if (c.failed) assert.ok(report.byNode["c/n1"]!.length > 0);
    });
  }
});

describe("the history checker: gaps in recording", () => {
  test("a flap undone while no replica recorded is unobservable, not lost; the same flap outside the gap is lost", () => {
    const rows = [row("Ready", null, "True", s(0))];
    const inGap = checkHistory(truth, history({ transitions: rows }), { ...opts, gaps: [[s(5), s(25)]] });
    assert.deepEqual([inGap.transitions.lost, inGap.transitions.unobservable, inGap.failed], [0, 2, false]);
    const outside = checkHistory(truth, history({ transitions: rows }), { ...opts, gaps: [[s(15), s(25)]] });
    assert.deepEqual([outside.transitions.lost, outside.transitions.unobservable, outside.failed], [2, 0, true]);
  });

  test("a change superseded in a gap and reconciled at its end is unobservable; one that is not reconciled is lost", () => {
    const labels: GroundTruthFact[] = [
      ["a", "b", 10],
      ["b", "c", 12],
    ].map(([before, after, at]) => ({ kind: "change", cluster: "c", node: "n1", uid: "u1", field: "LABELS", item: "team", before, after, at: s(at as number), rv: 0 }));
    const reconciled = { id: nextId++, cluster: "c", node: "n1", field: "LABELS", item: "team", before: "a", after: "c", at: s(20), reconciled: true };
    const report = checkHistory(labels, history({ changes: [reconciled] }), { ...opts, gaps: [[s(5), s(25)]] });
    assert.deepEqual([report.changes.lost, report.changes.unobservable, report.failed], [0, 1, false]);
    const notReconciled = checkHistory(labels, history({ changes: [{ ...reconciled, reconciled: false, at: s(12) }] }), { ...opts, gaps: [[s(5), s(25)]] });
    assert.deepEqual([notReconciled.changes.lost, notReconciled.changes.unobservable, notReconciled.failed], [1, 0, true]);
  });
});

describe("the history checker: node changes, cordons and drains", () => {
  const change = (field: string, item: string, before: unknown, after: unknown, at: number): GroundTruthFact => ({
    kind: "change",
    cluster: "c",
    node: "n1",
    uid: "u1",
    field,
    item,
    before,
    after,
    at,
    rv: 0,
  });
  const facts = [change("LABELS", "team", null, "a", s(0)), change("LABELS", "team", "a", "b", s(10)), change("SCHEDULABILITY", "", { unschedulable: false }, { unschedulable: true }, s(20))];
  const changeRow = (field: string, item: string, before: unknown, after: unknown, at: number, reconciled = false) => ({
    id: nextId++,
    cluster: "c",
    node: "n1",
    field,
    item,
    before,
    after,
    at,
    reconciled,
  });

  test("changes seen within the watch delay match; a late one is a wrong time; a missing one is lost", () => {
    const ok = checkHistory(
      facts,
      history({
        changes: [
          changeRow("LABELS", "team", null, "a", s(1)),
          changeRow("LABELS", "team", "a", "b", s(11)),
          changeRow("SCHEDULABILITY", "", { unschedulable: false }, { unschedulable: true }, s(20)),
        ],
        maintenance: [{ id: nextId++, cluster: "c", node: "n1", kind: "CORDONED", at: s(20) }],
      }),
      opts,
    );
    assert.deepEqual([ok.changes.lost, ok.changes.timeOff, ok.maintenance.lost, ok.failed], [0, 0, 0, false]);
    const bad = checkHistory(
      facts,
      history({ changes: [changeRow("LABELS", "team", null, "a", s(1)), changeRow("SCHEDULABILITY", "", { unschedulable: false }, { unschedulable: true }, s(20))] }),
      opts,
    );
    assert.deepEqual([bad.changes.lost, bad.maintenance.lost, bad.failed], [1, 1, true]);
  });

  test("a change written again long after it happened is a duplicate; one recorded before anything of its kind happened is a phantom", () => {
    const replay = checkHistory(
      facts,
      history({ changes: [changeRow("LABELS", "team", null, "a", s(1)), changeRow("LABELS", "team", "a", "b", s(11)), changeRow("LABELS", "team", null, "a", s(60))] }),
      { ...opts, fields: ["LABELS"] },
    );
    assert.deepEqual([replay.changes.duplicated, replay.changes.phantom, replay.failed], [1, 0, true]);
    const early = checkHistory(
      facts,
      history({ changes: [changeRow("LABELS", "team", "x", "b", s(-30)), changeRow("LABELS", "team", null, "a", s(1)), changeRow("LABELS", "team", "a", "b", s(11))] }),
      { ...opts, fields: ["LABELS"] },
    );
    assert.deepEqual([early.changes.duplicated, early.changes.phantom, early.failed], [0, 1, true]);
  });

  test("a change recorded past the tolerance but before the next one is a wrong time, not a loss and a phantom", () => {
    const late = checkHistory(facts.slice(0, 2), history({ changes: [changeRow("LABELS", "team", null, "a", s(6)), changeRow("LABELS", "team", "a", "b", s(11))] }), { ...opts, fields: ["LABELS"] });
    assert.deepEqual([late.changes.lost, late.changes.phantom, late.changes.timeOff, late.failed], [0, 0, 1, false]);
    // A replica whose clock is behind stamps a change before it happened.
    const early = checkHistory(facts.slice(0, 2), history({ changes: [changeRow("LABELS", "team", null, "a", s(-8)), changeRow("LABELS", "team", "a", "b", s(2))] }), { ...opts, fields: ["LABELS"] });
    assert.deepEqual([early.changes.lost, early.changes.phantom, early.changes.timeOff, early.failed], [0, 0, 2, false]);
  });

  test("a reconciled change after an outage is recorded, however late", () => {
    const report = checkHistory(facts.slice(0, 1), history({ changes: [changeRow("LABELS", "team", null, "a", s(300), true)] }), opts);
    assert.deepEqual([report.changes.lost, report.changes.phantom, report.changes.timeOff], [0, 0, 0]);
  });

  test("a pod evicted twice fails; a drain that succeeded on a node left schedulable fails", () => {
    const eviction: GroundTruthFact = { kind: "eviction", cluster: "c", node: "n1", pod: "ns/p", podUid: "p1", at: s(0), terminating: false };
    const drains = [{ id: "d1", cluster: "c", node: "n1", status: "SUCCEEDED", dryRun: false, pods: [] }];
    const again = checkHistory([eviction, { ...eviction, terminating: true }], history({ drains }), { ...opts, finalNodes: new Map([["d1", { unschedulable: true, evictablePods: [] }]]) });
    assert.deepEqual([again.drains.evictions, again.drains.evictedTwice, again.drains.repeatedOfTerminating, again.failed], [1, 0, 1, false]);
    const twice = checkHistory([eviction, eviction], history({ drains }), { ...opts, finalNodes: new Map([["d1", { unschedulable: true, evictablePods: [] }]]) });
    assert.deepEqual([twice.drains.evictedTwice, twice.drains.unfinished, twice.failed], [1, 0, true]);
    const unfinished = checkHistory([eviction], history({ drains }), { ...opts, finalNodes: new Map([["d1", { unschedulable: false, evictablePods: ["ns/q"] }]]) });
    assert.deepEqual([unfinished.drains.evictedTwice, unfinished.drains.unfinished, unfinished.failed], [0, 1, true]);
  });
});

describe("the simulator's ground truth", () => {
  const node = (conditions: Record<string, [string, string]>, extra: { labels?: Record<string, string>; unschedulable?: boolean; bootID?: string } = {}): KObject => ({
    metadata: { name: "n1", uid: "u1", labels: extra.labels ?? {} },
    spec: { unschedulable: extra.unschedulable ?? false, taints: [] },
    status: { conditions: Object.entries(conditions).map(([type, [status, at]]) => ({ type, status, lastTransitionTime: at })), nodeInfo: { kubeletVersion: "v1.32.0", bootID: extra.bootID ?? "b1" } },
  });

  test("a created node, then a flap, a label, a cordon and a reboot, are facts at their times", () => {
    const created = node({ Ready: ["True", "2026-01-01T00:00:00Z"] });
    const flapped = node({ Ready: ["False", "2026-01-01T00:00:10Z"] }, { labels: { team: "a" }, unschedulable: true, bootID: "b2" });
    const facts = [...nodeFacts("c", { type: "ADDED", rv: 1, obj: created }, s(0)), ...nodeFacts("c", { type: "MODIFIED", rv: 2, obj: flapped, prev: created }, s(11))];
    assert.deepEqual(
      facts.map((f) => (f.kind === "transition" ? `${f.type} ${f.from}->${f.to} @${(f.at - T0) / 1000}` : f.kind === "change" ? `${f.field} ${f.item} @${(f.at - T0) / 1000}` : f.kind)),
      ["CREATED  @0", "Ready null->True @0", "Ready True->False @10", "SCHEDULABILITY  @11", "REBOOTED  @11", "LABELS team @11"],
    );
  });

  test("a torn last line of the file is skipped", () => {
    const text = `${JSON.stringify(fact("Ready", null, "True", s(0)))}\n{"kind":"transi`;
    assert.equal(parseGroundTruth(text).length, 1);
  });
});
