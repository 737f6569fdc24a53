import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { bearer, init, TOKENS, tokensFile, wsClient } from "../auth/support.js";
import { graphql, startTestApp } from "../support/app.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";
import { OP } from "./operation-fields.js";

const CORDON = `mutation($n: String!) { cordonNode(name: $n, reason: "audit") { name unschedulable } }`;
const UNCORDON = `mutation($n: String!) { uncordonNode(name: $n) { name unschedulable } }`;
const DRAIN = `mutation($n: String!) { drainNode(name: $n, options: { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true, podSelector: "app=ledger", timeoutSeconds: 60 }) { id requestedBy status } }`;

describe("who may change nodes: anonymous, viewer and operator callers, with impersonation", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;
  let tokens: ReturnType<typeof tokensFile>;
  let node: string;
  // Writes to nodes and pods (leader-election leases are the service's own business).
  const writes = () => sim.sim.requestLog().filter((r) => r.method !== "GET" && (r.resource === "nodes" || r.resource === "pods"));

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 6, seed: 7, clockSpeed: 30 });
    tokens = tokensFile();
    ({ app, url } = await startTestApp(
      { clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] }, auth: { tokensFile: tokens.path, impersonate: true } },
      { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200 }, maintenanceTuning: { evictionRetryMs: 300, deletionPollMs: 100 } },
    ));
    node = (sim.sim.cluster.list("pods", "payments") as any[]).find((p) => p.metadata.labels?.app === "ledger").spec.nodeName;
  });
  after(async () => {
    await app.stop();
    await sim.stop();
    tokens.remove();
  });

  test("an anonymous caller is UNAUTHENTICATED and a viewer FORBIDDEN for every mutation; nothing reaches the cluster", async () => {
    const before = writes().length;
    for (const [query, variables] of [
      [CORDON, { n: node }],
      [UNCORDON, { n: node }],
      [DRAIN, { n: node }],
      [`mutation { cancelDrain(id: "00000000-0000-4000-8000-000000000000") { id } }`, {}],
    ] as const) {
      const anonymous = await graphql(url, query, variables);
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.body.errors?.[0]?.extensions?.code, "UNAUTHENTICATED");
      const viewer = await graphql(url, query, variables, bearer(TOKENS.viewer));
      assert.equal(viewer.status, 403);
      assert.equal(viewer.body.errors?.[0]?.extensions?.code, "FORBIDDEN");
    }
    assert.equal(writes().length, before, "no write reached the cluster");
  });

  test("an operator cordons and drains as themselves: the cluster sees Impersonate-User, history names them", async () => {
    const cordon = await graphql(url, CORDON, { n: node }, bearer(TOKENS.operator));
    assert.deepEqual(cordon.body.data.cordonNode, { name: node, unschedulable: true });
    const patch = writes().find((r) => r.method === "PATCH" && r.name === node);
    assert.equal(patch?.impersonatedUser, "otto");
    const event = await eventually(async () => {
      const r = await graphql(url, `query($n: String) { maintenanceEvents(filter: { node: $n, kinds: [CORDONED] }) { edges { node { actor reason } } } }`, { n: node }, bearer(TOKENS.viewer));
      return r.body.data.maintenanceEvents.edges[0]?.node;
    }, "the cordon event");
    assert.deepEqual(event, { actor: "otto", reason: "audit" });

    const drain = await graphql(url, DRAIN, { n: node }, bearer(TOKENS.operator));
    const op = drain.body.data.drainNode;
    assert.equal(op.requestedBy, "otto");
    await eventually(() => writes().some((r) => r.subresource === "eviction"), "an eviction");
    assert.ok(
      writes()
        .filter((r) => r.subresource === "eviction")
        .every((r) => r.impersonatedUser === "otto"),
    );

    // A viewer may watch it, over HTTP and over graphql-ws with the token in connection_init…
    const read = await graphql(url, `query($id: ID!) { drainOperation(id: $id) { ...Op } } ${OP}`, { id: op.id }, bearer(TOKENS.viewer));
    assert.equal(read.body.data.drainOperation.requestedBy, "otto");
    const client = wsClient(url, { authorization: `Bearer ${TOKENS.viewer}` });
    try {
      // The current state comes at once; the drain itself goes on (it is blocked by the ledger's budget).
      const first = await new Promise<any>((resolve, reject) =>
        client.subscribe({ query: `subscription($id: ID!) { drainProgress(id: $id) { id status } }`, variables: { id: op.id } }, { next: resolve, error: reject, complete: () => {} }),
      );
      assert.deepEqual(first.data.drainProgress, { id: op.id, status: "RUNNING" });
    } finally {
      await client.dispose();
    }
    // …but not anonymously.
    const anonymous = await init(url);
    assert.deepEqual(anonymous.acked ? "acked" : anonymous.code, 4401);

    // …and may not cancel it; the operator may.
    const viewerCancel = await graphql(url, `mutation($id: ID!) { cancelDrain(id: $id) { status } }`, { id: op.id }, bearer(TOKENS.viewer));
    assert.equal(viewerCancel.body.errors?.[0]?.extensions?.code, "FORBIDDEN");
    const cancel = await graphql(url, `mutation($id: ID!) { cancelDrain(id: $id) { status message } }`, { id: op.id }, bearer(TOKENS.operator));
    assert.deepEqual(cancel.body.data.cancelDrain, { status: "CANCELLED", message: "cancelled by otto; the node stays cordoned" });
    await graphql(url, UNCORDON, { n: node }, bearer(TOKENS.admin));
  });
});
