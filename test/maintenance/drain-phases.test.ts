import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { R } from "../../src/sim/index.js";
import { graphql, startTestApp } from "../support/app.js";
import { eventually, startSimWithKubeconfig } from "../support/sim-cluster.js";

const DRAIN = `mutation($name: String!, $options: DrainOptions) { drainNode(name: $name, options: $options) { id } }`;
const PROGRESS = `subscription($id: ID!) { drainProgress(id: $id) {
  status progressPercent remainingPods
  podsByPhase { notStarted evicting terminating gone notRemoved }
  pods { namespace name status phase action attempts }
} }`;
const ORDER = ["NOT_STARTED", "EVICTING", "TERMINATING", "GONE"];
const kindOf = (pod: any) => pod.metadata.ownerReferences?.find((r: any) => r.controller)?.kind as string | undefined;

describe("a drain's progress by phase", () => {
  test("each pod goes not started, evicting, terminating, gone, in that order; counts by phase move pod by pod", async () => {
    // 30 simulated seconds a second: a pod with a grace period of 30 k seconds takes k seconds to go.
    const sim = await startSimWithKubeconfig({ nodes: 8, seed: 7, clockSpeed: 30 });
    const { app, url } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] } }, { maintenanceTuning: { evictionRetryMs: 300, deletionPollMs: 100, heartbeatMs: 300, staleAfterMs: 1_500 } });
    const client = createClient({ url: url.replace(/^http/, "ws") + "/graphql", webSocketImpl: WebSocket, retryAttempts: 0, lazy: false });
    try {
      await eventually(async () => (await graphql(url, `{ clusters { synced } }`)).body.data?.clusters[0]?.synced, "the cluster synced", 20_000);
      const ledgerNodes = new Set((sim.sim.cluster.list("pods", "payments") as any[]).filter((p) => p.metadata.labels?.app === "ledger").map((p) => p.spec.nodeName));
      const node = sim.sim.cluster.nodeNames().find((n) => !n.startsWith("control-plane") && !ledgerNodes.has(n) && (sim.sim.cluster.podsOnNode(n) as any[]).filter((p) => kindOf(p) === "ReplicaSet").length >= 3)!;
      assert.ok(node, "a worker with three pods of ReplicaSets");
      // Staggered grace periods, so the pods go one after another.
      const evictable = (sim.sim.cluster.podsOnNode(node) as any[]).filter((p) => kindOf(p) !== "DaemonSet");
      evictable.forEach((pod, k) => sim.sim.cluster.update(R.pods, `${pod.metadata.namespace}/${pod.metadata.name}`, (copy: any) => void (copy.spec.terminationGracePeriodSeconds = 30 * (k + 1))));

      const started = await graphql(url, DRAIN, { name: node, options: { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true } });
      assert.equal(started.body.errors, undefined, JSON.stringify(started.body.errors));
      const states: any[] = [];
      await new Promise<void>((resolve, reject) =>
        client.subscribe({ query: PROGRESS, variables: { id: started.body.data.drainNode.id } }, { next: (v: any) => states.push(v.data.drainProgress), error: reject, complete: resolve }),
      );
      const last = states.at(-1);
      assert.equal(last.status, "SUCCEEDED");
      const removed = last.pods.filter((p: any) => p.action).length;
      assert.ok(removed >= 3, `${removed} pods removed`);
      for (const state of states) {
        // The counts are the pods' phases counted.
        const counted = { notStarted: 0, evicting: 0, terminating: 0, gone: 0, notRemoved: 0 };
        const field: Record<string, keyof typeof counted> = { NOT_STARTED: "notStarted", EVICTING: "evicting", TERMINATING: "terminating", GONE: "gone", NOT_REMOVED: "notRemoved" };
        for (const pod of state.pods) counted[field[pod.phase]!]++;
        assert.deepEqual(state.podsByPhase, counted);
      }
      // Every removed pod moved forward only, and was seen terminating before it was gone.
      for (const pod of last.pods.filter((p: any) => p.action)) {
        const seen = states.map((s) => s.pods.find((p: any) => p.name === pod.name)?.phase).filter(Boolean);
        const ranks = seen.map((phase: string) => ORDER.indexOf(phase));
        assert.deepEqual(ranks, [...ranks].sort((a, b) => a - b), `${pod.name}: ${seen.join(" → ")}`);
        assert.ok(seen.includes("TERMINATING"), `${pod.name}: ${seen.join(" → ")}`);
        assert.equal(seen.at(-1), "GONE");
      }
      // Pod by pod: the number gone took more than one step, and the bar moved while none was gone yet.
      const gone = [...new Set(states.map((s) => s.podsByPhase.gone))];
      assert.ok(gone.length >= 3, `gone counts seen: ${gone.join(", ")}`);
      assert.ok(states.some((s) => s.podsByPhase.gone === 0 && s.podsByPhase.terminating > 0), "terminating before any is gone");
      assert.ok(states.some((s) => s.podsByPhase.gone > 0 && s.podsByPhase.gone < removed && s.progressPercent > 0 && s.progressPercent < 100), "half-way");
      console.log(`# gone counts seen: ${gone.join(", ")} of ${removed}, ${states.length} states`);
    } finally {
      await client.dispose();
      await app.stop();
      await sim.stop();
    }
  });
});
