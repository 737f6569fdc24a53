import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { progressLine, type DrainState } from "../../src/cli/fleet-format.js";

const state = (podsByPhase: DrainState["podsByPhase"], progressPercent: number, pods: DrainState["pods"] = []): DrainState => ({
  id: "1",
  node: "n",
  status: "RUNNING",
  dryRun: false,
  message: null,
  progressPercent,
  remainingPods: podsByPhase.notStarted + podsByPhase.evicting + podsByPhase.terminating,
  warnings: [],
  podsByPhase,
  pods,
});

describe("the drain's progress line on a terminal", () => {
  const cases: [string, DrainState, string][] = [
    ["nothing asked yet", state({ notStarted: 4, evicting: 0, terminating: 0, gone: 0, notRemoved: 2 }, 0), `node/n [${"-".repeat(30)}]   0%  0 gone, 0 terminating, 0 evicting, 4 not started`],
    ["every eviction accepted, no pod gone yet: the bar shows them terminating", state({ notStarted: 0, evicting: 0, terminating: 37, gone: 0, notRemoved: 3 }, 0), `node/n [${"=".repeat(30)}]   0%  0 gone, 37 terminating, 0 evicting, 0 not started`],
    ["half-way", state({ notStarted: 1, evicting: 1, terminating: 1, gone: 3, notRemoved: 0 }, 50), `node/n [${"#".repeat(15)}${"=".repeat(5)}${"~".repeat(5)}${"-".repeat(5)}]  50%  3 gone, 1 terminating, 1 evicting, 1 not started`],
    [
      "blocked by a budget: named",
      state({ notStarted: 0, evicting: 1, terminating: 0, gone: 2, notRemoved: 0 }, 66.7, [{ namespace: "a", name: "p", status: "BLOCKED", reason: null, action: "EVICT", blockedBy: "ledger" }]),
      `node/n [${"#".repeat(20)}${"~".repeat(10)}]  66%  2 gone, 0 terminating, 1 evicting, 0 not started  blocked by PodDisruptionBudget ledger`,
    ],
  ];
  for (const [name, op, line] of cases) test(name, () => assert.equal(progressLine(op), line));
});
