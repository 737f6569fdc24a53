import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { graphql, startTestApp } from "../support/app.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const CHANGES = `query($f: NodeChangeFilter, $first: Int, $after: String) {
  nodeChanges(filter: $f, first: $first, after: $after) { edges { cursor node { kind key from to actor node cluster } } pageInfo { hasNextPage endCursor } }
}`;
const NODE_CHANGES = `query($n: String!, $first: Int) { node(name: $n) { changes(first: $first) { kind key from to actor } } }`;
const EVENTS = `query($n: String, $kinds: [MaintenanceEventKind!]) { maintenanceEvents(filter: { node: $n, kinds: $kinds }) { edges { node { kind actor reason detail } } } }`;

describe("node changes read back: kubectl's label, taint and a reboot, as a user sees them", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;
  let node: string;
  let startedAt: Date;

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 3, seed: 11, clockSpeed: 0 });
    ({ app, url } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] } }, { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200, coverageIntervalMs: 200 } }));
    node = sim.sim.cluster.nodeNames().find((n) => !n.startsWith("control-plane"))!;
    startedAt = new Date();
    // The recorder has seen every node once it wrote their CREATED rows.
    await eventually(
      async () => {
        const edges = (await graphql(url, CHANGES, { f: { kinds: ["CREATED"] } })).body.data?.nodeChanges.edges;
        return edges?.length === sim.sim.cluster.nodeNames().length || undefined;
      },
      "every node's CREATED change",
      20_000,
    );
  });
  after(async () => {
    await app.stop();
    await sim.stop();
  });

  const changesOf = (kinds: string[], count: number) =>
    eventually(
      async () => {
        const edges = (await graphql(url, CHANGES, { f: { node, kinds } })).body.data?.nodeChanges.edges;
        return edges?.length >= count ? edges.map((e: any) => e.node) : undefined;
      },
      `${count} ${kinds.join("/")} change(s) of ${node}`,
      10_000,
    );

  test("kubectl label: one LABELS change per key, actor external, and a LABELED maintenance event in kubectl's syntax", async () => {
    await sim.kubectl("label", "node", node, "env=prod", "team=web");
    const changes = await changesOf(["LABELS"], 2);
    assert.deepEqual(changes.map((c: any) => [c.key, c.from, c.to, c.actor]).sort(), [
      ["env", null, "prod", "external"],
      ["team", null, "web", "external"],
    ]);
    await sim.kubectl("label", "node", node, "env=staging", "--overwrite");
    await sim.kubectl("label", "node", node, "team-");
    const later = await changesOf(["LABELS"], 4);
    // Newest first.
    assert.deepEqual(
      later.slice(0, 2).map((c: any) => [c.key, c.from, c.to]),
      [
        ["team", "web", null],
        ["env", "prod", "staging"],
      ],
    );
    const events = (await graphql(url, EVENTS, { n: node, kinds: ["LABELED"] })).body.data.maintenanceEvents.edges.map((e: any) => e.node);
    assert.deepEqual(events, [
      { kind: "LABELED", actor: "external", reason: null, detail: "team-" },
      { kind: "LABELED", actor: "external", reason: null, detail: "env=staging" },
      { kind: "LABELED", actor: "external", reason: null, detail: "env=prod team=web" },
    ]);
  });

  test("kubectl taint: one TAINTS change per key and effect, value:effect as text", async () => {
    await sim.kubectl("taint", "node", node, "dedicated=gpu:NoSchedule", "maintenance:NoExecute");
    const changes = await changesOf(["TAINTS"], 2);
    assert.deepEqual(changes.map((c: any) => [c.key, c.from, c.to, c.actor]).sort(), [
      ["dedicated", null, "gpu:NoSchedule", "external"],
      ["maintenance", null, "NoExecute", "external"],
    ]);
    await sim.kubectl("taint", "node", node, "maintenance:NoExecute-");
    const [removed] = await changesOf(["TAINTS"], 3);
    assert.deepEqual([removed.key, removed.from, removed.to], ["maintenance", "NoExecute", null]);
    const [event] = (await graphql(url, EVENTS, { n: node, kinds: ["TAINTED"] })).body.data.maintenanceEvents.edges.map((e: any) => e.node);
    assert.deepEqual(event, { kind: "TAINTED", actor: "external", reason: null, detail: "maintenance:NoExecute-" });
  });

  test("kubectl patch --subresource status of bootID is REBOOTED, from the old bootID to the new; the availability report counts it", async () => {
    const old = await sim.kubectl("get", "node", node, "-o", "jsonpath={.status.nodeInfo.bootID}");
    assert.ok(old.length > 0, "the simulator's node has a bootID");
    await sim.kubectl("patch", "node", node, "--subresource", "status", "--type", "merge", "-p", JSON.stringify({ status: { nodeInfo: { bootID: "boot-after-patch" } } }));
    const [reboot] = await changesOf(["REBOOTED"], 1);
    assert.deepEqual(reboot, { kind: "REBOOTED", key: null, from: old, to: "boot-after-patch", actor: "external", node, cluster: "sim" });

    const [newest] = (await graphql(url, NODE_CHANGES, { n: node, first: 1 })).body.data.node.changes;
    assert.deepEqual(newest, { kind: "REBOOTED", key: null, from: old, to: "boot-after-patch", actor: "external" });

    // The report counts only recorded time: it lists the node once the recording covers the reboot.
    const report = await eventually(async () => {
      const answer = await graphql(url, `query($from: DateTime!, $to: DateTime!) { availabilityReport(from: $from, to: $to) { nodes { node reboots } total { reboots } } }`, {
        from: new Date(startedAt.getTime() - 1_000).toISOString(),
        to: new Date(Date.now() + 60_000).toISOString(),
      });
      assert.equal(answer.body.errors, undefined, JSON.stringify(answer.body.errors));
      return answer.body.data.availabilityReport.nodes.some((n: any) => n.node === node && n.reboots > 0) && answer;
    }, "the reboot in the availability report");
    const nodes = report.body.data.availabilityReport.nodes;
    assert.equal(nodes.find((n: any) => n.node === node).reboots, 1);
    assert.equal(report.body.data.availabilityReport.total.reboots, 1);
  });

  test("pages follow each other without overlap; Node.changes(first) is the newest first; bad input is refused with its code", async () => {
    const all = (await graphql(url, CHANGES, { f: { node } })).body.data.nodeChanges.edges.map((e: any) => e.cursor);
    const first = (await graphql(url, CHANGES, { f: { node }, first: 2 })).body.data.nodeChanges;
    assert.equal(first.pageInfo.hasNextPage, true);
    const second = (await graphql(url, CHANGES, { f: { node }, first: 100, after: first.pageInfo.endCursor })).body.data.nodeChanges;
    assert.deepEqual(
      [...first.edges, ...second.edges].map((e: any) => e.cursor),
      all,
    );
    assert.equal(second.pageInfo.hasNextPage, false);
    const oldest = second.edges.at(-1).node;
    assert.deepEqual([oldest.kind, oldest.actor], ["CREATED", "external"]);

    const list = (await graphql(url, NODE_CHANGES, { n: node, first: 3 })).body.data.node.changes;
    assert.deepEqual(
      list,
      first.edges
        .concat(second.edges)
        .slice(0, 3)
        .map((e: any) => {
          const { node: _n, cluster: _c, ...rest } = e.node;
          return rest;
        }),
    );

    const code = async (query: string, variables: Record<string, unknown>) => (await graphql(url, query, variables)).body.errors?.[0]?.extensions?.code;
    assert.equal(await code(CHANGES, { after: "garbage" }), "BAD_USER_INPUT");
    assert.equal(await code(CHANGES, { first: -1 }), "BAD_USER_INPUT");
    assert.equal(await code(CHANGES, { f: { since: "2026-01-02T00:00:00Z", until: "2026-01-01T00:00:00Z" } }), "BAD_USER_INPUT");
    assert.equal(await code(CHANGES, { f: { cluster: "nowhere" } }), "NOT_FOUND");
    assert.equal(await code(NODE_CHANGES, { n: node, first: 501 }), "BAD_USER_INPUT");
  });
});
