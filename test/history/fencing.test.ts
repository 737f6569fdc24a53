import assert from "node:assert/strict";
import { describe, test } from "node:test";
import pg from "pg";
import { graphql } from "../support/app.js";
import { BACKENDS, setDatabaseDown } from "../support/databases.js";
import { startProgram, type RunningProgram } from "../support/program.js";
import { eventually, historyLeaseHolder, startSimWithKubeconfig } from "../support/sim-cluster.js";

const postgres = BACKENDS.find((b) => b.name === "postgres")!;

const STATUS = "{ service { history { leaderOf pendingWrites recordedTransitions recordedChanges recordedMaintenanceEvents } } }";

async function history(program: RunningProgram) {
  return (await graphql(program.url, STATUS)).body.data.service.history as {
    leaderOf: string[];
    pendingWrites: number;
    recordedTransitions: number;
    recordedChanges: number;
    recordedMaintenanceEvents: number;
  };
}

const rowsWritten = (h: Awaited<ReturnType<typeof history>>) => h.recordedTransitions + h.recordedChanges + h.recordedMaintenanceEvents;

describe("a history leader frozen past its Lease", () => {
  test("writes nothing once another replica took over, and no chain breaks", async () => {
    const cluster = await startSimWithKubeconfig({ nodes: 6, seed: 41, clockSpeed: 0 });
    const fresh = await postgres.create();
    const url = (fresh.config as { url: string }).url;
    const args = ["--port", "0", "--kubeconfig", cluster.kubeconfigPath, "--lease-duration", "2"];
    const a = await startProgram(args, { DATABASE_URL: url });
    const client = new pg.Client({ connectionString: url });
    let b: RunningProgram | undefined;
    let frozen = false;
    try {
      await eventually(() => historyLeaseHolder(cluster)?.includes(`-${a.child.pid}-`), "replica A leads", 10_000);
      b = await startProgram(args, { DATABASE_URL: url });
      const standby = b;
      const nodes = cluster.sim.cluster.nodeNames();
      let round = 0;
      // Every node's Ready flips (with the kubelet's taints): condition transitions and taint changes.
      const flapAll = () => {
        round++;
        cluster.sim.cluster.advance(10_000);
        for (const node of nodes) cluster.sim.cluster.setNodeCondition(node, "Ready", round % 2 ? "False" : "True");
      };
      flapAll();
      await eventually(async () => (await history(a)).recordedTransitions >= nodes.length && (await history(a)).pendingWrites === 0, "A recorded the first flap", 10_000);
      const beforeFreeze = rowsWritten(await history(a));

      // A sees the next flap while its writes fail, and is frozen with it still queued.
      const database = new URL(url).pathname.slice(1);
      await setDatabaseDown(database, true);
      flapAll();
      await eventually(async () => (await history(a)).pendingWrites >= nodes.length, "A holds the flap in its queue", 10_000);
      a.child.kill("SIGSTOP");
      frozen = true;
      await setDatabaseDown(database, false);
      await client.connect();
      await eventually(async () => (await history(standby)).leaderOf.includes("sim"), "B takes over while A is frozen", 15_000);
      const readyTransitions = async () => (await client.query(`SELECT count(*)::int AS n FROM condition_transition WHERE type = 'Ready' AND "from" IS NOT NULL`)).rows[0].n as number;
      await eventually(async () => (await readyTransitions()) >= nodes.length * 2, "B's reconcile recorded the flap A holds", 15_000);
      // B records three more flaps: A's queued observation is now older than what is recorded.
      for (let i = 0; i < 3; i++) {
        flapAll();
        await eventually(async () => (await readyTransitions()) >= nodes.length * round, `B recorded flap ${round}`, 15_000);
      }

      a.child.kill("SIGCONT");
      frozen = false;
      await eventually(
        async () => {
          const h = await history(a);
          return h.leaderOf.length === 0 && h.pendingWrites === 0 && historyLeaseHolder(cluster)?.includes(`-${standby.child.pid}-`);
        },
        "A woke, stood by and has nothing left to write",
        15_000,
      );
      // B goes on recording after A woke: the chains end with B's rows.
      flapAll();
      await eventually(async () => (await readyTransitions()) >= nodes.length * round, "B records after A woke", 15_000);

      const { rows: transitionBreaks } = await client.query(`
        SELECT node, type, "from", previous FROM (
          SELECT node, type, "from", lag("to") OVER (PARTITION BY cluster, node, type ORDER BY at, id) AS previous FROM condition_transition
        ) t WHERE previous IS NOT NULL AND "from" IS DISTINCT FROM previous`);
      const { rows: taintBreaks } = await client.query(`
        SELECT node, item, before, previous FROM (
          SELECT node, item, before, lag(after) OVER (PARTITION BY cluster, node, item ORDER BY at, id) AS previous FROM node_change WHERE field = 'TAINTS'
        ) t WHERE previous IS NOT NULL AND before IS DISTINCT FROM previous`);
      const written = rowsWritten(await history(a)) - beforeFreeze;
      assert.deepEqual({ rowsWrittenByTheStaleLeader: written, transitionBreaks, taintBreaks }, { rowsWrittenByTheStaleLeader: 0, transitionBreaks: [], taintBreaks: [] });
      // The flaps are all there, each once: B wrote them.
      const { rows } = await client.query(`SELECT node, count(*)::int AS n FROM condition_transition WHERE type = 'Ready' AND "from" IS NOT NULL GROUP BY node ORDER BY node`);
      assert.deepEqual(
        rows,
        [...nodes].sort().map((node) => ({ node, n: 6 })),
      );
    } finally {
      if (frozen) a.child.kill("SIGCONT");
      await client.end().catch(() => {});
      await Promise.all([a.terminate(), b?.terminate()]);
      await cluster.stop();
      await fresh.drop();
    }
  });
});
