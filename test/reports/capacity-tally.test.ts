import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sumPodResources } from "../../src/inventory/resources.js";
import { CapacityTally, nodeAmounts } from "../../src/reports/capacity-report.js";
import type { ReportGrouping } from "../../src/reports/grouping.js";
import { cachedNode as node, cachedPod as pod } from "../support/cached-objects.js";

const sample = (cpuMillicores: number, memoryBytes: number) => ({ cpuMillicores, memoryBytes, timestamp: "2026-01-01T00:00:00Z" });

describe("capacity tally", () => {
  test("usage sums the nodes that have a sample and is null where none has; ratios are null when nothing is allocatable", () => {
    const tally = new CapacityTally([{ by: "LABEL", labelKey: "team" }], undefined);
    const a = node("a", { labels: { team: "x" }, allocatable: { cpu: "2", memory: "4Ki", pods: "4" } });
    const b = node("b", { labels: { team: "x" }, allocatable: { cpu: "1", memory: "4Ki", pods: "4" } });
    const empty = node("e", { labels: { team: "y" } });
    tally.add(a, nodeAmounts(a), sumPodResources([pod("p", { requests: { cpu: 500, memory: 1024 }, limits: { cpu: 4000 } })]), sample(300, 2048));
    tally.add(b, nodeAmounts(b), sumPodResources([]), undefined);
    tally.add(empty, nodeAmounts(empty), sumPodResources([]), undefined);
    const { groups, total } = tally.result();
    assert.deepEqual(groups[0]!.cpu, {
      unit: "millicores",
      capacity: 3000,
      allocatable: 3000,
      requests: 500,
      limits: 4000,
      usage: 300,
      headroom: 2500,
      requestRatio: 500 / 3000,
      overcommitRatio: 4000 / 3000,
      usageRatio: 300 / 3000,
    });
    assert.deepEqual(groups[1]!.cpu, {
      unit: "millicores",
      capacity: 0,
      allocatable: 0,
      requests: 0,
      limits: 0,
      usage: null,
      headroom: 0,
      requestRatio: null,
      overcommitRatio: null,
      usageRatio: null,
    });
    assert.equal(groups[1]!.fit, null, "no pod shape, no fit");
    assert.equal(total.memory.usage, 2048);
    assert.equal(total.pods.headroom, 8 - 1);
  });

  test("groups sort by each key in turn, a missing value after the others", () => {
    const groupings: ReportGrouping[] = [{ by: "ZONE" }, { by: "NODE_POOL" }];
    const tally = new CapacityTally(groupings, undefined);
    const nodes = [
      node("1", { labels: { "topology.kubernetes.io/zone": "b", "node-pool": "x" } }),
      node("2", { labels: { "node-pool": "a" } }),
      node("3", { labels: { "topology.kubernetes.io/zone": "a" } }),
      node("4", { labels: { "topology.kubernetes.io/zone": "a", "node-pool": "z" } }),
      node("5", { labels: { "topology.kubernetes.io/zone": "a", "node-pool": "z" } }),
      node("6", { labels: { "topology.kubernetes.io/zone": "b", "eks.amazonaws.com/nodegroup": "ng", "node-pool": "x" } }),
    ];
    for (const n of nodes) tally.add(n, nodeAmounts(n), sumPodResources([]), undefined);
    assert.deepEqual(
      tally.result().groups.map((g) => [g.key.map((k) => k.value), g.nodeCount]),
      [
        [["a", "z"], 2],
        [["a", null], 1],
        [["b", "ng"], 1],
        [["b", "x"], 1],
        [[null, "a"], 1],
      ],
    );
  });
});
