import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import type { Database } from "../../src/db/database.js";
import { graphql, startTestApp } from "../support/app.js";
import { BACKENDS, type TestDatabase } from "../support/databases.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const MINUTE = 60_000;

const REPORT = `query ($from: DateTime!, $to: DateTime!) {
  availabilityReport(cluster: "sim", from: $from, to: $to, groupBy: [{ by: CLUSTER }], flapThresholdSeconds: 600) {
    from to groupBy
    nodes { node deleted observedSeconds unobservedSeconds readySeconds notReadySeconds unknownSeconds availability outages longestOutageSeconds mttrSeconds flaps maintenanceSeconds }
    groups { key { dimension value } nodeCount }
    total { nodeCount observedSeconds outages longestOutageSeconds mttrSeconds flaps maintenanceSeconds }
  }
}`;

// End to end: the simulator changes nodes, the real recorder writes history, the report reads it
// back over GraphQL. The simulator's clock starts two hours ago (a whole second) and is moved by
// hand, so condition transitions land at known times; a deletion and a cordon are stamped by
// the recorder when it sees them, and those times are read back from the history.
for (const backend of BACKENDS) {
  describe(`availability of a simulated cluster recorded on ${backend.name}`, () => {
    const simStart = Math.floor((Date.now() - 2 * 60 * MINUTE) / 1000) * 1000;
    let cluster: SimWithKubeconfig;
    let fresh: TestDatabase;
    let db: Database;
    let app: App;
    let url: string;

    before(async () => {
      cluster = await startSimWithKubeconfig({ nodes: 3, seed: 8, clockSpeed: 0, startTime: simStart });
      fresh = await backend.create();
      db = await fresh.open();
      ({ app, url } = await startTestApp(
        { clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] }, database: fresh.config },
        { ...(backend.name === "pglite" ? { database: db } : {}), recorderTuning: { leaseDurationMs: 1_500, retryPeriodMs: 200 } },
      ));
      await eventually(async () => (await db.prisma.conditionTransition.count({ where: { type: "Ready" } })) === 3, "the nodes recorded", 15_000);
    });
    after(async () => {
      await app?.stop();
      await db?.close();
      await fresh?.drop();
      await cluster?.stop();
    });

    test("an outage, a deleted node and a cordoned node, figure by figure", async () => {
      const sim = cluster.sim.cluster;
      const [flapping, removed, cordoned] = sim.nodeNames() as [string, string, string];
      const recorded = (node: string, to: string) => eventually(() => db.prisma.conditionTransition.findFirst({ where: { node, type: "Ready", to } }), `${node} Ready=${to} recorded`, 10_000);

      // NotReady at +10 min, Unknown at +12, Ready again at +15: one outage of 300 s.
      sim.advance(10 * MINUTE);
      sim.setNodeCondition(flapping, "Ready", "False");
      await recorded(flapping, "False");
      sim.advance(2 * MINUTE);
      sim.setNodeCondition(flapping, "Ready", "Unknown");
      await recorded(flapping, "Unknown");
      sim.advance(3 * MINUTE);
      sim.setNodeCondition(flapping, "Ready", "True");
      await eventually(async () => (await db.prisma.conditionTransition.count({ where: { node: flapping, type: "Ready", to: "True" } })) === 2, "recovery recorded", 10_000);

      assert.ok(sim.removeNode(removed));
      const deletion = await eventually(() => db.prisma.nodeChange.findFirst({ where: { node: removed, field: "DELETED" } }), "deletion recorded", 10_000);
      sim.update("nodes", cordoned, (copy: any) => void (copy.spec.unschedulable = true));
      const cordon = await eventually(() => db.prisma.maintenanceEvent.findFirst({ where: { node: cordoned, kind: "CORDONED" } }), "cordon recorded", 10_000);

      const from = simStart;
      const to = Date.now();
      // The simulator's clock is moved by hand and runs behind the real one, so what it stamps
      // lies before this service started recording: a stretch of coverage stands for a replica
      // that recorded the cluster all along (availability-observed.test.ts has the real one's).
      await db.prisma.recordingCoverage.create({ data: { cluster: "sim", startedAt: new Date(from), endedAt: new Date(to) } });
      const { body } = await graphql(url, REPORT, { from: new Date(from).toISOString(), to: new Date(to).toISOString() });
      assert.equal(body.errors, undefined, JSON.stringify(body.errors));
      const report = body.data.availabilityReport;
      assert.deepEqual([report.from, report.to, report.groupBy], [new Date(from).toISOString(), new Date(to).toISOString(), ["CLUSTER"]]);

      const period = to - from;
      const lived = deletion!.at.getTime() - from;
      const quiet = {
        unobservedSeconds: 0,
        notReadySeconds: 0,
        unknownSeconds: 0,
        availability: 1,
        outages: 0,
        longestOutageSeconds: 0,
        mttrSeconds: null,
        flaps: 0,
        maintenanceSeconds: 0,
        deleted: false,
      };
      const expected = new Map<string, object>([
        [
          flapping,
          {
            node: flapping,
            deleted: false,
            observedSeconds: period / 1000,
            unobservedSeconds: 0,
            readySeconds: (period - 5 * MINUTE) / 1000,
            notReadySeconds: 120,
            unknownSeconds: 180,
            availability: Math.round(((period - 5 * MINUTE) / period) * 1e6) / 1e6,
            outages: 1,
            longestOutageSeconds: 300,
            mttrSeconds: 300,
            flaps: 1,
            maintenanceSeconds: 0,
          },
        ],
        [removed, { ...quiet, node: removed, deleted: true, observedSeconds: lived / 1000, readySeconds: lived / 1000 }],
        [cordoned, { ...quiet, node: cordoned, observedSeconds: period / 1000, readySeconds: period / 1000, maintenanceSeconds: (to - cordon!.at.getTime()) / 1000 }],
      ]);
      assert.equal(report.nodes.length, 3);
      for (const node of report.nodes) assert.deepEqual(node, expected.get(node.node), node.node);

      assert.deepEqual(report.groups, [{ key: [{ dimension: "CLUSTER", value: "sim" }], nodeCount: 3 }]);
      assert.deepEqual(report.total, {
        nodeCount: 3,
        observedSeconds: (2 * period + lived) / 1000,
        outages: 1,
        longestOutageSeconds: 300,
        mttrSeconds: 300,
        flaps: 1,
        maintenanceSeconds: (to - cordon!.at.getTime()) / 1000,
      });
    });

    test("bad arguments come back as BAD_USER_INPUT on the field", async () => {
      const { body } = await graphql(url, REPORT.replace("flapThresholdSeconds: 600", "flapThresholdSeconds: -1"), {
        from: new Date(simStart).toISOString(),
        to: new Date(simStart + MINUTE).toISOString(),
      });
      assert.equal(body.data, null);
      assert.deepEqual(
        body.errors!.map((e: any) => [e.extensions.code, e.message, e.path]),
        [["BAD_USER_INPUT", "flapThresholdSeconds must be a whole number of seconds, 0 or more, got -1", ["availabilityReport"]]],
      );
    });
  });
}
