import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AppError } from "../../src/graphql/errors.js";
import { trendsPeriod, trendsResolution } from "../../src/reports/capacity-service.js";

const now = new Date("2026-06-10T12:34:56Z");
const at = (text: string) => new Date(text);

describe("trends period", () => {
  test("until defaults to now; no trendsSince, no trends", () => {
    assert.deepEqual(trendsPeriod(at("2026-06-10T10:00:00Z"), null, now), { since: at("2026-06-10T10:00:00Z"), until: now });
    assert.equal(trendsPeriod(null, null, now), null);
    assert.deepEqual(trendsPeriod(now, now, now), { since: now, until: now }, "an empty period is allowed");
  });

  const bad: [string, Date | null, Date | null, RegExp][] = [
    ["until before since", at("2026-06-10T10:00:00Z"), at("2026-06-10T09:00:00Z"), /trendsUntil \(2026-06-10T09:00:00.000Z\) is before trendsSince/],
    ["until without since", null, at("2026-06-10T09:00:00Z"), /trendsUntil needs trendsSince/],
  ];
  for (const [name, since, until, message] of bad) {
    test(`${name} is BAD_USER_INPUT`, () => {
      assert.throws(
        () => trendsPeriod(since, until, now),
        (e: unknown) => e instanceof AppError && e.extensions.code === "BAD_USER_INPUT" && message.test(e.message),
      );
    });
  }

  const cases: [string, string, string, number, { since: string; resolution: string }][] = [
    ["six hours within the raw retention: raw", "2026-06-10T06:34:56Z", "2026-06-10T12:34:56Z", 48, { since: "2026-06-10T06:34:56Z", resolution: "raw" }],
    ["longer than six hours: hourly, from the hour since falls in", "2026-06-10T06:34:55Z", "2026-06-10T12:34:56Z", 48, { since: "2026-06-10T06:00:00Z", resolution: "hourly" }],
    ["short but older than the raw retention: hourly", "2026-06-08T11:30:00Z", "2026-06-08T12:30:00Z", 48, { since: "2026-06-08T11:00:00Z", resolution: "hourly" }],
    ["short, just within a shorter raw retention: raw", "2026-06-10T11:34:56Z", "2026-06-10T12:00:00Z", 1, { since: "2026-06-10T11:34:56Z", resolution: "raw" }],
  ];
  for (const [name, since, until, rawRetentionHours, expected] of cases) {
    test(name, () => {
      const resolved = trendsResolution({ since: at(since), until: at(until) }, now, rawRetentionHours);
      assert.deepEqual(
        { since: resolved.since.toISOString(), resolution: resolved.resolution, until: resolved.until.toISOString() },
        { ...expected, since: at(expected.since).toISOString(), until: at(until).toISOString() },
      );
    });
  }
});
