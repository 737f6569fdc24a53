import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { R, startSimulator } from "../../src/sim/index.js";
import { graphql } from "../support/app.js";
import { startProgram } from "../support/program.js";
import { eventually } from "../support/sim-cluster.js";

const STATE = `{ clusters { connected synced } nodes(first: 1000) { edges { node { name } } } }`;

describe("a cluster that comes back as another at the same address", () => {
  test("restarted with another seed (its resourceVersions start again): exactly the new nodes, the old ones recorded deleted, and said so", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ni-reset-"));
    const kubeconfig = join(dir, "config");
    const options = { clockSpeed: 1, bookmarkIntervalMs: 1_000 };
    let sim = await startSimulator({ ...options, nodes: 8, seed: 81 });
    const port = new URL(sim.url).port;
    await sim.writeKubeconfig(kubeconfig);
    // The first cluster has lived longer: its resourceVersions are far above the second's.
    for (let i = 0; i < 300; i++) sim.cluster.update(R.nodes, sim.cluster.nodeNames()[i % 8]!, (copy: any) => void (copy.metadata.labels.churn = String(i)));
    const before = new Set(sim.cluster.nodeNames());
    const program = await startProgram(["--port", "0", "--kubeconfig", kubeconfig, "--data-dir", "memory", "--lease-duration", "2"]);
    try {
      const state = async () => (await graphql(program.url, STATE)).body.data;
      const names = (data: any) => new Set<string>(data.nodes.edges.map((e: any) => e.node.name));
      await eventually(async () => (await fetch(`${program.url}/readyz`)).status === 200, "ready", 20_000);
      await eventually(async () => {
        const h = (await graphql(program.url, "{ service { history { leaderOf pendingWrites recordedChanges } } }")).body.data.service.history;
        return h.leaderOf.length === 1 && h.pendingWrites === 0 && h.recordedChanges >= 8;
      }, "history recorded the first cluster's nodes", 20_000);
      assert.deepEqual(names(await state()), before);

      await sim.stop();
      await eventually(async () => !(await state()).clusters[0].connected, "the cluster is seen gone", 20_000);
      sim = await startSimulator({ ...options, nodes: 5, seed: 82, port: Number(port) });
      const after = new Set(sim.cluster.nodeNames());
      // Every answer from here on: the cluster said connected and synced while showing nodes it no longer has.
      let ghostsWhileSynced = 0;
      const settled = await eventually(async () => {
        const data = await state();
        const shown = names(data);
        const ghosts = [...shown].filter((name) => !after.has(name)).length;
        if (data.clusters[0].connected && data.clusters[0].synced && ghosts > 0) ghostsWhileSynced++;
        return ghosts === 0 && shown.size === after.size && data.clusters[0].synced ? data : undefined;
      }, "exactly the new cluster's nodes", 30_000);
      assert.deepEqual(names(settled), after);
      assert.equal(ghostsWhileSynced, 0);
      const [said] = (await graphql(program.url, "{ clusters { resets lastResetAt } }")).body.data.clusters;
      assert.equal(said.resets, 1);
      assert.ok(said.lastResetAt);
      await eventually(async () => (await fetch(`${program.url}/readyz`)).status === 200, "ready again", 20_000);
      assert.match(await (await fetch(`${program.url}/metrics`)).text(), /node_inventory_cluster_resets_total\{cluster="sim"\} 1/);
      assert.match(program.stdout(), /the cluster came back as another/);
      // History: every node of the first cluster that is gone is recorded deleted.
      const deleted = await eventually(async () => {
        const { body } = await graphql(program.url, `{ nodeChanges(filter: { kinds: [DELETED] }, first: 100) { edges { node { node } } } }`);
        const gone = new Set<string>(body.data.nodeChanges.edges.map((e: any) => e.node.node));
        return [...before].every((name) => after.has(name) || gone.has(name)) ? gone : undefined;
      }, "the old nodes recorded deleted", 20_000);
      assert.deepEqual([...deleted].sort(), [...before].filter((name) => !after.has(name)).sort());
      assert.equal((await graphql(program.url, "{ __typename }")).body.data.__typename, "Query");
    } finally {
      await program.terminate();
      await sim.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
