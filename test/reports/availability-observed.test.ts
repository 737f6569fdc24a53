import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import type { Database } from "../../src/db/database.js";
import { graphql, startTestApp } from "../support/app.js";
import { BACKENDS, type TestDatabase } from "../support/databases.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const DAY = 86_400_000;

const REPORT = `query ($from: DateTime!, $to: DateTime!) {
  availabilityReport(cluster: "sim", from: $from, to: $to) {
    nodes { node observedSeconds unobservedSeconds readySeconds availability outages maintenanceSeconds }
    total { nodeCount observedSeconds unobservedSeconds readySeconds maintenanceSeconds }
  }
}`;

// A fresh installation: the simulated nodes were created (and one cordoned) two days before
// the service first watched them. A 30-day report counts only what it recorded since; the
// rest is unobserved, not available, and the cordon is maintenance only since it was seen.
for (const backend of BACKENDS) {
  describe(`availability of a fresh installation on ${backend.name}`, () => {
    let cluster: SimWithKubeconfig;
    let fresh: TestDatabase;
    let db: Database;
    let app: App;
    let url: string;
    let cordoned: string;

    before(async () => {
      cluster = await startSimWithKubeconfig({ nodes: 3, seed: 11, clockSpeed: 0, startTime: Math.floor((Date.now() - 2 * DAY) / 1000) * 1000 });
      cordoned = cluster.sim.cluster.nodeNames()[0]!;
      cluster.sim.cluster.update("nodes", cordoned, (copy: any) => void (copy.spec.unschedulable = true));
      fresh = await backend.create();
      db = await fresh.open();
      ({ app, url } = await startTestApp(
        { clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] }, database: fresh.config },
        { ...(backend.name === "pglite" ? { database: db } : {}), recorderTuning: { leaseDurationMs: 1_500, retryPeriodMs: 200, coverageIntervalMs: 100 } },
      ));
    });
    after(async () => {
      await app?.stop();
      await db?.close();
      await fresh?.drop();
      await cluster?.stop();
    });

    test("30 days of a fresh installation: what it observed, the rest unobserved; a node first seen cordoned is in maintenance only since", async () => {
      // The recorder's stretch, once it has been extended past its start.
      const stretch = await eventually(async () => {
        const rows = await db.prisma.recordingCoverage.findMany({ where: { cluster: "sim" } });
        return rows.length === 1 && rows[0]!.endedAt.getTime() > rows[0]!.startedAt.getTime() + 200 ? rows[0] : undefined;
      }, "the recording's coverage extended", 15_000);
      const to = stretch!.endedAt.getTime();
      const from = to - 30 * DAY;
      const observedMs = to - stretch!.startedAt.getTime();
      const observed = observedMs / 1000;
      const { body } = await graphql(url, REPORT, { from: new Date(from).toISOString(), to: new Date(to).toISOString() });
      assert.equal(body.errors, undefined, JSON.stringify(body.errors));
      const report = body.data.availabilityReport;
      const names = cluster.sim.cluster.nodeNames().sort();
      assert.deepEqual(
        report.nodes,
        names.map((node) => ({
          node,
          observedSeconds: observed,
          unobservedSeconds: (30 * DAY - observedMs) / 1000,
          readySeconds: observed,
          availability: 1,
          outages: 0,
          maintenanceSeconds: node === cordoned ? observed : 0,
        })),
      );
      assert.deepEqual(report.total, {
        nodeCount: 3,
        observedSeconds: (3 * observedMs) / 1000,
        unobservedSeconds: (3 * (30 * DAY - observedMs)) / 1000,
        readySeconds: (3 * observedMs) / 1000,
        maintenanceSeconds: observed,
      });
      assert.ok(observed < 120, `observed ${observed} s: no more than the test has run`);

      // What the first reconcile found says so, and when it was found: two days after it happened.
      const history = await graphql(url, `{ conditionTransitions(filter: { cluster: "sim", type: "Ready" }, first: 10) { edges { node { node at reconciled recordedAt } } } }`);
      assert.equal(history.body.errors, undefined, JSON.stringify(history.body.errors));
      const found = history.body.data.conditionTransitions.edges.map((e: { node: { node: string; at: string; reconciled: boolean; recordedAt: string } }) => e.node);
      assert.deepEqual(found.map((t: { node: string }) => t.node).sort(), names);
      for (const t of found) {
        assert.equal(t.reconciled, true, t.node);
        assert.ok(Date.parse(t.recordedAt) - Date.parse(t.at) > DAY, `${t.node}: happened ${t.at}, found ${t.recordedAt}`);
      }
    });

    test("the stretch is closed when the service stops, and a restart opens another", async () => {
      await app.stop();
      const [closed] = await db.prisma.recordingCoverage.findMany({ where: { cluster: "sim" } });
      const stoppedAt = Date.now();
      assert.ok(closed!.endedAt.getTime() <= stoppedAt && stoppedAt - closed!.endedAt.getTime() < 5_000, "closed at the stop");
      ({ app, url } = await startTestApp(
        { clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] }, database: fresh.config },
        { ...(backend.name === "pglite" ? { database: db } : {}), recorderTuning: { leaseDurationMs: 1_500, retryPeriodMs: 200, coverageIntervalMs: 100 } },
      ));
      const rows = await eventually(async () => {
        const all = await db.prisma.recordingCoverage.findMany({ where: { cluster: "sim" }, orderBy: { startedAt: "asc" } });
        return all.length === 2 ? all : undefined;
      }, "a second stretch", 15_000);
      assert.equal(rows![0]!.endedAt.getTime(), closed!.endedAt.getTime());
      assert.ok(rows![1]!.startedAt.getTime() >= closed!.endedAt.getTime(), "the time between is a gap");
    });
  });
}
