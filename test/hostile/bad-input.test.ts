import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { openDatabase, type Database } from "../../src/db/database.js";
import { encodeOpaqueCursor } from "../../src/graphql/opaque-cursor.js";
import { graphql, startTestApp, type CapturedLogs } from "../support/app.js";
import { servedMeanwhile } from "./support.js";

const STRICT = { accept: "application/graphql-response+json" };
const first = (r: { body: { errors?: any[] } }) => ({ message: r.body.errors?.[0]?.message, code: r.body.errors?.[0]?.extensions?.code });
const dateError = (text: string, why: string) => ({
  message: `Variable "$t" got invalid value "${text}"; DateTime must be an RFC 3339 timestamp such as 2026-01-15T10:30:00Z; "${text}": ${why}`,
  code: "BAD_USER_INPUT",
});

describe("bad input is BAD_USER_INPUT, found before any query runs (issue 13, findings 7 and 8)", () => {
  let app: App;
  let url: string;
  before(async () => ({ app, url } = await startTestApp()));
  after(() => app.stop());

  test("year 0000 in since, from and trendsSince says the year is wrong, for each field", async () => {
    const zero = "0000-06-01T00:00:00Z";
    const why = "year 0000 does not exist (years are 0001-9999)";
    for (const query of [
      "query($t: DateTime) { conditionTransitions(filter: { since: $t }) { edges { cursor } } }",
      "query($t: DateTime) { maintenanceEvents(filter: { since: $t }) { edges { cursor } } }",
      'query($t: DateTime!) { availabilityReport(from: $t, to: "2026-01-01T00:00:00Z") { total { nodeCount } } }',
      "query($t: DateTime) { capacityReport(trendsSince: $t) { total { nodeCount } } }",
    ]) {
      const response = await graphql(url, query, { t: zero }, STRICT);
      assert.equal(response.status, 400, query);
      assert.deepEqual(first(response), dateError(zero, why), query);
    }
  });

  test("dates that do not exist are refused, not rolled over, and the error names the wrong part", async () => {
    const query = "query($t: DateTime) { conditionTransitions(filter: { since: $t }) { edges { cursor } } }";
    for (const [text, why] of [
      ["2026-02-31T00:00:00Z", "day 31 is not in February 2026 (01-28)"],
      ["2026-01-01T24:00:00Z", "hour 24 is not 00-23"],
      ["2025-02-29T12:00:00Z", "day 29 is not in February 2025 (01-28)"],
      ["2026-04-31T00:00:00+02:00", "day 31 is not in April 2026 (01-30)"],
      ["2026-01-01T10:60:00Z", "minute 60 is not 00-59"],
      ["2026-01-01T10:00:00+05:75", "offset minute 75 is not 00-59"],
      ["2026-13-01T00:00:00Z", "month 13 is not 01-12"],
      ["2026-01-01 10:00:00", "not of the form YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm)"],
    ] as const) {
      const response = await graphql(url, query, { t: text }, STRICT);
      assert.deepEqual(first(response), dateError(text, why));
    }
    // In a literal too, and a leap day that exists runs.
    const literal = await graphql(url, '{ conditionTransitions(filter: { since: "2026-02-30T00:00:00Z" }) { edges { cursor } } }', undefined, STRICT);
    assert.equal(literal.status, 400);
    assert.match(first(literal).message, /day 30 is not in February 2026/);
    assert.equal((await graphql(url, query, { t: "2024-02-29T23:59:59.999+14:00" }, STRICT)).status, 200);
  });

  test("a NUL in any history filter string, a node name or a drain reason is refused before it reaches the database", async () => {
    const nul = "nul\u0000here";
    for (const [query, variables, where] of [
      ["query($s: String) { conditionTransitions(filter: { node: $s }) { edges { cursor } } }", { s: nul }, "variable $s"],
      ["query($s: String) { conditionTransitions(filter: { cluster: $s, type: $s }) { edges { cursor } } }", { s: nul }, "variable $s"],
      ["query($s: String) { maintenanceEvents(filter: { node: $s }) { edges { cursor } } }", { s: nul }, "variable $s"],
      ['{ maintenanceEvents(filter: { cluster: "a\\u0000b" }) { edges { cursor } } }', undefined, "a string at line 1"],
      ['mutation($r: String) { drainNode(name: "general-a-0", reason: $r) { id } }', { r: nul }, "variable $r"],
      ['mutation($r: String) { cordonNode(name: "general-a-0", reason: $r) { name } }', { r: nul }, "variable $r"],
    ] as const) {
      const response = await graphql(url, query, variables, STRICT);
      assert.equal(response.status, 400, query);
      assert.deepEqual(first(response), { message: `Text must not contain the NUL character (U+0000): found in ${where}`, code: "BAD_USER_INPUT" }, query);
    }
    await servedMeanwhile(url);
  });

  test("a cursor whose id passes int64 is not a cursor of the list", async () => {
    for (const [field, list] of [
      ["conditionTransitions", "transitions"],
      ["maintenanceEvents", "events"],
    ] as const) {
      for (const cursor of [
        encodeOpaqueCursor({ l: list, a: Date.now(), i: "9223372036854775808" }),
        encodeOpaqueCursor({ l: list, a: Date.now(), i: "9999999999999999999" }),
        encodeOpaqueCursor({ l: list, a: -62_200_000_000_000, i: "1" }),
      ]) {
        const response = await graphql(url, `query($c: String) { ${field}(after: $c) { edges { cursor } } }`, { c: cursor }, STRICT);
        assert.deepEqual(first(response), { message: "after: not a cursor of this list", code: "BAD_USER_INPUT" });
      }
      const largest = encodeOpaqueCursor({ l: list, a: Date.now(), i: "9223372036854775807" });
      const ok = await graphql(url, `query($c: String) { ${field}(after: $c) { edges { cursor } } }`, { c: largest });
      assert.equal(ok.body.errors, undefined, "the largest bigint is still a position");
      assert.ok(Array.isArray(ok.body.data[field].edges));
    }
  });
});

describe("only a lost database is UNAVAILABLE (issue 18, item 2)", () => {
  let app: App;
  let url: string;
  let logs: CapturedLogs;
  let database: Database;
  before(async () => {
    database = await openDatabase({ kind: "pglite", dataDir: "memory" });
    ({ app, url, logs } = await startTestApp({}, { database }));
  });
  after(async () => (await app.stop(), await database.close()));

  for (const [table, query] of [
    ["condition_transition", "{ conditionTransitions { edges { cursor } } }"],
    ["node_change", "{ nodeChanges { edges { cursor } } }"],
  ] as const) {
    test(`a database error that is not a connection failure is INTERNAL_SERVER_ERROR, logged with its detail (${table} missing)`, async () => {
      await database.prisma.$executeRawUnsafe(`ALTER TABLE ${table} RENAME TO ${table}_gone`);
      try {
        const response = await graphql(url, query);
        assert.deepEqual(
          response.body.errors?.map((e) => ({ message: e.message, code: e.extensions.code })),
          [{ message: "Internal server error", code: "INTERNAL_SERVER_ERROR" }],
        );
        const logged = logs.lines.filter((line) => line.msg === "unexpected error in a GraphQL operation");
        assert.match(JSON.stringify(logged.at(-1)?.["err"]), new RegExp(table), "the log has the database's own words");
      } finally {
        await database.prisma.$executeRawUnsafe(`ALTER TABLE ${table}_gone RENAME TO ${table}`);
      }
    });
  }
});
