import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { startTestApp, subscribers } from "../support/app.js";
import { BACKENDS } from "../support/databases.js";
import { eventually, historyLeaseHolder, startSimWithKubeconfig } from "../support/sim-cluster.js";

const STATUS = `subscription($filter: NodeFilter, $cluster: String) {
  nodeStatusChanged(cluster: $cluster, filter: $filter) {
    cluster name unschedulable at
    node { name status }
    transition { node type from to at }
  }
}`;

/** Collects what a subscription delivers. */
function collect(client: Client, query: string, variables: Record<string, unknown>) {
  const received: any[] = [];
  const errors: unknown[] = [];
  const stop = client.subscribe({ query, variables }, { next: (v) => received.push(v), error: (e) => errors.push(e), complete: () => {} });
  return { received, errors, stop };
}

const wsClient = (url: string) => createClient({ url: url.replace(/^http/, "ws") + "/graphql", webSocketImpl: WebSocket, retryAttempts: 0, lazy: false });

describe("nodeStatusChanged", () => {
  test("a condition patched in the simulator reaches a subscriber whose filter matches, and not one whose filter does not", async () => {
    const cluster = await startSimWithKubeconfig({ nodes: 3, seed: 51, clockSpeed: 0 });
    const { app, url, probes } = await startTestApp({ clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] } }, { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200 } });
    const client = wsClient(url);
    try {
      const [watched, other] = cluster.sim.cluster.nodeNames();
      // Subscribe after the first records (every node's conditions as first seen) are written.
      await eventually(async () => {
        const h = (
          (await (
            await fetch(`${url}/graphql`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ query: "{ service { history { recordedTransitions pendingWrites } } }" }),
            })
          ).json()) as any
        ).data.service.history;
        return h.recordedTransitions > 0 && h.pendingWrites === 0;
      }, "the first records");
      const listening = probes.subscriberCount();
      const matching = collect(client, STATUS, { filter: { names: [watched] } });
      const filteredOut = collect(client, STATUS, { filter: { names: [other] } });
      const everything = collect(client, STATUS, {});
      await subscribers(probes, listening + 3);

      cluster.sim.cluster.advance(10_000);
      cluster.sim.cluster.setNodeCondition(watched!, "Ready", "False", "KubeletNotReady");
      const event = await eventually(() => matching.received[0], "the matching subscriber's event", 5_000);
      assert.deepEqual(event.data.nodeStatusChanged.transition, {
        node: watched,
        type: "Ready",
        from: "TRUE",
        to: "FALSE",
        at: event.data.nodeStatusChanged.at,
      });
      assert.equal(event.data.nodeStatusChanged.node.status, "NotReady");
      await eventually(() => everything.received.length >= 1, "the unfiltered subscriber's event");
      // Then a change of the other node: events reach a subscriber in order, so if the first thing
      // the subscriber filtering on it receives is this one, the watched node's event never reached it.
      cluster.sim.cluster.advance(10_000);
      cluster.sim.cluster.setNodeCondition(other!, "Ready", "False", "KubeletNotReady");
      const marker = await eventually(() => filteredOut.received[0], "the other node's event", 5_000);
      assert.equal(marker.data.nodeStatusChanged.name, other, "the subscriber filtering on another node got nothing before it");

      // A cordon is a status event too, with no transition.
      cluster.sim.cluster.update("nodes", watched!, (copy: any) => void (copy.spec.unschedulable = true));
      const cordon = await eventually(() => matching.received.find((e) => e.data.nodeStatusChanged.unschedulable), "the cordon event", 5_000);
      assert.equal(cordon.data.nodeStatusChanged.transition, null);
      assert.equal(cordon.data.nodeStatusChanged.node.status, "NotReady,SchedulingDisabled");
      assert.deepEqual(matching.errors, []);
    } finally {
      await client.dispose();
      await app.stop();
      await cluster.stop();
    }
  });

  test("a malformed label selector in the filter is an error at subscribe time", async () => {
    const { app, url } = await startTestApp();
    const client = wsClient(url);
    try {
      const bad = collect(client, STATUS, { filter: { labelSelector: "a in (b" } });
      // graphql-ws delivers an error of the subscribe phase as a result with errors.
      const errors = await eventually(() => (bad.received[0]?.errors ?? bad.errors[0]) as any[], "the error");
      assert.equal(errors[0].extensions.code, "BAD_USER_INPUT");
      assert.match(errors[0].message, /labelSelector/);
    } finally {
      await client.dispose();
      await app.stop();
    }
  });
});

describe("one change, many subscribers", () => {
  test("a change reaching more subscribers than are called in one turn (300 on three connections) reaches each once, in order, as the exact text graphql-ws sends", async () => {
    const cluster = await startSimWithKubeconfig({ nodes: 2, seed: 53, clockSpeed: 0 });
    // 100 subscribe frames at once per connection: all admitted together, as the bench's clients are.
    const limits = { maxInFlightPerCaller: 300, maxInFlight: 300 };
    const { app, url, probes } = await startTestApp({ clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] }, limits }, { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200 } });
    // Raw graphql-transport-ws, so the frames are seen as sent.
    const connections: WebSocket[] = [];
    const frames = [0, 1, 2].map(() => [] as string[]);
    try {
      await eventually(async () => {
        const h = (
          (await (
            await fetch(`${url}/graphql`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ query: "{ service { history { recordedTransitions pendingWrites } } }" }),
            })
          ).json()) as any
        ).data.service.history;
        return h.recordedTransitions > 0 && h.pendingWrites === 0;
      }, "the first records");
      const listening = probes.subscriberCount();
      await Promise.all(
        frames.map(async (_, c) => {
          const socket = new WebSocket(url.replace(/^http/, "ws") + "/graphql", "graphql-transport-ws");
          connections.push(socket);
          await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
          socket.on("message", (data) => frames[c]!.push(String(data)));
          socket.send(JSON.stringify({ type: "connection_init" }));
          await eventually(() => frames[c]!.includes('{"type":"connection_ack"}') || undefined, "the ack");
          for (let i = 0; i < 100; i++) socket.send(JSON.stringify({ id: `c${c}-${i}`, type: "subscribe", payload: { query: "subscription { nodeStatusChanged { name transition { from to } } }" } }));
        }),
      );
      await subscribers(probes, listening + 300);
      const node = cluster.sim.cluster.nodeNames()[0]!;
      for (const [round, to] of (["False", "True"] as const).entries()) {
        cluster.sim.cluster.advance(10_000);
        cluster.sim.cluster.setNodeCondition(node, "Ready", to, to === "False" ? "KubeletNotReady" : "KubeletReady");
        await eventually(() => frames.every((f) => f.length >= 1 + 100 * (round + 1)) || undefined, `event ${round + 1} on each of 300 subscriptions`, 10_000);
      }
      assert.deepEqual(
        frames.map((f) => f.length),
        [201, 201, 201],
      );
      const payloads = new Map<string, string[]>();
      for (const [c, received] of frames.entries()) {
        assert.equal(received[0], '{"type":"connection_ack"}');
        for (const text of received.slice(1)) {
          const message = JSON.parse(text);
          // Byte for byte what graphql-ws's JSON.stringify of the message gives.
          assert.equal(text, JSON.stringify({ id: message.id, type: "next", payload: message.payload }));
          assert.ok(message.id.startsWith(`c${c}-`));
          const list = payloads.get(message.id) ?? [];
          payloads.set(message.id, [...list, JSON.stringify(message.payload)]);
        }
      }
      assert.equal(payloads.size, 300);
      const expected = [
        JSON.stringify({ data: { nodeStatusChanged: { name: node, transition: { from: "TRUE", to: "FALSE" } } } }),
        JSON.stringify({ data: { nodeStatusChanged: { name: node, transition: { from: "FALSE", to: "TRUE" } } } }),
      ];
      for (const [id, got] of payloads) assert.deepEqual(got, expected, id);
    } finally {
      for (const socket of connections) socket.close();
      await app.stop();
      await cluster.stop();
    }
  });
});

describe("subscriptions across replicas", () => {
  test("a subscriber on the standby receives what the leader recorded (PostgreSQL LISTEN/NOTIFY)", async () => {
    const postgres = BACKENDS.find((b) => b.name === "postgres")!;
    const cluster = await startSimWithKubeconfig({ nodes: 2, seed: 52, clockSpeed: 0 });
    const fresh = await postgres.create();
    const config = { clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] }, database: fresh.config };
    const leader = await startTestApp(config, { recorderTuning: { leaseDurationMs: 10_000, retryPeriodMs: 200, identity: "leader" } });
    const lease = () => historyLeaseHolder(cluster);
    await eventually(() => lease() === "leader", "the first replica leads");
    const standby = await startTestApp(config, { recorderTuning: { leaseDurationMs: 10_000, retryPeriodMs: 200, identity: "standby" } });
    const listening = standby.probes.subscriberCount();
    const client = wsClient(standby.url);
    try {
      const events = collect(client, `subscription { maintenanceEvents { node kind actor } }`, {});
      const statuses = collect(client, STATUS, {});
      await subscribers(standby.probes, listening + 2);
      const node = cluster.sim.cluster.nodeNames()[0]!;
      cluster.sim.cluster.update("nodes", node, (copy: any) => void (copy.spec.unschedulable = true));
      const event = await eventually(() => events.received[0], "the maintenance event on the standby", 5_000);
      assert.deepEqual(event.data.maintenanceEvents, { node, kind: "CORDONED", actor: "external" });
      await eventually(() => statuses.received.find((e) => e.data.nodeStatusChanged.unschedulable), "the status event on the standby", 5_000);
      assert.equal(lease(), "leader", "the standby only relayed; it did not record");
    } finally {
      await client.dispose();
      await standby.app.stop();
      await leader.app.stop();
      await cluster.stop();
      await fresh.drop();
    }
  });
});
