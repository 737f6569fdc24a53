import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { AppProbes } from "../../src/app/app-probes.js";
import type { App } from "../../src/app/create-app.js";
import type { Database } from "../../src/db/database.js";
import { cacheCaughtUp, graphql, startTestApp } from "../support/app.js";
import { BACKENDS, type TestDatabase } from "../support/databases.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const FAST_LEASE = { leaseDurationMs: 1_500, retryPeriodMs: 200 };

for (const backend of BACKENDS) {
  describe(`history recorder on ${backend.name}`, () => {
    let cluster: SimWithKubeconfig;
    let fresh: TestDatabase;
    let db: Database;
    let app: App | undefined;
    let probes: AppProbes;
    // PGlite lives in one process: the service and the test share one instance of it.
    const start = async (identity: string) => {
      const started = await startTestApp(
        { clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] }, database: fresh.config },
        { ...(backend.name === "pglite" ? { database: db } : {}), recorderTuning: { ...FAST_LEASE, identity } },
      );
      probes = started.probes;
      return started.app;
    };

    // Every test starts from one recording service that has recorded the cluster as first seen,
    // so each can run alone (--test-name-pattern) and none relies on another having run.
    before(async () => {
      cluster = await startSimWithKubeconfig({ nodes: 3, seed: 21, clockSpeed: 0 });
      fresh = await backend.create();
      db = await fresh.open();
      app = await start("replica-a");
      const nodes = cluster.sim.cluster.nodeNames().length;
      await eventually(async () => (await db.prisma.nodeState.count()) === nodes, "node states recorded", 10_000);
    });
    after(async () => {
      await app?.stop();
      await db.close();
      await fresh.drop();
      await cluster.stop();
    });

    const readyTransitions = (node: string, reconciled?: boolean) =>
      db.prisma.conditionTransition.findMany({
        where: { cluster: "sim", node, type: "Ready", ...(reconciled === undefined ? {} : { reconciled }) },
        orderBy: [{ at: "asc" }, { id: "asc" }],
      });
    const counts = async () => ({
      transitions: await db.prisma.conditionTransition.count(),
      changes: await db.prisma.nodeChange.count(),
      maintenance: await db.prisma.maintenanceEvent.count(),
    });
    const settled = async () => {
      // Quiet for a moment: nothing more arrives.
      let last = JSON.stringify(await counts());
      await eventually(
        async () => {
          await new Promise((r) => setTimeout(r, 300));
          const now = JSON.stringify(await counts());
          const same = now === last;
          last = now;
          return same;
        },
        "history settled",
        10_000,
      );
    };

    test("on first start every node is recorded as created, with its conditions as first seen", async () => {
      const nodes = cluster.sim.cluster.nodeNames();
      await settled();
      const created = await db.prisma.nodeChange.findMany({ where: { field: "CREATED" } });
      assert.deepEqual(created.map((c) => c.node).sort(), nodes);
      for (const node of nodes) {
        const first = await readyTransitions(node);
        assert.equal(first.length, 1);
        assert.equal(first[0]!.from, null);
        assert.equal(first[0]!.to, "True");
      }
    });

    test("a condition flapped N times gives N rows, at the condition's lastTransitionTime", async () => {
      const node = cluster.sim.cluster.nodeNames()[0]!;
      const N = 6;
      for (let i = 0; i < N; i++) {
        cluster.sim.cluster.advance(10_000);
        cluster.sim.cluster.setNodeCondition(node, "Ready", i % 2 === 0 ? "False" : "True", i % 2 === 0 ? "KubeletNotReady" : "KubeletReady");
        // Each flap seen by the service before the next: N watch events, not a relist.
        await cacheCaughtUp(probes, cluster);
      }
      const flaps = await eventually(
        async () => {
          const rows = await readyTransitions(node, false);
          return rows.length >= N ? rows : undefined;
        },
        `${N} transitions`,
        10_000,
      );
      await settled();
      assert.equal((await readyTransitions(node, false)).length, N);
      assert.deepEqual(
        flaps.map((t) => `${t.from}->${t.to}`),
        ["True->False", "False->True", "True->False", "False->True", "True->False", "False->True"],
      );
      const object = cluster.sim.cluster.get("nodes", node) as any;
      const ready = object.status.conditions.find((c: any) => c.type === "Ready");
      assert.equal(flaps.at(-1)!.at.toISOString(), new Date(ready.lastTransitionTime).toISOString());
    });

    test("an external cordon is a CORDONED maintenance event by an external actor", async () => {
      const node = cluster.sim.cluster.nodeNames()[1]!;
      cluster.sim.cluster.update("nodes", node, (copy: any) => void (copy.spec.unschedulable = true));
      const event = await eventually(() => db.prisma.maintenanceEvent.findFirst({ where: { node, kind: "CORDONED" } }), "cordon event", 10_000);
      assert.equal(event!.actor, "external");
    });

    test("restarting the service adds nothing", async () => {
      await settled();
      const before = await counts();
      await app!.stop();
      app = await start("replica-a");
      // The new recorder leads and has worked off its queue, the restart's reconcile included.
      const restarted = app;
      await eventually(
        async () => {
          const h = (await graphql(restarted.url, "{ service { history { leaderOf pendingWrites } } }")).body.data?.service.history;
          return h?.leaderOf.length === 1 && h.pendingWrites === 0;
        },
        "the new recorder to lead and catch up",
        10_000,
      );
      await settled();
      assert.deepEqual(await counts(), before);
    });

    test("a flap and a deletion while the service was stopped are recorded, as reconciled, after it starts", async () => {
      await app!.stop();
      app = undefined;
      const [node, , gone] = cluster.sim.cluster.nodeNames();
      cluster.sim.cluster.advance(10_000);
      cluster.sim.cluster.setNodeCondition(node!, "Ready", "False", "KubeletNotReady");
      assert.ok(cluster.sim.cluster.removeNode(gone!));
      app = await start("replica-a");
      const missed = await eventually(async () => (await readyTransitions(node!, true)).find((t) => t.to === "False"), "the missed transition", 10_000);
      assert.equal(missed.from, "True");
      const object = cluster.sim.cluster.get("nodes", node!) as any;
      assert.equal(missed.at.toISOString(), new Date(object.status.conditions.find((c: any) => c.type === "Ready").lastTransitionTime).toISOString());
      const deleted = await eventually(() => db.prisma.nodeChange.findFirst({ where: { node: gone!, field: "DELETED" } }), "the deletion", 10_000);
      assert.equal(deleted!.reconciled, true);
      const state = await db.prisma.nodeState.findUnique({ where: { cluster_name: { cluster: "sim", name: gone! } } });
      assert.ok(state?.deletedAt);
    });
  });
}
