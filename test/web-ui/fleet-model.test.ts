import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { importWebModule } from "../support/web-module.js";

interface Tile {
  id: string;
  cluster: string;
  name: string;
  ready: string;
  cordoned: boolean;
  draining: boolean;
  labels: Record<string, string>;
  roles: string[];
}
interface Group {
  path: string[];
  counts: Record<string, number>;
  children: Group[];
  nodes: Tile[];
}

describe("web UI fleet model", () => {
  let model: any;
  before(async () => (model = await importWebModule("fleet/fleet-model.ts")));

  const node = (
    cluster: string,
    name: string,
    ready: "TRUE" | "FALSE" | "UNKNOWN",
    labels: Record<string, string> = {},
    extra: { unschedulable?: boolean; drain?: boolean; roles?: string[] } = {},
  ): Tile =>
    model.toTile({
      cluster,
      name,
      ready,
      unschedulable: extra.unschedulable ?? false,
      status: "Ready",
      roles: extra.roles ?? [],
      labels: Object.entries(labels).map(([key, value]) => ({ key, value })),
      activeDrain: extra.drain ? { id: "d1" } : null,
    });

  test("a node from the API becomes a tile: id, readiness in three states, cordon, drain, labels", () => {
    const tile = node("sim", "a", "FALSE", { zone: "z1" }, { unschedulable: true, drain: true });
    assert.deepEqual(
      { id: tile.id, ready: tile.ready, cordoned: tile.cordoned, draining: tile.draining, labels: tile.labels },
      { id: "sim/a", ready: "false", cordoned: true, draining: true, labels: { zone: "z1" } },
    );
    assert.equal(node("sim", "b", "TRUE").ready, "true");
    assert.equal(node("sim", "c", "UNKNOWN").ready, "unknown");
  });

  test("a node's group values follow the reports: pool labels in order, zone and instance type with their beta labels, roles", () => {
    const tile = node(
      "sim",
      "a",
      "TRUE",
      { "node-pool": "late", "karpenter.sh/nodepool": "early", "failure-domain.beta.kubernetes.io/zone": "z9", "beta.kubernetes.io/instance-type": "m5" },
      { roles: ["worker", "gpu"] },
    );
    assert.deepEqual(model.groupPath(["CLUSTER", "NODE_POOL", "ZONE", "INSTANCE_TYPE", "ROLE", "label:node-pool", "label:absent"], tile), [
      "sim",
      "early",
      "z9",
      "m5",
      "worker,gpu",
      "late",
      model.NONE,
    ]);
    assert.equal(model.groupValue("ROLE", node("sim", "b", "TRUE")), null);
  });

  test("groups are counted over all their nodes and sorted by value, a missing value last; nodes by cluster then name", () => {
    const nodes = [
      node("b", "n2", "TRUE", { zone: "z2" }),
      node("a", "n9", "FALSE", { zone: "z1" }, { unschedulable: true }),
      node("a", "n1", "UNKNOWN"),
      node("a", "n3", "TRUE", { zone: "z1" }, { drain: true }),
    ];
    const root: Group = model.groupNodes(nodes, ["label:zone"]);
    assert.deepEqual(root.counts, { total: 4, ready: 2, notReady: 1, unknown: 1, cordoned: 1, draining: 1 });
    assert.deepEqual(
      root.children.map((group) => [group.path.join("/"), group.counts.total, group.nodes.map((n) => n.id)]),
      [
        ["z1", 2, ["a/n3", "a/n9"]],
        ["z2", 1, ["b/n2"]],
        [model.NONE, 1, ["a/n1"]],
      ],
    );
  });

  test("two levels: each group's path runs from the top level down", () => {
    const root: Group = model.groupNodes([node("a", "n1", "TRUE", { zone: "z1" }), node("b", "n2", "TRUE", { zone: "z1" })], ["label:zone", "CLUSTER"]);
    assert.deepEqual(
      root.children[0]!.children.map((group) => group.path),
      [
        ["z1", "a"],
        ["z1", "b"],
      ],
    );
  });

  test("counting a node out undoes counting it in", () => {
    const counts = model.emptyCounts();
    const tile = node("a", "n1", "FALSE", {}, { unschedulable: true, drain: true });
    model.count(counts, tile, 1);
    model.count(counts, tile, -1);
    assert.deepEqual(counts, model.emptyCounts());
  });

  test("the name filter wants every word, in any case, anywhere in the name", () => {
    const matches = model.nameMatcher("  GPU  east ");
    assert.equal(matches(node("a", "gpu-node-east-1", "TRUE")), true);
    assert.equal(matches(node("a", "gpu-node-west-1", "TRUE")), false);
    assert.equal(model.nameMatcher("")(node("a", "anything", "TRUE")), true);
  });

  test("a tile says its state in words, marks included, and when its cluster is stale", () => {
    assert.equal(model.describeTile(node("sim", "a", "FALSE", {}, { unschedulable: true, drain: true })), "a (sim): NotReady, cordoned, draining");
    assert.equal(model.describeTile(node("sim", "b", "UNKNOWN")), "b (sim): Unknown");
    assert.match(model.describeTile(node("sim", "c", "TRUE"), new Date().toISOString()), /^c \(sim\): Ready; last known, cluster not live since \d\d:\d\d:\d\d$/);
  });
});
