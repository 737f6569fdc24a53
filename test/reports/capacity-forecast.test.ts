import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Database } from "../../src/db/database.js";
import { createLogger } from "../../src/log/logger.js";
import { fullAt, hourlyP95, theilSen } from "../../src/reports/capacity-forecast.js";
import { TrendsStore } from "../../src/reports/trends-store.js";
import { migratedDatabase } from "../history/history-fixtures.js";
import { BACKENDS } from "../support/databases.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe("the Theil–Sen forecast", () => {
  test("a known slope is found through spikes a least-squares fit would follow", () => {
    // 10 m cpu more each hour from 1000 m, with every seventh hour a spike of 5 cores.
    const points = Array.from({ length: 48 }, (_, h) => ({ at: h * HOUR, value: 1000 + 10 * h + (h % 7 === 3 ? 5000 : 0) }));
    const line = theilSen(points)!;
    assert.equal(Math.round(line.slope * HOUR * 1000) / 1000, 10);
    assert.equal(Math.round(line.intercept), 1000);
    // 3800 m allocatable is reached after (3800 - 1000) / 10 = 280 hours.
    assert.deepEqual(fullAt(points, 3800, 47 * HOUR), new Date(280 * HOUR));
  });

  test("flat or falling requests, too few hours, or a crossing beyond a year are null", () => {
    const flat = Array.from({ length: 24 }, (_, h) => ({ at: h * HOUR, value: 500 }));
    assert.equal(fullAt(flat, 1000, 23 * HOUR), null);
    const falling = flat.map((p, h) => ({ ...p, value: 900 - h }));
    assert.equal(fullAt(falling, 1000, 23 * HOUR), null);
    assert.equal(fullAt(flat.slice(0, 2).map((p, h) => ({ ...p, value: h })), 1000, HOUR), null);
    const slow = flat.map((p, h) => ({ ...p, value: 500 + h * 0.01 }));
    assert.equal(fullAt(slow, 1000, 23 * HOUR), null, "0.01 an hour reaches 1000 in 5.7 years");
  });

  test("hourly p95 is the nearest rank of each hour's points", () => {
    const points = Array.from({ length: 40 }, (_, i) => ({ at: Math.floor(i / 20) * HOUR + (i % 20) * 60_000, value: i % 20 }));
    assert.deepEqual(hourlyP95(points), [{ at: 0, value: 18 }, { at: HOUR, value: 18 }]);
  });
});

for (const backend of BACKENDS) {
  describe(`a forecast from seeded trends on ${backend.name}`, () => {
    let db: Database;
    let dispose: () => Promise<void>;
    before(async () => ({ db, dispose } = await migratedDatabase(backend)));
    after(async () => dispose?.());

    test("requests growing 50 m and 1 MiB an hour, sampled every 10 minutes for two days, reach allocatable when the slope says", async () => {
      const store = new TrendsStore(db, createLogger("silent"));
      const start = Math.floor(Date.now() / HOUR) * HOUR - 2 * DAY;
      for (let t = start; t < start + 2 * DAY; t += 10 * 60_000) {
        const hours = (t - start) / HOUR;
        await store.writeSampling("c", new Date(t), [{ node: "n1", cell: ["pool", null, null, null], labels: {}, cpuUsage: null, memoryUsage: null, cpuRequests: Math.round(1000 + 50 * hours), memoryRequests: Math.round(2 ** 30 + 2 ** 20 * hours) }]);
      }
      const until = start + 2 * DAY;
      const trends = await store.groupTrends({ kind: "nodes", clusters: ["c"], nodes: ["n1"], ids: ["g"] }, new Date(start), new Date(until), "raw");
      const series = trends.get("g")!.requestSeries;
      assert.equal(series.length, 2 * 24 * 6);
      const cpu = fullAt(hourlyP95(series.map((p) => ({ at: p.at, value: p.cpu }))), 3800, until)!;
      // Each hour's p95 of six samples is its largest (nearest rank ceil(0.95 × 6) = 6), 50 min in: 1000 + 50 (h + 5/6) = 3800 at h = 55.17.
      const expected = start + (2800 / 50 - 50 / 60) * HOUR;
      assert.ok(Math.abs(cpu.getTime() - expected) < 60_000, `${cpu.toISOString()} against ${new Date(expected).toISOString()}`);
      const memory = fullAt(hourlyP95(series.map((p) => ({ at: p.at, value: p.memory }))), 2 * 2 ** 30, until)!;
      const expectedMemory = start + (1024 - 50 / 60) * HOUR;
      assert.ok(Math.abs(memory.getTime() - expectedMemory) < 60_000, `${memory.toISOString()} against ${new Date(expectedMemory).toISOString()}`);
    });
  });
}
