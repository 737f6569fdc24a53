// The availability report over a realistic recorded history on PostgreSQL: 5,000 nodes and
// 40 days of Ready transitions (most nodes fail every few days, one in twenty flaps ten times
// a day), other condition noise, one node in ten replaced, cordons and drains with their
// evicted pods; what came before the 40 days is pruned, as retention would. Times the report over
// the last 30 and 7 days, as the query layer and as the CLI's whole GraphQL operation.
// Usage: npm run bench:availability-report [-- --nodes 5000 --days 40 --runs 5]
import { parseArgs } from "node:util";
import { graphql } from "graphql";
import { REPORT_OPERATIONS } from "../src/cli/report-command.js";
import { openDatabase } from "../src/db/database.js";
import { migrate } from "../src/db/migrator.js";
import { buildSchema } from "../src/graphql/schema.js";
import { createLogger } from "../src/log/logger.js";
import { AvailabilityQueries } from "../src/reports/availability-queries.js";
import { availabilityResolvers } from "../src/reports/availability-resolvers.js";
import { Rng } from "../src/sim/rng.js";
import { freshPostgres, percentile } from "./support.js";

const { values } = parseArgs({ options: { nodes: { type: "string", default: "5000" }, days: { type: "string", default: "40" }, runs: { type: "string", default: "5" } } });
const NODES = Number(values.nodes);
const DAYS = Number(values.days);
const RUNS = Number(values.runs);
const DAY = 86_400_000;
const NOW = Date.now();
const START = NOW - DAYS * DAY;
const ZONES = ["eu-west-1a", "eu-west-1b", "eu-west-1c"];
const POOLS = ["general", "memory", "compute", "gpu", "spot"];

type Row = unknown[];
const states: Row[] = [];
const transitions: Row[] = [];
const changes: Row[] = [];
const events: Row[] = [];
const rng = new Rng(7);
let eventKey = 0;

/** An exponential wait with the given mean, for Poisson arrivals. */
const wait = (mean: number) => -Math.log(1 - rng.next()) * mean;

/** One node's history from `born` until `died` (or now). */
function node(name: string, born: number, died: number | undefined): void {
  const uid = rng.uid();
  const end = died ?? NOW;
  const flappy = rng.chance(0.05);
  const labels = { "topology.kubernetes.io/zone": rng.pick(ZONES), "node-pool": rng.pick(POOLS), "node-role.kubernetes.io/worker": "" };
  // What happened before the history starts was pruned by retention.
  const first = Math.max(born, START);
  if (born >= START) {
    changes.push(["bench", name, "CREATED", null, JSON.stringify({ uid }), new Date(born), `created:${uid}`]);
    transitions.push(["bench", name, "Ready", null, "True", new Date(born + 40_000)]);
  }
  let status = "True";
  // Outages: a few a month for most nodes, ten a day for the flappy ones.
  for (let t = first + 40_000 + wait(flappy ? DAY / 10 : DAY * 3); t < end; t += wait(flappy ? DAY / 10 : DAY * 3)) {
    const down = rng.chance(0.7) ? "False" : "Unknown";
    transitions.push(["bench", name, "Ready", "True", down, new Date(t)]);
    const kind = rng.next();
    const length = kind < 0.7 ? rng.int(5, 120) * 1000 : kind < 0.95 ? rng.int(2, 30) * 60_000 : rng.int(1, 6) * 3_600_000;
    let last = down;
    if (rng.chance(0.2)) {
      const other = down === "False" ? "Unknown" : "False";
      transitions.push(["bench", name, "Ready", down, other, new Date(t + length / 2)]);
      last = other;
    }
    t += length;
    if (t >= end) {
      status = last;
      break;
    }
    transitions.push(["bench", name, "Ready", last, "True", new Date(t)]);
  }
  for (let t = first + wait(DAY * 10); t < end; t += wait(DAY * 10)) {
    transitions.push(["bench", name, "MemoryPressure", "False", "True", new Date(t)], ["bench", name, "MemoryPressure", "True", "False", new Date(t + 120_000)]);
  }
  // One maintenance in five nodes: cordon, drain 20 pods, uncordon hours later.
  if (rng.chance(0.2)) {
    const cordon = first + rng.next() * (end - first);
    const uncordon = cordon + rng.int(1, 8) * 3_600_000;
    const operation = rng.uid();
    const event = (kind: string, at: number, op: string | null, pod: string | null = null) =>
      at < end && events.push(["bench", name, kind, "bench", new Date(at), op, pod, `bench-${++eventKey}`]);
    event("CORDONED", cordon, null);
    event("DRAIN_STARTED", cordon + 1_000, operation);
    for (let p = 0; p < 20; p++) event("POD_EVICTED", cordon + 2_000 + p * 10_000, operation, `default/pod-${p}`);
    event("DRAIN_SUCCEEDED", cordon + 300_000, operation);
    event("UNCORDONED", uncordon, null);
  }
  if (died !== undefined) changes.push(["bench", name, "DELETED", JSON.stringify({ uid }), null, new Date(died), `deleted:${uid}`]);
  states.push(["bench", name, uid, JSON.stringify({ Ready: status }), false, "v1.31.2", "containerd://1.7.24", JSON.stringify(labels), "[]", new Date(born), died ? new Date(died) : null]);
}

for (let i = 0; i < NODES; i++) {
  const born = START - rng.int(1, 300) * DAY;
  // One node in ten is replaced during the history by a new one.
  const replacedAt = rng.chance(0.1) ? START + rng.next() * (NOW - START) : undefined;
  node(`node-${i}`, born, replacedAt);
  if (replacedAt !== undefined) node(`node-${i}-r`, replacedAt + 60_000, undefined);
}

const fresh = await freshPostgres();
const database = await openDatabase({ kind: "postgres", url: fresh.url });
try {
  await database.withConnection((c) => migrate(c, createLogger("silent")));
  const loadStarted = performance.now();
  await database.withConnection(async (c) => {
    // Column arrays through unnest: 20,000 rows a statement.
    const insert = async (sql: string, rows: Row[]) => {
      for (let i = 0; i < rows.length; i += 20_000) {
        const chunk = rows.slice(i, i + 20_000);
        await c.query(sql, chunk[0]!.map((_, column) => chunk.map((row) => row[column])));
      }
    };
    await insert(
      `INSERT INTO node_state (cluster, name, uid, conditions, unschedulable, kubelet_version, container_runtime, labels, taints, first_seen_at, deleted_at, updated_at)
       SELECT c, n, u, co::jsonb, un, k, r, l::jsonb, ta::jsonb, f, d, now() FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bool[], $6::text[], $7::text[], $8::text[], $9::text[], $10::timestamptz[], $11::timestamptz[]) AS x(c, n, u, co, un, k, r, l, ta, f, d)`,
      states,
    );
    await insert(
      `INSERT INTO condition_transition (cluster, node, type, "from", "to", at) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[])`,
      transitions.sort((a, b) => (a[5] as Date).getTime() - (b[5] as Date).getTime()),
    );
    await insert(
      `INSERT INTO node_change (cluster, node, field, before, after, at, key) SELECT c, n, f, b::jsonb, a::jsonb, t, k FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::text[]) AS x(c, n, f, b, a, t, k)`,
      changes,
    );
    await insert(
      `INSERT INTO maintenance_event (cluster, node, kind, actor, at, operation_id, pod, dedupe_key) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::uuid[], $7::text[], $8::text[])`,
      events,
    );
    // Each cluster recorded all along but for an hour in the middle: the report splits its spans there.
    const middle = START + (NOW - START) / 2;
    await c.query(
      `INSERT INTO recording_coverage (cluster, started_at, ended_at)
       SELECT cluster, s, e FROM (SELECT DISTINCT cluster FROM node_state) n, (VALUES ($1::timestamptz, $2::timestamptz), ($3, $4)) AS v(s, e)`,
      [new Date(START), new Date(middle), new Date(middle + 3_600_000), new Date(NOW)],
    );
    await c.exec("ANALYZE");
  });
  console.log(
    `history: ${states.length} nodes, ${transitions.length} condition transitions, ${changes.length} node changes, ${events.length} maintenance events over ${DAYS} days ` +
      `(loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s)`,
  );

  const queries = new AvailabilityQueries(database);
  const logger = createLogger("silent");
  const schema = buildSchema([availabilityResolvers(queries)]);
  const time = async (label: string, run: () => Promise<unknown>) => {
    await run();
    const ms: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const began = performance.now();
      await run();
      ms.push(performance.now() - began);
    }
    ms.sort((a, b) => a - b);
    console.log(`${label}: p50 ${percentile(ms, 50).toFixed(0)} ms, max ${ms.at(-1)!.toFixed(0)} ms (${RUNS} runs)`);
  };
  for (const days of [30, 7]) {
    const from = new Date(NOW - days * DAY);
    const to = new Date(NOW);
    const report = await queries.report({ from, to, groupBy: [{ by: "ZONE" }, { by: "NODE_POOL" }] });
    console.log(
      `${days} days: ${report.nodes.length} nodes, ${report.total.outages} outages, availability ${(report.total.availability! * 100).toFixed(3)}%, MTTR ${report.total.mttrSeconds!.toFixed(0)} s, ${report.total.flaps} flaps`,
    );
    await time(`  report (5 SQL statements and the computation)`, () => queries.report({ from, to, groupBy: [{ by: "ZONE" }, { by: "NODE_POOL" }] }));
    await time(`  the CLI's GraphQL operation with every node`, async () => {
      const result = await graphql({
        schema,
        source: REPORT_OPERATIONS.availability,
        variableValues: { from: from.toISOString(), to: to.toISOString(), groupBy: [{ by: "ZONE" }, { by: "NODE_POOL" }], nodes: true },
        contextValue: { requestId: "bench", logger, loaders: new Map() },
      });
      if (result.errors) throw result.errors[0];
    });
  }
} finally {
  await database.close();
  await fresh.drop();
}
