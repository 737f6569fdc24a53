import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { REPORT_OPERATIONS } from "../../src/cli/report-command.js";
import type { Database } from "../../src/db/database.js";
import { migrate } from "../../src/db/migrator.js";
import { createLogger } from "../../src/log/logger.js";
import { graphql, startTestApp } from "../support/app.js";
import { runCli } from "../support/cli.js";
import { BACKENDS, type TestDatabase } from "../support/databases.js";
import { FROM, min, seedHistory, TO } from "../reports/availability-fixtures.js";

/** One line on stderr, no stack. */
function oneLine(stderr: string, pattern: RegExp) {
  const lines = stderr.trim().split("\n");
  assert.equal(lines.length, 1, stderr);
  assert.match(lines[0]!, pattern);
}

const PERIOD = ["--from", FROM.toISOString(), "--to", TO.toISOString()];

// The history of availability-fixtures.ts, whose comments work out every figure, reported by
// the real command: through the running service and straight from PostgreSQL.
describe("node-inventory report availability", () => {
  const postgres = BACKENDS.find((b) => b.name === "postgres")!;
  let fresh: TestDatabase;
  let db: Database;
  let app: App;
  let url: string;
  let databaseUrl: string;

  before(async () => {
    fresh = await postgres.create();
    databaseUrl = (fresh.config as { url: string }).url;
    db = await fresh.open();
    await db.withConnection((c) => migrate(c, createLogger("silent")));
    await seedHistory(db);
    ({ app, url } = await startTestApp({ database: fresh.config }));
  });
  after(async () => {
    await app?.stop();
    await db?.close();
    await fresh?.drop();
  });

  test("a table in human units, grouped by zone, from the service", async () => {
    const { code, stdout, stderr } = await runCli(["report", "availability", "--url", url, "--cluster", "prod", "--group-by", "zone", ...PERIOD]);
    assert.equal(code, 0, stderr);
    const lines = stdout.split("\n");
    assert.equal(lines[0], "Availability from 2026-01-01T00:00:00.000Z to 2026-01-01T10:00:00.000Z");
    // This service watches no cluster: prod is history only, and says so.
    assert.equal(lines[1], "Not configured any more (recorded history only): prod");
    const table = lines.slice(3, -1);
    assert.deepEqual(
      table.map((line) => line.trim().split(/\s{2,}/)),
      [
        ["ZONE", "NODES", "OBSERVED", "UNOBSERVED", "AVAILABILITY", "READY", "NOT READY", "UNKNOWN", "OUTAGES", "LONGEST", "MTTR", "FLAPS", "MAINTENANCE", "REBOOTS"],
        // 1590 min observed, 1508 Ready; outages 120 and 2 minutes ended, MTTR 61 min.
        ["a", "3", "1d02h", "0s", "94.84%", "1d01h", "12m00s", "1h10m", "4", "50m00s", "1h01m", "1", "2h40m", "2"],
        ["b", "2", "18h20m", "0s", "99.72%", "18h17m", "3m00s", "0s", "1", "3m00s", "3m00s", "1", "9h10m", "1"],
        // MTTR (120 + 2 + 3) / 3 min = 41m40s.
        ["TOTAL", "5", "1d20h", "0s", "96.84%", "1d19h", "15m00s", "1h10m", "5", "50m00s", "41m40s", "2", "11h50m", "3"],
      ],
    );
    assert.equal(new Set(table.map((line) => line.length)).size, 1, "columns aligned");
    assert.equal(stderr, "");
  });

  test("CSV with a row per node, straight from the database without a service", async () => {
    const { code, stdout, stderr } = await runCli(["report", "availability", "--cluster", "prod", "--group-by", "zone", "--nodes", "--format", "csv", ...PERIOD], { DATABASE_URL: databaseUrl });
    assert.equal(code, 0, stderr);
    const ratio = (ready: number, observed: number) => String(Math.round((ready / observed) * 1e6) / 1e6);
    assert.equal(
      stdout,
      [
        "kind,ZONE,cluster,node,deleted,node_count,observed_seconds,unobserved_seconds,ready_seconds,not_ready_seconds,unknown_seconds,availability,outages,longest_outage_seconds,mttr_seconds,flaps,maintenance_seconds,reboots",
        `group,a,,,,3,${min(1590)},0,${min(1508)},${min(12)},${min(70)},${ratio(1508, 1590)},4,${min(50)},${min(61)},1,${min(160)},2`,
        `group,b,,,,2,${min(1100)},0,${min(1097)},${min(3)},0,${ratio(1097, 1100)},1,${min(3)},${min(3)},1,${min(550)},1`,
        `total,,,,,5,${min(2690)},0,${min(2605)},${min(15)},${min(70)},${ratio(2605, 2690)},5,${min(50)},${min(125 / 3)},2,${min(710)},3`,
        `node,a,prod,a,false,,${min(600)},0,${min(568)},${min(12)},${min(20)},${ratio(568, 600)},3,${min(20)},${min(61)},1,${min(100)},2`,
        `node,a,prod,b,true,,${min(450)},0,${min(400)},0,${min(50)},${ratio(400, 450)},1,${min(50)},,0,${min(60)},0`,
        `node,b,prod,c,false,,${min(500)},0,${min(497)},${min(3)},0,${ratio(497, 500)},1,${min(3)},${min(3)},1,${min(500)},1`,
        `node,a,prod,f,false,,${min(540)},0,${min(540)},0,0,1,0,0,,0,0,0`,
        `node,b,prod,g,false,,${min(600)},0,${min(600)},0,0,1,0,0,,0,${min(50)},0`,
        "",
      ].join("\r\n"),
    );
  });

  test("JSON is the GraphQL data as is, the same from the database as from the service", async () => {
    const args = ["report", "availability", "--cluster", "prod", "--group-by", "zone,cluster", "--nodes", "--format", "json", "--flap-threshold", "181", ...PERIOD];
    const viaService = await runCli([...args, "--url", url]);
    const viaDatabase = await runCli([...args, "--database-url", databaseUrl]);
    assert.equal(viaService.code, 0, viaService.stderr);
    assert.equal(viaDatabase.code, 0, viaDatabase.stderr);
    const direct = await graphql(url, REPORT_OPERATIONS.availability, {
      cluster: "prod",
      from: FROM.toISOString(),
      to: TO.toISOString(),
      groupBy: [{ by: "ZONE" }, { by: "CLUSTER" }],
      flapThresholdSeconds: 181,
      nodes: true,
    });
    assert.deepEqual(JSON.parse(viaService.stdout), direct.body.data);
    // Straight from the database the configuration is not known: null, not "every cluster configured".
    assert.deepEqual(direct.body.data.availabilityReport.clustersNotConfigured, ["prod"]);
    const fromDatabase = JSON.parse(viaDatabase.stdout);
    assert.equal(fromDatabase.availabilityReport.clustersNotConfigured, null);
    assert.deepEqual({ ...fromDatabase.availabilityReport, clustersNotConfigured: ["prod"] }, direct.body.data.availabilityReport);
    assert.equal(direct.body.data.availabilityReport.total.flaps, 2);
  });

  test("dates the API would refuse are refused the same words, not rolled over: exit 2", async () => {
    for (const [args, why] of [
      [["--from", "2026-02-31T00:00:00Z"], 'day 31 is not in February 2026 \\(01-28\\)'],
      [["--from", "2026-11-01T00:00:00Z", "--to", "2026-11-01T24:00:00Z"], "hour 24 is not 00-23"],
      [["--from", "2026-11-01"], "not of the form"],
    ] as const) {
      const { code, stdout, stderr } = await runCli(["report", "availability", "--url", url, ...args]);
      assert.equal(code, 2, stderr);
      assert.equal(stdout, "");
      oneLine(stderr, new RegExp(`^node-inventory: --(from|to): must be an RFC 3339 timestamp such as 2026-01-15T10:30:00Z; "[^"]+": ${why}`));
    }
    // The API's own words for the same text.
    const { body } = await graphql(url, `{ availabilityReport(from: "2026-02-31T00:00:00Z", to: "2026-03-01T00:00:00Z") { total { nodeCount } } }`);
    assert.match(body.errors![0]!.message, /DateTime must be an RFC 3339 timestamp such as 2026-01-15T10:30:00Z; "2026-02-31T00:00:00Z": day 31 is not in February 2026 \(01-28\)/);
  });

  test("an error of the service is one line with its code, exit 1", async () => {
    const { code, stdout, stderr } = await runCli(["report", "availability", "--url", url, "--group-by", "label:-bad-"]);
    assert.equal(code, 1);
    assert.equal(stdout, "");
    oneLine(stderr, /^node-inventory: BAD_USER_INPUT: groupBy labelKey "-bad-": /);
  });

  test("a database without node-inventory's tables says so in one line, exit 1", async () => {
    const empty = await postgres.create();
    try {
      const { code, stderr } = await runCli(["report", "availability", "--database-url", (empty.config as { url: string }).url]);
      assert.equal(code, 1);
      oneLine(stderr, /^node-inventory: postgresql:\/\/.* holds no node-inventory history/);
    } finally {
      await empty.drop();
    }
  });
});

describe("node-inventory report talking to a service", () => {
  let seen: IncomingHttpHeaders | undefined;
  const server = createServer((req, res) => {
    seen = req.headers;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ errors: [{ message: "a token that is not valid", extensions: { code: "UNAUTHENTICATED" } }, { message: "second" }] }));
  });
  let url: string;
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test("sends the token as a Bearer header and prints the refusal in one line, never the token", async () => {
    const { code, stderr } = await runCli(["report", "capacity"], { NODE_INVENTORY_URL: url, NODE_INVENTORY_TOKEN: "s3cret-token" });
    assert.equal(code, 1);
    assert.equal(seen?.authorization, "Bearer s3cret-token");
    oneLine(stderr, /^node-inventory: UNAUTHENTICATED: a token that is not valid \(and 1 more\)$/);
    assert.doesNotMatch(stderr, /s3cret/);
  });

  test("a service that cannot be reached: one line, exit 1", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const { code, stderr } = await runCli(["report", "availability", "--url", `http://127.0.0.1:${port}`]);
    assert.equal(code, 1);
    oneLine(stderr, new RegExp(`^node-inventory: cannot reach node-inventory at http://127\\.0\\.0\\.1:${port}/graphql: ECONNREFUSED$`));
  });

  test("bad flags: one line, exit 2", async () => {
    const { code, stderr } = await runCli(["report", "availability", "--since", "soon"]);
    assert.equal(code, 2);
    oneLine(stderr, /^node-inventory: --since: "soon" is not a duration/);
  });

  test("capacity with only a database URL: one line saying to use --url, exit 2", async () => {
    const { code, stderr } = await runCli(["report", "capacity"], { DATABASE_URL: "postgresql://app@127.0.0.1:5432/inventory" });
    assert.equal(code, 2);
    oneLine(stderr, /^node-inventory: report capacity needs live cluster data from a running service: give --url/);
  });
});
