import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { cacheCaughtUp, graphql, startTestApp } from "../support/app.js";
import pg from "pg";
import { BACKENDS, setDatabaseDown as setDown } from "../support/databases.js";
import { eventually, startSimWithKubeconfig } from "../support/sim-cluster.js";

// An outage of the database alone: its server keeps running for the rest of the suite, but this
// database refuses connections and loses the ones it had. (PGlite, embedded in the process,
// cannot be down while the process is up.)
const postgres = BACKENDS.find((b) => b.name === "postgres")!;

const historyStatus = async (url: string) => (await graphql(url, "{ service { history { pendingWrites droppedWrites databaseWritable } } }")).body.data?.service.history;

for (const [what, bufferSize, flaps] of [
  ["a database outage the buffer covers loses no transition", 1_000, 6],
  ["an outage longer than the buffer: the oldest observations are dropped, counted, and the reconcile records the final state", 2, 5],
] as const) {
  describe("history across a database outage", () => {
    test(what, async () => {
      const cluster = await startSimWithKubeconfig({ nodes: 2, seed: 41, clockSpeed: 0 });
      const fresh = await postgres.create();
      const name = new URL((fresh.config as { url: string }).url).pathname.slice(1);
      const { app, url, probes } = await startTestApp(
        { clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] }, database: fresh.config },
        { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200, bufferSize } },
      );
      const client = () => new pg.Client({ connectionString: (fresh.config as { url: string }).url });
      const node = cluster.sim.cluster.nodeNames()[0]!;
      const readyRows = async () => {
        const c = client();
        await c.connect();
        try {
          return (await c.query(`SELECT "from", "to", reconciled FROM condition_transition WHERE node = $1 AND type = 'Ready' AND "from" IS NOT NULL ORDER BY at, id`, [node])).rows;
        } finally {
          await c.end();
        }
      };
      try {
        await eventually(async () => (await graphql(url, "{ service { history { leaderOf } } }")).body.data?.service.history.leaderOf.length === 1, "leading", 10_000);
        await eventually(async () => (await historyStatus(url))?.pendingWrites === 0, "initial history written", 10_000);

        await setDown(name, true);
        for (let i = 0; i < flaps; i++) {
          cluster.sim.cluster.advance(10_000);
          cluster.sim.cluster.setNodeCondition(node, "Ready", i % 2 === 0 ? "False" : "True");
          // Each flap reaches the service before the next: one observation each, buffered.
          await cacheCaughtUp(probes, cluster);
        }
        if (bufferSize < flaps) {
          // Later changes of another node push every observation of the first out of the buffer.
          const other = cluster.sim.cluster.nodeNames()[1]!;
          for (let i = 0; i < bufferSize; i++) {
            cluster.sim.cluster.update("nodes", other, (copy: any) => void (copy.metadata.labels["outage-test"] = String(i)));
            await cacheCaughtUp(probes, cluster);
          }
        }
        const during = await eventually(
          async () => {
            const s = await historyStatus(url);
            return s && !s.databaseWritable ? s : undefined;
          },
          "the recorder notices",
          10_000,
        );
        assert.ok(during.pendingWrites >= 1);
        const ready = await fetch(`${url}/readyz`);
        assert.equal(ready.status, 503, "/readyz reports the database down");

        await setDown(name, false);
        await eventually(
          async () => {
            const s = await historyStatus(url);
            return s?.databaseWritable && s.pendingWrites === 0;
          },
          "the buffer is written",
          15_000,
        );

        const rows = await eventually(
          async () => {
            const r = await readyRows();
            return bufferSize >= flaps ? (r.length === flaps ? r : undefined) : r.some((x) => x.reconciled) ? r : undefined;
          },
          "rows after recovery",
          15_000,
        );
        const final = flaps % 2 === 0 ? "True" : "False";
        if (bufferSize >= flaps) {
          assert.equal(rows.length, flaps, "every transition of the outage");
          assert.ok(rows.every((r) => !r.reconciled));
        } else {
          const status = await historyStatus(url);
          assert.equal(status.droppedWrites, flaps, "every observation of the flapping node was dropped");
          assert.equal(rows.at(-1)!.to, final, "the reconcile records where the node ended up");
          assert.equal(rows.at(-1)!.reconciled, true);
        }
        assert.equal(rows.at(-1)!.to, final);
        assert.equal((await fetch(`${url}/readyz`)).status, 200);
      } finally {
        await setDown(name, false).catch(() => {});
        await app.stop();
        await cluster.stop();
        await fresh.drop();
      }
    });
  });
}
