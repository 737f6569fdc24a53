import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { graphql } from "../support/app.js";
import { startProgram } from "../support/program.js";
import { eventually, startSimWithKubeconfig } from "../support/sim-cluster.js";

const SUBSCRIPTION = `subscription($names: [String!]) {
  nodeStatusChanged(filter: { names: $names }) {
    name unschedulable
    node { maintenanceEvents(first: 2) { kind } }
  }
}`;

describe("a subscription's later events", () => {
  test("show history recorded after the subscription's first event (each event has loaders of its own)", async () => {
    const cluster = await startSimWithKubeconfig({ nodes: 2, seed: 57, clockSpeed: 0 });
    const program = await startProgram(["--port", "0", "--kubeconfig", cluster.kubeconfigPath, "--data-dir", "memory", "--lease-duration", "2"]);
    const client = createClient({ url: program.url.replace(/^http/, "ws") + "/graphql", webSocketImpl: WebSocket, retryAttempts: 0, lazy: false });
    try {
      await eventually(
        async () => {
          const h = (await graphql(program.url, "{ service { history { recordedTransitions pendingWrites } } }")).body.data.service.history;
          return h.recordedTransitions > 0 && h.pendingWrites === 0;
        },
        "the first records",
        20_000,
      );
      const node = cluster.sim.cluster.nodeNames().find((name) => !(cluster.sim.cluster.get("nodes", name) as any).spec.unschedulable)!;
      const received: any[] = [];
      const errors: unknown[] = [];
      client.subscribe({ query: SUBSCRIPTION, variables: { names: [node] } }, { next: (v) => received.push(v), error: (e) => errors.push(e), complete: () => {} });
      // Until the subscription is live, each flap is an event it may miss: flap until one arrives.
      let flaps = 0;
      await eventually(
        () => {
          if (received.length || errors.length) return true;
          cluster.sim.cluster.advance(10_000);
          cluster.sim.cluster.setNodeCondition(node, "Ready", ++flaps % 2 ? "False" : "True");
          return new Promise<true | undefined>((resolve) => setTimeout(() => resolve(received.length > 0 || undefined), 300));
        },
        "the subscription's first event",
        10_000,
      );
      assert.deepEqual(errors, []);
      assert.deepEqual(received[0].data.nodeStatusChanged.unschedulable, false);
      assert.deepEqual(received[0].data.nodeStatusChanged.node.maintenanceEvents, []);

      // A cordon made in the cluster: recorded as a CORDONED maintenance event, then announced.
      cluster.sim.cluster.update("nodes", node, (copy: any) => void (copy.spec.unschedulable = true));
      const cordoned = await eventually(() => received.find((e) => e.data.nodeStatusChanged.unschedulable === true), "the cordon's event", 10_000);
      assert.deepEqual(cordoned.data.nodeStatusChanged.node.maintenanceEvents[0], { kind: "CORDONED" });
      assert.deepEqual(errors, []);
      assert.equal((await graphql(program.url, "{ __typename }")).body.data.__typename, "Query");
    } finally {
      await client.dispose();
      await program.terminate();
      await cluster.stop();
    }
  });
});
