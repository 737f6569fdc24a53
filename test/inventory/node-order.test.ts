import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { CachedNode, NodeUsageSample } from "../../src/cluster/model.js";
import type { NodeOrderBy } from "../../src/graphql/generated/resolvers-types.js";
import { nodeKeyOf, resolveNodeOrder, sortNodes, type NodeOrderMetrics } from "../../src/inventory/node-order.js";

function node(cluster: string, name: string, creationTimestamp: string): CachedNode {
  return {
    cluster,
    name,
    uid: `${cluster}/${name}`,
    resourceVersion: "1",
    creationTimestamp,
    labels: {},
    annotations: {},
    taints: [],
    unschedulable: false,
    conditions: [],
    addresses: [],
    nodeInfo: { kubeletVersion: "", containerRuntimeVersion: "", osImage: "", kernelVersion: "", operatingSystem: "", architecture: "" },
    capacity: {},
    allocatable: {},
  };
}

// Two clusters with overlapping names, tied values and nodes without samples.
const NODES = [
  node("prod", "b", "2026-01-02T00:00:00Z"),
  node("dev", "b", "2026-01-01T00:00:00Z"),
  node("prod", "a", "2026-01-01T00:00:00Z"),
  node("dev", "c", "2026-01-03T00:00:00Z"),
  node("prod", "d", "2025-12-31T23:59:59Z"),
  node("dev", "a", "2026-01-02T00:00:00Z"),
];
const USAGE: Record<string, [cpu: number, memory: number] | undefined> = {
  "prod/b": [500, 2048],
  "dev/b": [100, 4096],
  "prod/a": [500, 1024],
  "dev/c": undefined,
  "prod/d": [900, 1024],
  "dev/a": undefined,
};
const PODS: Record<string, number> = { "prod/b": 3, "dev/b": 10, "prod/a": 3, "dev/c": 0, "prod/d": 3, "dev/a": 7 };

const metrics: NodeOrderMetrics = {
  usage(n): NodeUsageSample | undefined {
    const u = USAGE[`${n.cluster}/${n.name}`];
    return u ? { cpuMillicores: u[0], memoryBytes: u[1], timestamp: "2026-01-01T00:00:00Z" } : undefined;
  },
  podCount: (n) => PODS[`${n.cluster}/${n.name}`]!,
};

const ids = (nodes: CachedNode[]) => nodes.map((n) => `${n.cluster}/${n.name}`);

describe("sortNodes orders by every field in both directions, ties by cluster then name", () => {
  const cases: [NodeOrderBy | undefined, string[]][] = [
    [undefined, ["dev/a", "prod/a", "dev/b", "prod/b", "dev/c", "prod/d"]],
    [{ field: "NAME" }, ["dev/a", "prod/a", "dev/b", "prod/b", "dev/c", "prod/d"]],
    [{ field: "NAME", direction: "ASC" }, ["dev/a", "prod/a", "dev/b", "prod/b", "dev/c", "prod/d"]],
    // Same-name nodes of two clusters keep cluster order ascending in both directions.
    [{ field: "NAME", direction: "DESC" }, ["prod/d", "dev/c", "dev/b", "prod/b", "dev/a", "prod/a"]],
    [{ field: "CREATED_AT" }, ["prod/d", "dev/b", "prod/a", "dev/a", "prod/b", "dev/c"]],
    [{ field: "CREATED_AT", direction: "DESC" }, ["dev/c", "dev/a", "prod/b", "dev/b", "prod/a", "prod/d"]],
    // Nodes without a sample (dev/a, dev/c) come last in both directions.
    [{ field: "CPU_USAGE" }, ["dev/b", "prod/a", "prod/b", "prod/d", "dev/a", "dev/c"]],
    [{ field: "CPU_USAGE", direction: "DESC" }, ["prod/d", "prod/a", "prod/b", "dev/b", "dev/a", "dev/c"]],
    [{ field: "MEMORY_USAGE" }, ["prod/a", "prod/d", "prod/b", "dev/b", "dev/a", "dev/c"]],
    [{ field: "MEMORY_USAGE", direction: "DESC" }, ["dev/b", "prod/b", "prod/a", "prod/d", "dev/a", "dev/c"]],
    [{ field: "POD_COUNT" }, ["dev/c", "prod/a", "prod/b", "prod/d", "dev/a", "dev/b"]],
    [{ field: "POD_COUNT", direction: "DESC" }, ["dev/b", "dev/a", "prod/a", "prod/b", "prod/d", "dev/c"]],
    [{ field: "POD_COUNT", direction: null }, ["dev/c", "prod/a", "prod/b", "prod/d", "dev/a", "dev/b"]],
  ];
  for (const [orderBy, expected] of cases) {
    const label = orderBy ? `${orderBy.field} ${orderBy.direction ?? "(default)"}` : "no orderBy (NAME ASC)";
    test(label, () => assert.deepEqual(ids(sortNodes(NODES, orderBy, metrics)), expected));
  }

  test("the order does not depend on the input order", () => {
    const reversed = [...NODES].reverse();
    for (const [orderBy] of cases) assert.deepEqual(ids(sortNodes(reversed, orderBy, metrics)), ids(sortNodes(NODES, orderBy, metrics)));
  });

  test("the input is not changed", () => {
    const input = [...NODES];
    sortNodes(input, { field: "CPU_USAGE" }, metrics);
    assert.deepEqual(input, NODES);
  });

  test("names compare by code unit, not locale: upper case and digits first", () => {
    const odd = [node("c", "b", ""), node("c", "B", ""), node("c", "10", ""), node("c", "9", "")];
    assert.deepEqual(
      ids(sortNodes(odd, { field: "NAME" }, metrics)).map((id) => id.slice(2)),
      ["10", "9", "B", "b"],
    );
  });

  test("an unparseable creation time sorts last, like a missing sample", () => {
    const odd = [node("c", "x", "not a time"), node("c", "y", "2026-01-01T00:00:00Z")];
    assert.deepEqual(ids(sortNodes(odd, { field: "CREATED_AT", direction: "DESC" }, metrics)), ["c/y", "c/x"]);
  });
});

describe("nodeKeyOf and resolveNodeOrder", () => {
  test("keys are [primary, cluster, name]", () => {
    const n = NODES[0]!;
    assert.deepEqual(nodeKeyOf({ field: "NAME" }, metrics)(n), ["b", "prod", "b"]);
    assert.deepEqual(nodeKeyOf({ field: "CREATED_AT" }, metrics)(n), [Date.UTC(2026, 0, 2), "prod", "b"]);
    assert.deepEqual(nodeKeyOf({ field: "CPU_USAGE" }, metrics)(n), [500, "prod", "b"]);
    assert.deepEqual(nodeKeyOf({ field: "MEMORY_USAGE" }, metrics)(NODES[3]!), [null, "dev", "c"]);
    assert.deepEqual(nodeKeyOf({ field: "POD_COUNT" }, metrics)(n), [3, "prod", "b"]);
  });

  test("defaults: NAME ASC", () => {
    assert.deepEqual(resolveNodeOrder(undefined), { field: "NAME", direction: "ASC" });
    assert.deepEqual(resolveNodeOrder({ field: "POD_COUNT" }), { field: "POD_COUNT", direction: "ASC" });
    assert.deepEqual(resolveNodeOrder({ field: "POD_COUNT", direction: "DESC" }), { field: "POD_COUNT", direction: "DESC" });
  });
});
