import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { bearer, tokensFile, TOKENS } from "../auth/support.js";
import { graphql, startTestApp } from "../support/app.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const DRAIN = `mutation($n: String!, $o: DrainOptions) { drainNode(name: $n, options: $o) { id status startedAt } }`;
const LIST = `query($f: DrainOperationFilter, $first: Int, $after: String) {
  drainOperations(filter: $f, first: $first, after: $after) { edges { cursor node { id node status dryRun requestedBy } } pageInfo { hasNextPage endCursor } }
}`;
const ALL_FLAGS = { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true };

describe("drainOperations: every drain, newest first, filtered", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;
  let tokens: ReturnType<typeof tokensFile>;
  const ids: string[] = [];
  let between: string;
  let nodeA: string;
  let nodeB: string;

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 6, seed: 7, clockSpeed: 30 });
    tokens = tokensFile();
    ({ app, url } = await startTestApp(
      { clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] }, auth: { tokensFile: tokens.path, mutationRateLimit: 0 } },
      { maintenanceTuning: { evictionRetryMs: 300, deletionPollMs: 100, heartbeatMs: 300, staleAfterMs: 1_500 } },
    ));
    // Workers without a pod of the payments ledger, whose budget allows no eviction.
    const ledger = new Set((sim.sim.cluster.list("pods", "payments") as any[]).filter((p) => p.metadata.labels?.app === "ledger").map((p) => p.spec.nodeName));
    const workers = sim.sim.cluster.nodeNames().filter((n) => !n.startsWith("control-plane"));
    nodeA = workers.find((n) => !ledger.has(n))!;
    // Only dry-run: a ledger pod on it does not matter.
    nodeB = workers.find((n) => n !== nodeA)!;
    await eventually(async () => (await graphql(url, `{ node(name: "${nodeA}") { name } }`, {}, bearer(TOKENS.viewer))).body.data?.node?.name, "the node in the cache", 20_000);

    const drain = async (token: string, node: string, options: Record<string, unknown>) => {
      const r = await graphql(url, DRAIN, { n: node, o: options }, bearer(token));
      assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
      ids.push(r.body.data.drainNode.id);
      return r.body.data.drainNode;
    };
    // 1: otto's dry run of A (succeeds); 2: ada's dry run of B without flags (refused: FAILED);
    // 3: ada's real drain of A, to its end.
    const first = await drain(TOKENS.operator, nodeA, { ...ALL_FLAGS, dryRun: true });
    // Just after the first started (timestamps are to the millisecond; the next request takes longer).
    between = new Date(Date.parse(first.startedAt) + 1).toISOString();
    await drain(TOKENS.admin, nodeB, { dryRun: true });
    await drain(TOKENS.admin, nodeA, ALL_FLAGS);
    await eventually(
      async () => {
        const op = (await graphql(url, `query($id: ID!) { drainOperation(id: $id) { status } }`, { id: ids[2] }, bearer(TOKENS.viewer))).body.data.drainOperation;
        return op.status === "SUCCEEDED" || undefined;
      },
      "the real drain to succeed",
      30_000,
    );
  });
  after(async () => {
    await app.stop();
    await sim.stop();
    tokens.remove();
  });

  const list = async (variables: Record<string, unknown>) => {
    const r = await graphql(url, LIST, variables, bearer(TOKENS.viewer));
    assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
    return r.body.data.drainOperations;
  };
  const idsOf = async (filter: Record<string, unknown>) => (await list({ f: filter })).edges.map((e: any) => e.node.id);

  test("newest first, dry runs included, with status and requester", async () => {
    const all = (await list({})).edges.map((e: any) => e.node);
    assert.deepEqual(all, [
      { id: ids[2], node: nodeA, status: "SUCCEEDED", dryRun: false, requestedBy: "ada" },
      { id: ids[1], node: nodeB, status: "FAILED", dryRun: true, requestedBy: "ada" },
      { id: ids[0], node: nodeA, status: "SUCCEEDED", dryRun: true, requestedBy: "otto" },
    ]);
  });

  test("by cluster, node, status, requester and period", async () => {
    assert.deepEqual(await idsOf({ cluster: "sim" }), [ids[2], ids[1], ids[0]]);
    assert.deepEqual(await idsOf({ node: nodeA }), [ids[2], ids[0]]);
    assert.deepEqual(await idsOf({ status: "FAILED" }), [ids[1]]);
    assert.deepEqual(await idsOf({ requestedBy: "otto" }), [ids[0]]);
    assert.deepEqual(await idsOf({ requestedBy: "ada", node: nodeA }), [ids[2]]);
    assert.deepEqual(await idsOf({ since: between }), [ids[2], ids[1]]);
    assert.deepEqual(await idsOf({ until: between }), [ids[0]]);
    assert.deepEqual(await idsOf({ status: "RUNNING" }), []);
  });

  test("pages follow each other; bad input is refused with its code", async () => {
    const first = await list({ first: 2 });
    assert.equal(first.pageInfo.hasNextPage, true);
    const rest = await list({ first: 2, after: first.pageInfo.endCursor });
    assert.deepEqual(
      [...first.edges, ...rest.edges].map((e: any) => e.node.id),
      [ids[2], ids[1], ids[0]],
    );
    assert.equal(rest.pageInfo.hasNextPage, false);
    const code = async (variables: Record<string, unknown>) => (await graphql(url, LIST, variables, bearer(TOKENS.viewer))).body.errors?.[0]?.extensions?.code;
    assert.equal(await code({ after: "bm9wZQ" }), "BAD_USER_INPUT");
    assert.equal(await code({ first: 5001 }), "BAD_USER_INPUT");
    assert.equal(await code({ f: { since: between, until: between } }), "BAD_USER_INPUT");
    assert.equal(await code({ f: { status: "DONE" } }), "BAD_USER_INPUT");
    assert.equal(await code({ f: { cluster: "nowhere" } }), "NOT_FOUND");
    const anonymous = await graphql(url, LIST, {});
    assert.equal(anonymous.body.errors?.[0]?.extensions?.code, "UNAUTHENTICATED");
  });

  test("pages back with last and before, and counts every drain the filter selects", async () => {
    const BACK = `query($f: DrainOperationFilter, $last: Int, $before: String) {
      drainOperations(filter: $f, last: $last, before: $before) { totalCount edges { node { id } } pageInfo { hasPreviousPage hasNextPage startCursor endCursor } }
    }`;
    const back = async (variables: Record<string, unknown>) => {
      const r = await graphql(url, BACK, variables, bearer(TOKENS.viewer));
      assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
      return r.body.data.drainOperations;
    };
    const end = await back({ last: 2 });
    assert.deepEqual(
      end.edges.map((e: any) => e.node.id),
      [ids[1], ids[0]],
    );
    assert.deepEqual([end.totalCount, end.pageInfo.hasPreviousPage, end.pageInfo.hasNextPage], [3, true, false]);
    const start = await back({ last: 2, before: end.pageInfo.startCursor });
    assert.deepEqual(
      start.edges.map((e: any) => e.node.id),
      [ids[2]],
    );
    assert.deepEqual([start.pageInfo.hasPreviousPage, start.pageInfo.hasNextPage], [false, true]);
    assert.equal((await back({ f: { node: nodeA } })).totalCount, 2);
  });
});
