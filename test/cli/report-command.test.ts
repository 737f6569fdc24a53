import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parse, validate } from "graphql";
import { ConfigError } from "../../src/config/config.js";
import { buildSchema } from "../../src/graphql/schema.js";
import { parseDuration, parseGroupBy, parsePodShape, planReport, REPORT_OPERATIONS } from "../../src/cli/report-command.js";
import { availabilityOf } from "../../src/reports/availability-report.js";
import { availabilityTable, capacityCsv, capacityTable, formatAvailability, formatDuration, formatPercent, type AvailabilityGroupData, type CapacityData, type CapacityGroupData } from "../../src/cli/report-format.js";
import { toCsv } from "../../src/cli/output-escaping.js";

const NOW = new Date("2026-11-29T12:00:00.000Z");

function rejects(argv: string[], message: RegExp, env: NodeJS.ProcessEnv = {}) {
  assert.throws(() => planReport(argv, env, NOW), (error: unknown) => error instanceof ConfigError && message.test(error.message));
}

describe("report command line", () => {
  test("the operations it sends are valid against schema.graphql", () => {
    const schema = buildSchema([]);
    for (const [name, operation] of Object.entries(REPORT_OPERATIONS)) assert.deepEqual(validate(schema, parse(operation)).map(String), [], name);
  });

  const durations: [string, number][] = [["45s", 45], ["30m", 1_800], ["12h", 43_200], ["7d", 604_800], ["2w", 1_209_600], ["1h30m", 5_400], ["300", 300]];
  for (const [text, seconds] of durations) test(`duration ${text} is ${seconds} s`, () => assert.equal(parseDuration(text, "--since"), seconds));

  test("group-by names map to the API's dimensions", () => {
    assert.deepEqual(parseGroupBy("zone,pool,instance-type,role,cluster,label:team.example.com/name"), [
      { by: "ZONE" },
      { by: "NODE_POOL" },
      { by: "INSTANCE_TYPE" },
      { by: "ROLE" },
      { by: "CLUSTER" },
      { by: "LABEL", labelKey: "team.example.com/name" },
    ]);
  });

  test("a pod shape is cpu and memory quantities", () => {
    assert.deepEqual(parsePodShape("cpu=500m,memory=1Gi"), { cpu: "500m", memory: "1Gi" });
    assert.deepEqual(parsePodShape("memory=512Mi, cpu=2"), { cpu: "2", memory: "512Mi" });
  });

  test("availability defaults: the last 7 days, every cluster, a table, the local service", () => {
    assert.deepEqual(planReport(["availability"], {}, NOW), {
      report: "availability",
      format: "table",
      source: { kind: "service", url: "http://127.0.0.1:4000" },
      variables: { from: "2026-11-22T12:00:00.000Z", to: "2026-11-29T12:00:00.000Z", nodes: false },
    });
  });

  test("availability with every option", () => {
    const plan = planReport(
      ["availability", "--cluster", "prod", "--group-by", "zone,label:team", "--from", "2026-11-01T00:00:00Z", "--to", "2026-11-08T00:00:00Z", "--flap-threshold", "2m", "--nodes", "--format", "csv", "--url", "https://inv.example.com/", "--token", "t0k"],
      {},
      NOW,
    );
    assert.deepEqual(plan, {
      report: "availability",
      format: "csv",
      source: { kind: "service", url: "https://inv.example.com", token: "t0k" },
      variables: {
        cluster: "prod",
        groupBy: [{ by: "ZONE" }, { by: "LABEL", labelKey: "team" }],
        from: "2026-11-01T00:00:00.000Z",
        to: "2026-11-08T00:00:00.000Z",
        flapThresholdSeconds: 120,
        nodes: true,
      },
    });
    assert.deepEqual(planReport(["availability", "--from", "2026-11-29T00:00:00Z"], {}, NOW).variables, { from: "2026-11-29T00:00:00.000Z", to: NOW.toISOString(), nodes: false });
    // An offset and a leap day, as the API reads them.
    assert.deepEqual(planReport(["availability", "--from", "2028-02-29T01:00:00+01:00", "--to", "2028-03-01T00:00:00.5Z"], {}, NOW).variables, { from: "2028-02-29T00:00:00.000Z", to: "2028-03-01T00:00:00.500Z", nodes: false });
  });

  test("capacity: trends only when a period is given, the pod shape as the API's input", () => {
    assert.deepEqual(planReport(["capacity", "--pod-shape", "cpu=500m,memory=1Gi"], {}, NOW).variables, { podShape: { cpu: "500m", memory: "1Gi" } });
    assert.deepEqual(planReport(["capacity", "--since", "1d", "--group-by", "pool"], {}, NOW).variables, {
      groupBy: [{ by: "NODE_POOL" }],
      trendsSince: "2026-11-28T12:00:00.000Z",
      trendsUntil: NOW.toISOString(),
    });
  });

  test("where the report comes from: flags over the environment, a service URL over a database URL", () => {
    const db = "postgresql://app@db:5432/inventory";
    const src = (argv: string[], env: NodeJS.ProcessEnv) => planReport(["availability", ...argv], env, NOW).source;
    assert.deepEqual(src([], { NODE_INVENTORY_URL: "http://svc:4000", DATABASE_URL: db, NODE_INVENTORY_TOKEN: "env-token" }), { kind: "service", url: "http://svc:4000", token: "env-token" });
    assert.deepEqual(src([], { DATABASE_URL: db }), { kind: "database", flags: {}, env: { DATABASE_URL: db } });
    assert.deepEqual(src(["--database-url", db], { NODE_INVENTORY_URL: "http://svc:4000" }), { kind: "database", flags: { "database-url": db }, env: {} });
    assert.deepEqual(src(["--url", "http://other:4000/graphql"], { DATABASE_URL: db }), { kind: "service", url: "http://other:4000/graphql" });
  });

  const bad: [string, string[], RegExp, NodeJS.ProcessEnv?][] = [
    ["no report named", [], /^report: say which, capacity or availability$/],
    ["an unknown report", ["uptime"], /^report: "uptime" is not capacity or availability$/],
    ["an unknown flag", ["availability", "--colour"], /^Unknown option '--colour'/],
    ["a stray argument", ["availability", "extra"], /Unexpected argument 'extra'/],
    ["an unknown format", ["availability", "--format", "xml"], /^--format: "xml" is not table, csv or json$/],
    ["an unknown grouping", ["availability", "--group-by", "zone,colour"], /^--group-by: "colour" is not one of cluster, pool, zone, instance-type, role, label:KEY$/],
    ["a bad duration", ["availability", "--since", "7x"], /^--since: "7x" is not a duration/],
    ["--since with --from", ["availability", "--since", "7d", "--from", "2026-11-01T00:00:00Z"], /^--since cannot be combined with --from or --to$/],
    ["--to without --from", ["availability", "--to", "2026-11-01T00:00:00Z"], /^--to needs --from$/],
    ["--to before --from", ["availability", "--from", "2026-11-02T00:00:00Z", "--to", "2026-11-01T00:00:00Z"], /^--to must be after --from$/],
    ["a time that is none", ["availability", "--from", "yesterday"], /^--from: must be an RFC 3339 timestamp such as 2026-01-15T10:30:00Z; "yesterday": not of the form/],
    // The API's parser: a day the month lacks, hour 24 and a date without a time are refused, never rolled over.
    ["February 31st", ["availability", "--from", "2026-02-31T00:00:00Z"], /^--from: must be an RFC 3339 timestamp such as 2026-01-15T10:30:00Z; "2026-02-31T00:00:00Z": day 31 is not in February 2026 \(01-28\)$/],
    ["hour 24", ["availability", "--from", "2026-11-01T00:00:00Z", "--to", "2026-11-01T24:00:00Z"], /^--to: must be an RFC 3339 timestamp such as 2026-01-15T10:30:00Z; "2026-11-01T24:00:00Z": hour 24 is not 00-23$/],
    ["a date without a time", ["availability", "--from", "2026-11-01"], /^--from: must be an RFC 3339 timestamp such as 2026-01-15T10:30:00Z; "2026-11-01": not of the form YYYY-MM-DDThh:mm:ss\[\.fraction\]\(Z\|±hh:mm\)$/],
    ["a capacity trends period on February 30th", ["capacity", "--from", "2026-02-30T00:00:00Z"], /^--from: must be an RFC 3339 timestamp .*day 30 is not in February 2026/],
    ["a zero period", ["availability", "--since", "0s"], /^--since must be longer than 0s$/],
    ["a pod shape for availability", ["availability", "--pod-shape", "cpu=1,memory=1Gi"], /^--pod-shape is for report capacity$/],
    ["--nodes for capacity", ["capacity", "--nodes"], /^--nodes is for report availability$/],
    ["half a pod shape", ["capacity", "--pod-shape", "cpu=1"], /^--pod-shape: needs both cpu and memory/],
    ["a pod shape of something else", ["capacity", "--pod-shape", "gpu=1"], /^--pod-shape: "gpu=1" is not cpu=QUANTITY or memory=QUANTITY/],
    ["both URLs", ["availability", "--url", "http://a", "--database-url", "postgresql://b/c"], /^give --url or --database-url, not both$/],
    ["a service URL that is none", ["availability", "--url", "localhost:4000"], /^--url: use an http:\/\/ or https:\/\/ URL$/],
    ["capacity from a database", ["capacity"], /^report capacity needs live cluster data from a running service: give --url/, { DATABASE_URL: "postgresql://x/y" }],
  ];
  for (const [name, argv, message, env] of bad) test(`${name}: a usage error (exit 2)`, () => rejects(argv, message, env));
});

describe("report output", () => {
  const durations: [number | null, string][] = [
    [null, "-"],
    [0, "0s"],
    [0.4, "<1s"],
    [45, "45s"],
    [59.6, "1m00s"],
    [725, "12m05s"],
    [3_720, "1h02m"],
    [86_399, "23h59m"],
    [277_200, "3d05h"],
  ];
  for (const [seconds, text] of durations) test(`${seconds} s reads ${text}`, () => assert.equal(formatDuration(seconds), text));

  test("percentages", () => {
    assert.equal(formatPercent(0.948427, 3), "94.843%");
    assert.equal(formatPercent(1, 3), "100.000%");
    assert.equal(formatPercent(0.5), "50.0%");
    assert.equal(formatPercent(null), "-");
  });

  const availabilities: [number | null, string][] = [
    [null, "-"],
    [1, "100%"],
    [0, "0%"],
    [0.948427, "94.84%"],
    // Truncated, never rounded up: 99.996% of a year is still a 21-minute outage.
    [0.99996, "99.9960%"],
    [0.9997, "99.97%"],
    [0.999999, "99.9999%"],
    [0.9999999, "99.9999%"],
    [0.0000001, "0.01%"],
  ];
  for (const [ratio, text] of availabilities) test(`availability ${ratio} reads ${text}`, () => assert.equal(formatAvailability(ratio), text));

  test("the API's availability: six decimals, never 1 with an outage nor 0 with any Ready time", () => {
    const YEAR = 365 * 86_400_000;
    assert.equal(availabilityOf(1508, 1590), 0.948428);
    assert.equal(availabilityOf(YEAR - 1_000, YEAR), 0.999999, "a second's outage in a year");
    assert.equal(availabilityOf(YEAR, YEAR), 1);
    assert.equal(availabilityOf(1_000, YEAR), 0.000001);
    assert.equal(availabilityOf(0, YEAR), 0);
    assert.equal(availabilityOf(0, 0), null);
  });

  test("the same node name in two clusters: a row each, the cluster no longer configured marked", () => {
    const figures: Omit<AvailabilityGroupData, "nodeCount"> = {
      key: [],
      observedSeconds: 60,
      unobservedSeconds: 0,
      readySeconds: 60,
      notReadySeconds: 0,
      unknownSeconds: 0,
      availability: 1,
      outages: 0,
      longestOutageSeconds: 0,
      mttrSeconds: null,
      flaps: 0,
      maintenanceSeconds: 0,
      reboots: 0,
    };
    const text = availabilityTable({
      from: "2026-01-01T00:00:00.000Z",
      to: "2026-01-01T00:01:00.000Z",
      groupBy: [],
      groups: [{ ...figures, nodeCount: 2 }],
      total: { ...figures, nodeCount: 2 },
      nodes: [
        { ...figures, cluster: "old", node: "a", deleted: false },
        { ...figures, cluster: "prod", node: "a", deleted: false },
      ],
      clustersNotConfigured: ["old"],
    });
    const lines = text.split("\n");
    assert.equal(lines[1], "Not configured any more (recorded history only): old");
    assert.deepEqual(
      lines.slice(-4, -1).map((line) => line.split(/\s{2,}/).slice(0, 2)),
      [["CLUSTER", "NODE"], ["old (not configured)", "a"], ["prod", "a"]],
    );
  });

  test("CSV follows RFC 4180: CRLF, quoting fields with commas, quotes or line breaks", () => {
    assert.equal(toCsv([["a", "b,c", 'say "hi"', "two\nlines", null, 1.5, true]]), 'a,"b,c","say ""hi""","two\nlines",,1.5,true\r\n');
  });

  const resource = (unit: string, allocatable: number, requests: number, limits: number, usage: number | null) => ({
    unit,
    capacity: allocatable,
    allocatable,
    requests,
    limits,
    usage,
    headroom: allocatable - requests,
    requestRatio: requests / allocatable,
    overcommitRatio: limits / allocatable,
    usageRatio: usage === null ? null : usage / allocatable,
  });
  const GiB = 2 ** 30;
  const group = (zone: string | null, nodes: number, cpu: number, memGiB: number, fit: number): CapacityGroupData => ({
    key: [{ dimension: "ZONE", value: zone }],
    nodeCount: nodes,
    readyNodeCount: nodes,
    schedulableNodeCount: nodes - 1,
    cpu: resource("millicores", cpu, cpu / 2, cpu, cpu / 4),
    memory: resource("bytes", memGiB * GiB, (memGiB * GiB) / 4, (memGiB * GiB) / 2, null),
    pods: resource("pods", 110 * nodes, 30 * nodes, 0, null),
    ephemeralStorage: resource("bytes", 100 * GiB, 0, 0, null),
    fit: { pods: fit, nodesWithRoom: nodes - 1, nodesExcluded: 1 },
    trends: null,
  });
  const CAPACITY: CapacityData = {
    generatedAt: "2026-11-29T12:00:00.000Z",
    groupBy: ["ZONE"],
    groups: [group("eu-west-1a", 2, 16_000, 64, 20), group(null, 1, 4_000, 16, 0)],
    total: group(null, 3, 20_000, 80, 20),
    podShape: { cpuMillicores: 500, memoryBytes: GiB },
    incompleteClusters: ["edge"],
  };
  CAPACITY.total.key = [];

  test("capacity as a table: cores, GiB and percentages, a missing zone shown as (none), the total last", () => {
    assert.equal(
      capacityTable(CAPACITY),
      [
        "Capacity at 2026-11-29T12:00:00.000Z (CPU in cores, memory in GiB)",
        "Pod shape: 0.5 cores, 1.0 GiB",
        "Incomplete (not synced or unreachable): edge",
        "",
        "ZONE        NODES  READY  SCHEDULABLE  CPU ALLOC  CPU REQ  CPU REQ%  CPU LIM%  CPU USE%  MEM ALLOC  MEM REQ  MEM REQ%  MEM LIM%  MEM USE%  PODS  PODS ALLOC  FIT PODS  NODES WITH ROOM",
        "eu-west-1a      2      2            1       16.0      8.0     50.0%    100.0%     25.0%       64.0     16.0     25.0%     50.0%         -    60         220        20                1",
        "(none)          1      1            0        4.0      2.0     50.0%    100.0%     25.0%       16.0      4.0     25.0%     50.0%         -    30         110         0                0",
        "TOTAL           3      3            2       20.0     10.0     50.0%    100.0%     25.0%       80.0     20.0     25.0%     50.0%         -    90         330        20                2",
        "",
      ].join("\n"),
    );
  });

  test("capacity as CSV: base units, one row per group and the total", () => {
    const lines = capacityCsv(CAPACITY).split("\r\n");
    assert.equal(lines.length, 5);
    assert.equal(lines[4], "");
    const header = lines[0]!.split(",");
    assert.deepEqual(header.slice(0, 7), ["kind", "ZONE", "node_count", "ready_node_count", "schedulable_node_count", "cpu_capacity", "cpu_allocatable"]);
    assert.deepEqual(header.slice(-4), ["ephemeral_storage_usage_ratio", "fit_pods", "fit_nodes_with_room", "fit_nodes_excluded"]);
    assert.equal(header.length, 2 + 3 + 4 * 9 + 3);
    const row = (line: string) => Object.fromEntries(line.split(",").map((value, i) => [header[i], value]));
    assert.deepEqual(
      [row(lines[1]!)["ZONE"], row(lines[1]!)["cpu_allocatable"], row(lines[1]!)["memory_requests"], row(lines[1]!)["fit_pods"], row(lines[1]!)["memory_usage"]],
      ["eu-west-1a", "16000", String(16 * GiB), "20", ""],
    );
    assert.deepEqual([row(lines[2]!)["kind"], row(lines[2]!)["ZONE"], row(lines[3]!)["kind"], row(lines[3]!)["node_count"]], ["group", "", "total", "3"]);
  });
});
