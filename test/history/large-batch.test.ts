import assert from "node:assert/strict";
import { test } from "node:test";
import type { CachedNode } from "../../src/cluster/model.js";
import { HistoryStore, type NodeObservation } from "../../src/history/history-store.js";
import { BACKENDS } from "../support/databases.js";
import { migratedDatabase } from "./history-fixtures.js";

const node = (i: number, at: Date): CachedNode => ({
  cluster: "big",
  name: `node-${i}`,
  uid: `uid-${i}`,
  resourceVersion: "1",
  creationTimestamp: "2025-01-01T00:00:00Z",
  labels: { "kubernetes.io/hostname": `node-${i}` },
  annotations: {},
  taints: [],
  unschedulable: false,
  conditions: [
    { type: "Ready", status: "True", lastTransitionTime: at.toISOString() },
    { type: "MemoryPressure", status: "False", lastTransitionTime: at.toISOString() },
  ],
  addresses: [],
  capacity: {},
  allocatable: {},
  nodeInfo: { kubeletVersion: "v1.31.2", containerRuntimeVersion: "containerd://1.7.24", osImage: "", kernelVersion: "", operatingSystem: "linux", architecture: "amd64" },
});

// A reconcile records every node of a cluster in one transaction: at 6,000 nodes that is more
// rows than one statement may carry (PostgreSQL's 65,535 parameters) and than Prisma writes
// without splitting a statement into parts it sends at once on one connection.
test("a reconcile of a 6,000-node cluster is written whole on PostgreSQL, in statements the driver runs one at a time", async () => {
  const { db, dispose } = await migratedDatabase(BACKENDS.find((b) => b.name === "postgres")!);
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
  process.on("warning", onWarning);
  try {
    const at = new Date("2026-11-01T00:00:00Z");
    const observations: NodeObservation[] = Array.from({ length: 6_000 }, (_, i) => ({ cluster: "big", name: `node-${i}`, node: node(i, at), at, key: "reconcile", reconciled: true }));
    const result = await new HistoryStore(db).apply(observations);
    assert.equal(result.transitions, 12_000, "Ready and MemoryPressure of every node");
    assert.equal(await db.prisma.nodeState.count({ where: { cluster: "big", deletedAt: null } }), 6_000);
    assert.equal(await db.prisma.conditionTransition.count({ where: { cluster: "big" } }), 12_000);
    assert.equal(result.notices.length, 6_000);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      warnings.filter((w) => /client\.query\(\)|DeprecationWarning/.test(w)),
      [],
    );
  } finally {
    process.off("warning", onWarning);
    await dispose();
  }
});
