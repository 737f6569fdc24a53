import { once } from "node:events";
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { graphql, startTestApp, subscribers } from "../support/app.js";
import { eventually, startSimWithKubeconfig } from "../support/sim-cluster.js";

// Large events (every pod of the node with its resources) fill the socket buffers quickly.
const HEAVY = `subscription { nodeStatusChanged { transition { type to at } node { name labels { key value } annotations { key value }
  pods { namespace name phase ownerKind requests { quantities { key value } } limits { quantities { key value } } } } } }`;

describe("a slow subscriber", () => {
  test("is cut off with 1013 when it falls too far behind, while another keeps receiving everything", async () => {
    const cluster = await startSimWithKubeconfig({ nodes: 2, seed: 61, clockSpeed: 0 });
    const { app, url, logs, probes } = await startTestApp(
      { clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] } },
      { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200 }, subscriberQueue: 50 },
    );
    const healthy = createClient({ url: url.replace(/^http/, "ws") + "/graphql", webSocketImpl: WebSocket, retryAttempts: 0 });
    try {
      await eventually(async () => {
        const h = (await graphql(url, "{ service { history { recordedTransitions pendingWrites } } }")).body.data.service.history;
        return h.recordedTransitions > 0 && h.pendingWrites === 0;
      }, "the first records");

      // The stalled client speaks graphql-ws by hand, then stops reading its socket.
      const stalled = new WebSocket(url.replace(/^http/, "ws") + "/graphql", "graphql-transport-ws");
      await new Promise((resolve, reject) => stalled.once("open", resolve).once("error", reject));
      stalled.send(JSON.stringify({ type: "connection_init" }));
      await new Promise((resolve) => stalled.once("message", resolve));
      const listening = probes.subscriberCount();
      stalled.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query: HEAVY } }));
      const closed = new Promise<number>((resolve) => stalled.once("close", (code) => resolve(code)));

      let received = 0;
      healthy.subscribe({ query: HEAVY }, { next: () => void received++, error: () => {}, complete: () => {} });
      await subscribers(probes, listening + 2);
      (stalled as unknown as { _socket: { pause(): void } })._socket.pause();

      const node = cluster.sim.cluster.nodeNames()[0]!;
      const flaps = 3_000;
      for (let i = 0; i < flaps; i++) {
        cluster.sim.cluster.advance(1_000);
        cluster.sim.cluster.setNodeCondition(node, "Ready", i % 2 === 0 ? "False" : "True");
        if (i % 100 === 0) await new Promise((r) => setImmediate(r));
      }
      await eventually(() => logs.lines.some((l) => /subscriber too slow/.test(String(l.msg))), "the stalled subscriber is cut off", 30_000);
      await eventually(() => received >= flaps, `the healthy subscriber receives all ${flaps} events (has ${received})`, 30_000);
      assert.equal(received, flaps);
      (stalled as unknown as { _socket: { resume(): void } })._socket.resume();
      assert.equal(await closed, 1013);
    } finally {
      await healthy.dispose();
      await app.stop();
      await cluster.stop();
    }
  });
});

describe("a dead connection", () => {
  test("that stops answering pings is dropped, and one that answers stays", async () => {
    const { app, url } = await startTestApp({}, { keepAliveMs: 200 });
    try {
      const open = (autoPong: boolean) =>
        new Promise<WebSocket>((resolve, reject) => {
          const socket = new WebSocket(url.replace(/^http/, "ws") + "/graphql", "graphql-transport-ws", { autoPong });
          socket.once("open", () => resolve(socket)).once("error", reject);
        });
      const [dead, alive] = await Promise.all([open(false), open(true)]);
      const deadClosed = new Promise<number>((resolve) => dead.once("close", (code) => resolve(code)));
      // The server terminates the socket without a closing handshake: the client sees 1006.
      assert.equal(await deadClosed, 1006);
      // Three more pings answered: past the point where an unanswered one would have cut it.
      for (let pings = 0; pings < 3; pings++) await once(alive, "ping");
      assert.equal(alive.readyState, WebSocket.OPEN);
      alive.close();
    } finally {
      await app.stop();
    }
  });
});
