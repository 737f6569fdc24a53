import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { graphql, startTestApp, subscribers } from "../support/app.js";
import { runCli } from "../support/cli.js";
import { eventually } from "../support/sim-cluster.js";
import { startRelayedSim } from "../support/tcp-proxy.js";

const CLUSTERS = `{ clusters { name connected disconnectedSince lastError } }`;
const CHANGED = `subscription { clusterStatusChanged { name disconnectedSince lastError synced } }`;

describe("a cluster that stops answering is not live, and says since when", () => {
  test("disconnectedSince is set while its apiserver is gone and cleared when it is back; clusterStatusChanged says both; `nodes` marks its nodes", async () => {
    const sim = await startRelayedSim({ nodes: 3, seed: 21, name: "far" });
    const { app, url, probes } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] } }, { clusterTuning: { backoffInitialMs: 50 } });
    const client = createClient({ url: url.replace(/^http/, "ws") + "/graphql", webSocketImpl: WebSocket, retryAttempts: 0, lazy: false });
    try {
      const live = await eventually(async () => {
        const cluster = (await graphql(url, CLUSTERS)).body.data?.clusters[0];
        return cluster?.connected && cluster.disconnectedSince === null ? cluster : undefined;
      }, "the cluster live");
      assert.deepEqual(live, { name: "far", connected: true, disconnectedSince: null, lastError: null });
      const received: any[] = [];
      const listening = probes.subscriberCount();
      client.subscribe({ query: CHANGED }, { next: (v) => received.push(v), error: (e) => received.push({ error: e }), complete: () => {} });
      await subscribers(probes, listening + 1);

      const cut = Date.now();
      await sim.relay.pause();
      const down = await eventually(() => received.find((e) => e.data?.clusterStatusChanged.disconnectedSince), "clusterStatusChanged: not live");
      const since = Date.parse(down.data.clusterStatusChanged.disconnectedSince);
      assert.ok(since >= cut - 1_000 && since <= Date.now(), `since ${down.data.clusterStatusChanged.disconnectedSince}, cut at ${new Date(cut).toISOString()}`);
      assert.equal(down.data.clusterStatusChanged.name, "far");
      const queried = (await graphql(url, CLUSTERS)).body.data.clusters[0];
      assert.equal(queried.disconnectedSince, down.data.clusterStatusChanged.disconnectedSince);
      assert.equal(queried.connected, false);
      await eventually(async () => (await graphql(url, CLUSTERS)).body.data.clusters[0].lastError, "the connection error");

      const nodes = await runCli(["nodes", "--url", url]);
      assert.equal(nodes.code, 0, nodes.stderr);
      assert.match(nodes.stderr, new RegExp(`^Warning: cluster far is not live since ${queried.disconnectedSince.replace(/\./g, "\\.")} \\(.+\\): its nodes are shown as last known\\n$`));
      const rows = nodes.stdout
        .trimEnd()
        .split("\n")
        .slice(1)
        .map((l) => l.split(/\s{2,}/));
      assert.equal(rows.length, 3);
      assert.ok(
        rows.every((r) => r[0] === "far" && r[2] === "Ready (stale)"),
        nodes.stdout,
      );
      const json = JSON.parse((await runCli(["nodes", "--url", url, "-o", "json"])).stdout);
      assert.deepEqual(new Set(json.map((n: any) => n.clusterDisconnectedSince)), new Set([queried.disconnectedSince]));

      await sim.relay.resume();
      await eventually(() => received.some((e, i) => i > received.indexOf(down) && e.data?.clusterStatusChanged.disconnectedSince === null), "clusterStatusChanged: live again", 20_000);
      assert.deepEqual((await graphql(url, CLUSTERS)).body.data.clusters[0], { name: "far", connected: true, disconnectedSince: null, lastError: null });
      const after = await runCli(["nodes", "--url", url]);
      assert.equal(after.stderr, "");
      assert.ok(!after.stdout.includes("(stale)"), after.stdout);
      assert.ok(
        received.every((e) => !e.error),
        JSON.stringify(received),
      );
    } finally {
      await client.dispose();
      await app.stop();
      await sim.stop();
    }
  });
});
