import assert from "node:assert/strict";
import { describe, test } from "node:test";
import pg from "pg";
import { graphql, startTestApp } from "../support/app.js";
import { finished, readyUrl, spawnCli } from "../support/cli.js";
import { BACKENDS } from "../support/databases.js";
import { eventually, historyLeaseHolder, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

// Several replicas share one database: that is PostgreSQL (PGlite is embedded in one process).
const postgres = BACKENDS.find((b) => b.name === "postgres")!;

const leaseHolder = historyLeaseHolder;
/** The installation's history Lease as the apiserver holds it. */
const historyLease = (cluster: SimWithKubeconfig) => {
  const leases = (cluster.sim.cluster.list("coordination.k8s.io/leases", "kube-system") as any[]).filter((lease) => lease.metadata.name.startsWith("node-inventory-history-"));
  assert.equal(leases.length, 1, "one installation's history Lease");
  return leases[0].spec as { holderIdentity: string; leaseDurationSeconds: number; acquireTime: string; renewTime: string; leaseTransitions?: number };
};

describe("two replicas on one PostgreSQL", () => {
  test("each transition is recorded once, and a killed leader is replaced once its Lease has expired", async () => {
    const cluster = await startSimWithKubeconfig({ nodes: 3, seed: 31, clockSpeed: 0 });
    const fresh = await postgres.create();
    const url = (fresh.config as { url: string }).url;
    // Replica A: a real process, so that it can really be killed.
    const a = spawnCli(["serve", "--port", "0", "--kubeconfig", cluster.kubeconfigPath, "--lease-duration", "2"], { DATABASE_URL: url, HOME: "/nonexistent" });
    const aExit = finished(a, 120_000);
    await readyUrl(a);
    await eventually(() => leaseHolder(cluster)?.includes(`-${a.pid}-`), "replica A leads", 10_000);

    // Replica B: in this process, standing by.
    const b = await startTestApp(
      { clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] }, database: fresh.config },
      { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200, identity: "replica-b" } },
    );
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const readyRows = async (node: string) =>
      (await client.query(`SELECT "from", "to", reconciled FROM condition_transition WHERE node = $1 AND type = 'Ready' AND "from" IS NOT NULL ORDER BY at, id`, [node])).rows;
    try {
      const status = async () => (await graphql(b.url, "{ service { history { leaderOf } } }")).body.data.service.history;
      assert.deepEqual((await status()).leaderOf, [], "B stands by while A leads");

      const node = cluster.sim.cluster.nodeNames()[0]!;
      const flap = (i: number) => {
        cluster.sim.cluster.advance(10_000);
        cluster.sim.cluster.setNodeCondition(node, "Ready", i % 2 === 0 ? "False" : "True");
      };
      for (let i = 0; i < 4; i++) {
        flap(i);
        // Each flap recorded before the next: four transitions as they happen, not a reconcile.
        await eventually(async () => (await readyRows(node)).length === i + 1, `A recorded transition ${i + 1}`, 10_000);
      }

      a.kill("SIGKILL");
      await aExit;
      const held = historyLease(cluster);
      // While nobody leads, the node flaps again; the new leader's reconcile must catch it.
      flap(4);
      await eventually(async () => (await status()).leaderOf.includes("sim"), "B takes over", 10_000);
      // The hand-over as the Lease records it: B holds it, one transition more, and B took it
      // only after A's last renewal had run out (no replica steals a live Lease).
      const taken = historyLease(cluster);
      assert.equal(taken.holderIdentity, "replica-b");
      assert.equal(taken.leaseTransitions ?? 0, (held.leaseTransitions ?? 0) + 1);
      assert.ok(
        Date.parse(taken.acquireTime) >= Date.parse(held.renewTime) + held.leaseDurationSeconds * 1000,
        `B acquired at ${taken.acquireTime}, A last renewed at ${held.renewTime} for ${held.leaseDurationSeconds} s`,
      );
      await eventually(async () => (await readyRows(node)).length === 5, "the flap during the handover is recorded", 10_000);
      flap(5);
      await eventually(async () => (await readyRows(node)).length === 6, "B records live", 10_000);
      // B has written all it was given: a duplicate would be in the table by now.
      await eventually(async () => (await graphql(b.url, "{ service { history { pendingWrites } } }")).body.data.service.history.pendingWrites === 0, "B's queue written", 10_000);

      const rows = await readyRows(node);
      assert.deepEqual(
        rows.map((r) => `${r.from}->${r.to}`),
        ["True->False", "False->True", "True->False", "False->True", "True->False", "False->True"],
      );
      assert.deepEqual(
        rows.map((r) => r.reconciled),
        [false, false, false, false, true, false],
      );
      const { rows: duplicates } = await client.query(`SELECT count(*)::int AS n FROM condition_transition GROUP BY cluster, node, type, at, "to" HAVING count(*) > 1`);
      assert.deepEqual(duplicates, []);
    } finally {
      await client.end();
      await b.app.stop();
      await cluster.stop();
      await fresh.drop();
    }
  });
});
