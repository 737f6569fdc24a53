import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { migrate } from "../../src/db/migrator.js";
import { HistoryRetention } from "../../src/history/history-retention.js";
import { createLogger } from "../../src/log/logger.js";
import { BACKENDS } from "../support/databases.js";

const logger = createLogger("silent");
const DAY = 86_400_000;

for (const backend of BACKENDS) {
  describe(`history retention on ${backend.name}`, () => {
    test("deletes exactly what is older than the retention period", async () => {
      const fresh = await backend.create();
      const db = await fresh.open();
      try {
        await db.withConnection((c) => migrate(c, logger));
        const now = Date.now();
        const old = new Date(now - 31 * DAY);
        const recent = new Date(now - 29 * DAY);
        const transition = (at: Date, to: string) => ({ cluster: "c", node: "n", type: "Ready", from: "True", to, at });
        await db.prisma.conditionTransition.createMany({ data: [transition(old, "False"), transition(recent, "True")] });
        const event = (at: Date, key: string) => ({ cluster: "c", node: "n", kind: "CORDONED", actor: "a", at, dedupeKey: key });
        await db.prisma.maintenanceEvent.createMany({ data: [event(old, "old"), event(recent, "recent")] });
        const state = (name: string, deletedAt: Date | null) => ({
          cluster: "c", name, uid: name, conditions: {}, unschedulable: false, kubeletVersion: "v1", containerRuntime: "containerd://1", labels: {}, taints: [], firstSeenAt: old, deletedAt,
        });
        await db.prisma.nodeState.createMany({ data: [state("gone-long-ago", old), state("gone-lately", recent), state("here", null)] });
        const nodeEvent = (lastSeen: Date, uid: string) => ({ cluster: "c", uid, node: "n", objectKey: `default/${uid}`, type: "Normal", reason: "NodeReady", count: 1, lastSeen });
        await db.prisma.nodeEvent.createMany({ data: [nodeEvent(old, "last-seen-long-ago"), nodeEvent(recent, "last-seen-lately")] });
        // Recording stretches: one ended before the cutoff, one that began before it and ended after.
        await db.prisma.recordingCoverage.createMany({ data: [{ cluster: "c", startedAt: new Date(now - 40 * DAY), endedAt: old }, { cluster: "c", startedAt: old, endedAt: recent }] });

        const deleted = await new HistoryRetention(db, 30, logger).prune(new Date(now - 30 * DAY));
        assert.deepEqual(deleted, { transitions: 1, changes: 0, maintenance: 1, drains: 0, nodes: 1, nodeEvents: 1, coverage: 1 });
        assert.deepEqual((await db.prisma.recordingCoverage.findMany()).map((r) => r.endedAt), [recent]);
        assert.deepEqual((await db.prisma.nodeEvent.findMany()).map((e) => e.uid), ["last-seen-lately"]);
        assert.deepEqual((await db.prisma.conditionTransition.findMany()).map((t) => t.to), ["True"]);
        assert.deepEqual((await db.prisma.maintenanceEvent.findMany()).map((e) => e.dedupeKey), ["recent"]);
        assert.deepEqual((await db.prisma.nodeState.findMany({ orderBy: { name: "asc" } })).map((s) => s.name), ["gone-lately", "here"]);
      } finally {
        await db.close();
        await fresh.drop();
      }
    });
  });
}
