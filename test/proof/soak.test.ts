import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { formatSoak, runSoak } from "../../src/proof/soak.js";
import { FAULT_KINDS } from "../../src/proof/soak-stats.js";

// The shipped program as replicas, the simulator churning, every kind of fault on a seed's
// schedule; then the recorded history against the simulator's ground truth.
describe("a short seeded soak", () => {
  test("three replicas on PostgreSQL record every fact exactly once through every kind of fault but resourceVersions going back", async () => {
    const kinds = FAULT_KINDS.filter((k) => k !== "rv-reset");
    const lines: string[] = [];
    const report = await runSoak({ minutes: 3, seed: 29, faults: kinds, perKind: 1, replicas: 3, database: "postgres", nodes: 12, log: (line) => lines.push(line) });
    const summary = `${lines.join("\n")}\n${formatSoak(report)}`;
    assert.deepEqual(Object.keys(report.faults).sort(), [...kinds].sort(), summary);
    assert.ok(report.transitionsChecked > 20, summary);
    assert.deepEqual(
      { lost: report.lost, duplicated: report.duplicated, phantom: report.phantom, evictedTwice: report.drains.evictedTwice, askedAgain: report.drains.repeatedOfTerminating },
      { lost: 0, duplicated: 0, phantom: 0, evictedTwice: 0, askedAgain: 0 },
      `${summary}\n${JSON.stringify(report.check.problems.slice(0, 20), null, 1)}`,
    );
    assert.equal(report.failed, false, summary);
  });

  // A restart with lower resourceVersions: the resumed watch is refused as too large and the
  // reflector relists (as client-go's does), but flaps between the restart and the relist are
  // still counted lost: the checker does not yet take that window as a gap of the recording, and
  // a counter that passed the old resourceVersion before the watch resumed is not detected at all
  // (docs/proof.md, finding 5).
  test("two replicas on PostgreSQL record every fact exactly once when the apiserver's resourceVersions go back", {
    todo: "flaps inside the relist after a resourceVersion reset are counted lost (docs/proof.md, finding 5)",
  }, async () => {
    const lines: string[] = [];
    const report = await runSoak({ minutes: 2, seed: 7, faults: ["rv-reset"], perKind: 2, replicas: 2, database: "postgres", nodes: 10, log: (line) => lines.push(line) });
    const summary = `${lines.join("\n")}\n${formatSoak(report)}`;
    assert.deepEqual(report.faults, { "rv-reset": 2 }, summary);
    assert.deepEqual({ lost: report.lost, duplicated: report.duplicated, phantom: report.phantom }, { lost: 0, duplicated: 0, phantom: 0 }, summary);
  });

  test("one replica on PGlite records every fact exactly once through kills, cuts and apiserver restarts", async () => {
    const lines: string[] = [];
    const report = await runSoak({ minutes: 2, seed: 30, faults: ["kill", "cut", "sim-restart"], perKind: 1, replicas: 1, database: "pglite", nodes: 12, log: (line) => lines.push(line) });
    const summary = `${lines.join("\n")}\n${formatSoak(report)}`;
    assert.deepEqual(report.faults, { kill: 1, cut: 1, "sim-restart": 1 }, summary);
    assert.deepEqual(
      { lost: report.lost, duplicated: report.duplicated, phantom: report.phantom },
      { lost: 0, duplicated: 0, phantom: 0 },
      `${summary}\n${JSON.stringify(report.check.problems.slice(0, 20), null, 1)}`,
    );
  });
});
