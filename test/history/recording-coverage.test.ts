import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Database } from "../../src/db/database.js";
import { HistoryStore } from "../../src/history/history-store.js";
import { RecordingCoverage } from "../../src/history/recording-coverage.js";
import { createLogger } from "../../src/log/logger.js";
import { BACKENDS } from "../support/databases.js";
import { eventually } from "../support/sim-cluster.js";
import { at, migratedDatabase } from "./history-fixtures.js";

// The stretches one replica writes, on a clock moved by hand (minutes from 2026-01-01); the
// extension runs every few milliseconds of real time and stamps the hand-moved clock.
for (const backend of BACKENDS) {
  describe(`recording coverage on ${backend.name}`, () => {
    let db: Database;
    let dispose: () => Promise<void>;
    let minute = 0;
    const reconciles: string[] = [];
    let coverage: RecordingCoverage;
    let epoch: bigint;

    before(async () => {
      ({ db, dispose } = await migratedDatabase(backend));
      epoch = await new HistoryStore(db).claimLeadership("c", "this-replica");
      coverage = new RecordingCoverage({
        fence: (cluster) => (cluster === "c" ? epoch : undefined),
        database: db,
        logger: createLogger("silent"),
        intervalMs: 5,
        reconnectGraceMs: 30_000,
        reconcile: (cluster) => reconciles.push(cluster),
        now: () => at(minute),
      });
      coverage.start();
    });
    after(async () => {
      await coverage.stop();
      await dispose();
    });

    const stretches = async () =>
      (await db.prisma.recordingCoverage.findMany({ where: { cluster: "c" }, orderBy: { startedAt: "asc" } })).map((r) => [r.startedAt.toISOString(), r.endedAt.toISOString()]);
    const settled = (expected: string[][]) => eventually(async () => JSON.stringify(await stretches()) === JSON.stringify(expected), `stretches ${JSON.stringify(expected)}`);
    const iso = (m: number) => at(m).toISOString();

    test("a stretch opens at the reconcile, not at the lease, and is extended while connected", async () => {
      coverage.lead("c", true);
      minute = 1;
      // Opened at the reconcile's time, not the lease's (minute 0).
      coverage.reconciled("c", at(2));
      minute = 3;
      await settled([[iso(2), iso(3)]]);
      minute = 10;
      await settled([[iso(2), iso(10)]]);
    });

    test("a disconnection within the grace is a watch reconnecting; a longer one ends the stretch when it began", async () => {
      coverage.connection("c", false);
      minute = 10.25;
      await settled([[iso(2), iso(10.25)]]);
      coverage.connection("c", true);
      assert.deepEqual(reconciles, [], "no reconcile for a reconnect");
      minute = 11;
      coverage.connection("c", false);
      minute = 20;
      await settled([[iso(2), iso(11)]]);
      minute = 25;
      coverage.connection("c", true);
      assert.deepEqual(reconciles, ["c"], "what happened meanwhile is read before a stretch starts again");
      coverage.reconciled("c", at(26));
      minute = 27;
      await settled([[iso(2), iso(11)], [iso(26), iso(27)]]);
    });

    test("giving up the lease closes the stretch now", async () => {
      minute = 30;
      await coverage.release("c");
      minute = 40;
      assert.deepEqual(await stretches(), [[iso(2), iso(11)], [iso(26), iso(30)]]);
    });

    test("after a successor claims the cluster, the old term's writes are refused", async () => {
      coverage.lead("c", true);
      coverage.reconciled("c", at(41));
      minute = 42;
      await settled([[iso(2), iso(11)], [iso(26), iso(30)], [iso(41), iso(42)]]);
      await new HistoryStore(db).claimLeadership("c", "successor");
      minute = 50;
      await coverage.release("c");
      assert.deepEqual(await stretches(), [[iso(2), iso(11)], [iso(26), iso(30)], [iso(41), iso(42)]]);
    });
  });
}
