import assert from "node:assert/strict";
import { describe, test } from "node:test";
import pg from "pg";
import { R } from "../../src/sim/index.js";
import { graphql, startTestApp } from "../support/app.js";
import { BACKENDS, setDatabaseDown } from "../support/databases.js";
import { eventually, startSimWithKubeconfig } from "../support/sim-cluster.js";

const postgres = BACKENDS.find((b) => b.name === "postgres")!;

describe("a reconcile that meets a database outage", () => {
  test("is retried once the database is back, and history goes on being recorded", async () => {
    // A watch history of 5 events: cut the watch, change more than that, and the cache relists.
    const sim = await startSimWithKubeconfig({ nodes: 3, seed: 42, clockSpeed: 0, historySize: 5 });
    const fresh = await postgres.create();
    const database = new URL((fresh.config as { url: string }).url).pathname.slice(1);
    const { app, url, logs } = await startTestApp(
      { clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] }, database: fresh.config },
      { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200 } },
    );
    // The whole state again, by watch-list (the simulator speaks it) or by LIST: the reflector says which.
    const lists = () => logs.lines.filter((l) => l.resource === "nodes" && (l.msg === "listed" || l.msg === "streamed the initial state (watch-list)")).length;
    const readyTransitions = async (node: string) => {
      const client = new pg.Client({ connectionString: (fresh.config as { url: string }).url });
      await client.connect();
      try {
        return (await client.query(`SELECT "to" FROM condition_transition WHERE node = $1 AND type = 'Ready' AND "from" IS NOT NULL`, [node])).rows.length;
      } finally {
        await client.end();
      }
    };
    try {
      await eventually(async () => (await graphql(url, "{ service { history { leaderOf } } }")).body.data?.service.history.leaderOf.includes("sim"), "leading", 20_000);
      await eventually(async () => (await graphql(url, "{ service { history { pendingWrites } } }")).body.data?.service.history.pendingWrites === 0, "initial history written", 20_000);
      const names = sim.sim.cluster.nodeNames();
      await setDatabaseDown(database, true);
      const listsBefore = lists();
      sim.sim.dropConnections();
      for (let i = 0; i < 12; i++) sim.sim.cluster.update(R.nodes, names[i % names.length]!, (copy: any) => void (copy.metadata.labels["outage"] = String(i)));
      await eventually(() => lists() > listsBefore, "the nodes relisted (a reconcile is due)", 10_000);
      await setDatabaseDown(database, false);
      sim.sim.cluster.setNodeCondition(names[0]!, "Ready", "False");
      await eventually(async () => (await readyTransitions(names[0]!)) === 1, "a transition after the outage is recorded", 20_000);
      const history = async () => (await graphql(url, "{ service { history { databaseWritable pendingWrites } } }")).body.data.service.history;
      await eventually(async () => (await history()).pendingWrites === 0, "nothing left to write", 20_000);
      assert.deepEqual(await history(), { databaseWritable: true, pendingWrites: 0 });
    } finally {
      await setDatabaseDown(database, false);
      await app.stop();
      await sim.stop();
      await fresh.drop();
    }
  });
});
