import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { graphql, startTestApp } from "../support/app.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const CORDON = `mutation($n: String!, $r: String) { cordonNode(name: $n, reason: $r) { name unschedulable status } }`;
const UNCORDON = `mutation($n: String!, $r: String) { uncordonNode(name: $n, reason: $r) { name unschedulable status } }`;
const EVENTS = `query($n: String) { maintenanceEvents(filter: { node: $n }) { edges { node { kind actor reason } } } }`;

describe("cordonNode and uncordonNode", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;
  /** Each test has a worker of its own, so no test depends on what another left behind. */
  let workers: string[];

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 3, seed: 5, clockSpeed: 0 });
    ({ app, url } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] } }, { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200 } }));
    workers = sim.sim.cluster.nodeNames().filter((n) => !n.startsWith("control-plane"));
    assert.ok(workers.length >= 2, `two workers to use, got ${workers}`);
  });
  after(async () => {
    await app.stop();
    await sim.stop();
  });

  /** The node's maintenance events, newest first, once there are at least `count`. */
  const events = async (node: string, count: number) =>
    eventually(async () => {
      const list = (await graphql(url, EVENTS, { n: node })).body.data.maintenanceEvents.edges.map((e: any) => e.node);
      return list.length >= count ? list : undefined;
    }, `${count} maintenance event(s) of ${node}`);
  const patches = () => sim.sim.requestLog().filter((r) => r.method === "PATCH" && r.resource === "nodes").length;

  test("cordon patches the node once, says who and why on it for kubectl users, and is recorded with the actor", async () => {
    const node = workers[0];
    const r = await graphql(url, CORDON, { n: node, r: "disk replacement" });
    assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
    assert.deepEqual(r.body.data.cordonNode, { name: node, unschedulable: true, status: "Ready,SchedulingDisabled" });
    const row = (await sim.kubectl("get", "node", node, "--no-headers")).trim().split(/\s+/);
    assert.equal(row[1], "Ready,SchedulingDisabled");
    const note = JSON.parse(await sim.kubectl("get", "node", node, "-o", "jsonpath={.metadata.annotations.node-inventory\\.io/maintenance}"));
    assert.deepEqual(note, { actor: "local-admin", reason: "disk replacement", unschedulable: true });
    const [cordoned] = await events(node, 1);
    assert.deepEqual(cordoned, { kind: "CORDONED", actor: "local-admin", reason: "disk replacement" });

    // Idempotent: a second cordon changes nothing and records nothing.
    const before = patches();
    const again = await graphql(url, CORDON, { n: node, r: "again" });
    assert.deepEqual(again.body.data.cordonNode, { name: node, unschedulable: true, status: "Ready,SchedulingDisabled" });
    assert.equal(patches(), before, "no second patch");
    // No second event: the recorder records a node's changes in order, so once the uncordon
    // that follows is recorded, a second CORDONED would have been recorded before it.
    await graphql(url, UNCORDON, { n: node, r: "marker" });
    await eventually(async () => ((await events(node, 2))[0].kind === "UNCORDONED" ? true : undefined), "the uncordon recorded");
    assert.deepEqual(await events(node, 2), [
      { kind: "UNCORDONED", actor: "local-admin", reason: "marker" },
      { kind: "CORDONED", actor: "local-admin", reason: "disk replacement" },
    ]);
  });

  test("uncordon removes spec.unschedulable as kubectl does, and is recorded; an uncordon made with kubectl is the external actor's", async () => {
    const node = workers[1];
    await graphql(url, CORDON, { n: node, r: "disk replacement" });
    await events(node, 1);
    const r = await graphql(url, UNCORDON, { n: node, r: "disk replaced" });
    assert.deepEqual(r.body.data.uncordonNode, { name: node, unschedulable: false, status: "Ready" });
    assert.equal((sim.sim.cluster.get("nodes", node) as any).spec.unschedulable, undefined);
    const [uncordoned] = await events(node, 2);
    assert.deepEqual(uncordoned, { kind: "UNCORDONED", actor: "local-admin", reason: "disk replaced" });

    await sim.kubectl("cordon", node);
    const [external] = await events(node, 3);
    // Our note on the node describes the uncordon, not this cordon: not ours.
    assert.deepEqual(external, { kind: "CORDONED", actor: "external", reason: null });
    await graphql(url, UNCORDON, { n: node });
  });

  test("a node that is not there is NOT_FOUND; an ambiguous or unknown cluster is refused", async () => {
    const missing = await graphql(url, CORDON, { n: "ghost" });
    assert.equal(missing.body.errors![0].extensions.code, "NOT_FOUND");
    assert.match(missing.body.errors![0].message, /node "ghost" not found in cluster "sim"/);
    const unknown = await graphql(url, `mutation { uncordonNode(cluster: "elsewhere", name: "x") { name } }`);
    assert.equal(unknown.body.errors![0].extensions.code, "NOT_FOUND");
    const noName = await graphql(url, `mutation { cordonNode { name } }`);
    assert.equal(noName.body.errors![0].extensions.code, "GRAPHQL_VALIDATION_FAILED");
  });
});
