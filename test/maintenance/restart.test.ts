import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, test } from "node:test";
import pg from "pg";
import { drainOptions } from "../../src/maintenance/drain-plan.js";
import { graphql, ready, startTestApp } from "../support/app.js";
import { BACKENDS, setDatabaseDown } from "../support/databases.js";
import { eventually, startSimWithKubeconfig } from "../support/sim-cluster.js";
import { OP } from "./operation-fields.js";

const TUNING = { evictionRetryMs: 300, deletionPollMs: 100, heartbeatMs: 300, staleAfterMs: 1_500 };
const GET = `query($id: ID!) { drainOperation(id: $id) { ...Op } } ${OP}`;
const postgres = BACKENDS.find((b) => b.name === "postgres")!;

describe("a service restart never leaves a drain stuck in RUNNING", () => {
  test("a replica that stops hands its drain over; the next one resumes it, keeping its progress, and finishes it", async () => {
    const db = await postgres.create();
    const sim = await startSimWithKubeconfig({ nodes: 8, seed: 7, clockSpeed: 30 });
    const config = { database: db.config, clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] } };
    const overrides = (identity: string) => ({ recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200 }, maintenanceTuning: { ...TUNING, identity } });
    const first = await startTestApp(config, overrides("replica-a"));
    let second: Awaited<ReturnType<typeof startTestApp>> | undefined;
    const sql = new pg.Client({ connectionString: (db.config as { url: string }).url });
    await sql.connect();
    try {
      const ledger = (sim.sim.cluster.list("pods", "payments") as any[]).find((p) => p.metadata.labels?.app === "ledger");
      const node = ledger.spec.nodeName;
      const r = await graphql(
        first.url,
        `mutation($n: String!) { drainNode(name: $n, options: { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true, podSelector: "app=ledger", timeoutSeconds: 120 }) { id } }`,
        { n: node },
      );
      const id = r.body.data.drainNode.id;
      const blocked = await eventually(
        async () => {
          const op = (await graphql(first.url, GET, { id })).body.data.drainOperation;
          return op.pods.find((p: any) => p.status === "BLOCKED" && p.attempts >= 2) ? op : undefined;
        },
        "the drain to be blocked",
        10_000,
      );
      const attemptsBefore = blocked.pods[0].attempts;

      await first.app.stop();
      const row = (await sql.query("SELECT status, owner FROM drain_operation WHERE id = $1", [id])).rows[0];
      assert.deepEqual(row, { status: "RUNNING", owner: null }, "released, still RUNNING, for the next replica");

      second = await startTestApp(config, overrides("replica-b"));
      await eventually(async () => (await sql.query("SELECT owner FROM drain_operation WHERE id = $1", [id])).rows[0].owner === "replica-b", "replica-b to take the drain over");
      // The budget stops refusing: the resumed drain finishes.
      await sim.kubectl("delete", "pdb", "ledger", "-n", "payments");
      const done = await eventually(
        async () => {
          const op = (await graphql(second!.url, GET, { id })).body.data.drainOperation;
          return op.status !== "RUNNING" ? op : undefined;
        },
        "the resumed drain to end",
        15_000,
      );
      assert.equal(done.status, "SUCCEEDED", done.message);
      assert.equal(done.pods[0].status, "EVICTED");
      assert.ok(done.pods[0].attempts > attemptsBefore, "attempts carried over from before the restart");
      assert.equal(sim.sim.cluster.get("pods", ledger.metadata.name, "payments"), undefined);
      const events = (await sql.query("SELECT kind FROM maintenance_event WHERE operation_id = $1 ORDER BY id", [id])).rows.map((e) => e.kind as string);
      assert.deepEqual(
        events.filter((k) => k.startsWith("DRAIN_")),
        ["DRAIN_STARTED", "DRAIN_SUCCEEDED"],
        "started once, ended once",
      );
    } finally {
      await sql.end();
      await second?.app.stop();
      await first.app.stop();
      await sim.stop();
      await db.drop();
    }
  });

  test("a drain whose replica crashed is taken over once its heartbeat is stale, or failed when its deadline passed meanwhile", async () => {
    const db = await postgres.create();
    const sim = await startSimWithKubeconfig({ nodes: 8, seed: 7, clockSpeed: 30 });
    const { app, url } = await startTestApp(
      { database: db.config, clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] } },
      { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200 }, maintenanceTuning: { ...TUNING, identity: "survivor" } },
    );
    const sql = new pg.Client({ connectionString: (db.config as { url: string }).url });
    await sql.connect();
    try {
      // The drain selects an app no PodDisruptionBudget guards, so the resumed drain can finish.
      const guarded = new Set((sim.sim.cluster.list("policy/poddisruptionbudgets") as any[]).map((b) => b.spec.selector.matchLabels?.app));
      const workers = sim.sim.cluster.nodeNames().filter((n) => !n.startsWith("control-plane"));
      const target = (sim.sim.cluster.podsOnNode(workers[0]!) as any[]).find((p) => p.metadata.ownerReferences?.[0]?.kind === "ReplicaSet" && !guarded.has(p.metadata.labels?.app));
      assert.ok(target, "an unguarded ReplicaSet pod");
      const options = JSON.stringify(drainOptions({ ignoreDaemonSets: true, deleteEmptyDirData: true, force: true, timeoutSeconds: 60, podSelector: `app=${target.metadata.labels.app}` }));
      // What a replica killed mid-drain leaves behind: RUNNING, owned, heartbeat long ago.
      const crashed = randomUUID();
      const expired = randomUUID();
      await sql.query(
        `INSERT INTO drain_operation (id, cluster, node, status, dry_run, requested_by, options, pods, owner, heartbeat_at, started_at, updated_at)
         VALUES ($1, 'sim', $2, 'RUNNING', false, 'alice', $4, '[]', 'dead-replica', now() - interval '1 hour', now(), now()),
                ($3, 'sim', $5, 'RUNNING', false, 'bob', $4, '[]', 'dead-replica', now() - interval '1 hour', now() - interval '2 hours', now())`,
        [crashed, workers[0], expired, options, workers[1]],
      );
      const resumed = await eventually(
        async () => {
          const op = (await graphql(url, GET, { id: crashed })).body.data.drainOperation;
          return op.status !== "RUNNING" ? op : undefined;
        },
        "the orphaned drain to be run to its end",
        15_000,
      );
      assert.equal(resumed.status, "SUCCEEDED", resumed.message);
      assert.equal(resumed.requestedBy, "alice");
      assert.ok(resumed.pods.some((p: any) => p.status === "EVICTED"));

      const failed = (await graphql(url, GET, { id: expired })).body.data.drainOperation;
      assert.equal(failed.status, "FAILED");
      assert.match(failed.message, /global timeout reached: 60s while no replica was running the drain; the node stays cordoned/);
      const events = (await sql.query("SELECT kind, actor FROM maintenance_event WHERE operation_id = $1", [expired])).rows;
      assert.deepEqual(events, [{ kind: "DRAIN_FAILED", actor: "bob" }]);
    } finally {
      await sql.end();
      await app.stop();
      await sim.stop();
      await db.drop();
    }
  });

  test("the database going away mid-drain loses no event: the final state and its event land once it is back", async () => {
    const db = await postgres.create();
    const name = new URL((db.config as { url: string }).url).pathname.slice(1);
    const sim = await startSimWithKubeconfig({ nodes: 6, seed: 7, clockSpeed: 30 });
    const { app, url, probes } = await startTestApp(
      { database: db.config, clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] } },
      { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200 }, maintenanceTuning: { ...TUNING, staleAfterMs: 60_000 } },
    );
    try {
      const node = (sim.sim.cluster.list("pods", "payments") as any[]).find((p) => p.metadata.labels?.app === "ledger").spec.nodeName;
      await ready(url);
      const r = await graphql(
        url,
        `mutation($n: String!) { drainNode(name: $n, options: { ignoreDaemonSets: true, force: true, deleteEmptyDirData: true, podSelector: "app=ledger", timeoutSeconds: 3 }) { id } }`,
        { n: node },
      );
      assert.ok(r.body.data?.drainNode, JSON.stringify(r.body.errors));
      const id = r.body.data.drainNode.id;
      await eventually(async () => (await graphql(url, GET, { id })).body.data.drainOperation.pods.some((p: any) => p.status === "BLOCKED"), "the drain to be blocked");
      // Down across the drain's deadline: it ends while nothing can be written.
      await setDatabaseDown(name, true);
      // The runner reaches its deadline and fails the drain while nothing can be written.
      await eventually(() => probes.drainRunnerStatus(id) === "FAILED", "the drain to end while the database is down", 15_000);
      await setDatabaseDown(name, false);
      const sql = new pg.Client({ connectionString: (db.config as { url: string }).url });
      await sql.connect();
      try {
        const row = await eventually(
          async () => {
            const found = (await sql.query("SELECT status, message, owner FROM drain_operation WHERE id = $1", [id])).rows[0];
            return found?.status === "FAILED" ? found : undefined;
          },
          "the final state to be written",
          15_000,
        );
        assert.match(row.message, /global timeout reached: 3s/);
        assert.equal(row.owner, null);
        const kinds = await eventually(
          async () => {
            const list = (await sql.query("SELECT kind FROM maintenance_event WHERE operation_id = $1 ORDER BY id", [id])).rows.map((e) => e.kind as string);
            return list.includes("DRAIN_FAILED") ? list : undefined;
          },
          "the DRAIN_FAILED event",
          15_000,
        );
        assert.deepEqual(kinds, ["DRAIN_STARTED", "EVICTION_BLOCKED", "DRAIN_FAILED"]);
      } finally {
        await sql.end();
      }
    } finally {
      await setDatabaseDown(name, false).catch(() => {});
      await app.stop();
      await sim.stop();
      await db.drop();
    }
  });
});
