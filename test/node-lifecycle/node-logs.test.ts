import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { graphql, startTestApp, type CapturedLogs } from "../support/app.js";
import { bearer, tokensFile, TOKENS } from "../auth/support.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const LOGS = `query($n: String!, $tail: Int, $pattern: String) { node(name: $n) { logs(tailLines: $tail, pattern: $pattern) { query lines truncated } } }`;

describe("Node.logs through the kubelet's node log query", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;
  let logs: CapturedLogs;
  let tokens: ReturnType<typeof tokensFile>;
  let node: string;

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 3, seed: 35, clockSpeed: 0 });
    tokens = tokensFile();
    ({ app, url, logs } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] }, auth: { tokensFile: tokens.path } }));
    await eventually(async () => (await graphql(url, "{ clusters { synced } }", {}, bearer(TOKENS.viewer))).body.data?.clusters[0].synced, "sync", 20_000);
    node = sim.sim.cluster.nodeNames().find((n) => !n.startsWith("control-plane"))!;
  });
  after(async () => {
    await app?.stop();
    await sim?.stop();
    tokens?.remove();
  });

  test("an operator gets the journal's last lines, as kubectl get --raw shows them, bounded by tailLines", async () => {
    const raw = (await sim.kubectl("get", "--raw", `/api/v1/nodes/${node}/proxy/logs/?query=kubelet`)).split("\n").filter(Boolean);
    assert.ok(raw.length > 10, `the simulated journal has lines (${raw.length})`);
    const { body } = await graphql(url, LOGS, { n: node, tail: 5 }, bearer(TOKENS.operator));
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    assert.deepEqual(body.data.node.logs, { query: "kubelet", lines: raw.slice(-5), truncated: true });
    const all = await graphql(url, LOGS, { n: node, tail: 1000 }, bearer(TOKENS.operator));
    assert.deepEqual(all.body.data.node.logs, { query: "kubelet", lines: raw, truncated: false });
    const audit = logs.lines.filter((l) => l.audit === "node-logs");
    assert.deepEqual(audit.map((l) => [l.subject, l.node, l.tailLines, l.outcome]), [["otto", node, 5, "ok"], ["otto", node, 1000, "ok"]]);
  });

  test("pattern filters on the kubelet's side", async () => {
    const { body } = await graphql(url, LOGS, { n: node, tail: 1000, pattern: "SyncLoop ADD" }, bearer(TOKENS.operator));
    const lines = body.data.node.logs.lines as string[];
    assert.ok(lines.length > 0 && lines.every((l) => l.includes("SyncLoop ADD")), lines.join("\n"));
    assert.equal(lines.length, sim.sim.cluster.podsOnNode(node).length);
  });

  test("a viewer is refused, and so are tailLines beyond the bound", async () => {
    const viewer = await graphql(url, LOGS, { n: node, tail: 5 }, bearer(TOKENS.viewer));
    assert.equal(viewer.body.data.node.logs, null);
    assert.equal(viewer.body.errors?.[0].extensions.code, "FORBIDDEN");
    assert.deepEqual(viewer.body.errors?.[0].path, ["node", "logs"]);
    const many = await graphql(url, LOGS, { n: node, tail: 1001 }, bearer(TOKENS.operator));
    assert.equal(many.body.errors?.[0].extensions.code, "BAD_USER_INPUT");
    assert.equal(many.body.errors?.[0].message, "tailLines: between 1 and 1000, got 1001");
  });
});
