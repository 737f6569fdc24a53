// The capacity report at scale: a simulated 5,000-node, 150,000-pod cluster in its own process,
// node-inventory in another on a fresh PostgreSQL database. Measures the latency of
// capacityReport for the live figures (one group; by pool and zone with a pod shape; one group
// per node, the largest answer), then of reports with trends, seeded for every node and cell:
// six hours of samplings a minute apart and 30 days of hourly rollups (all but the last two
// hours, which a report then summarises from raw rows itself). Periods up to 6 h read
// samplings, longer ones hours; reports by pool and zone or by a label key configured for trends
// read cell rows, reports by another label or filtered read node rows.
// Usage: npm run bench:capacity-report [-- --nodes 5000 --queries 30 --trend-queries 10]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { SETTINGS } from "../src/config/config.js";
import { groupValue, type ReportGrouping } from "../src/reports/grouping.js";
import { freshPostgres, percentile, rssMiB, spawnUntil, stop } from "./support.js";

const { values } = parseArgs({
  options: {
    nodes: { type: "string", default: "5000" },
    "pods-per-node": { type: "string", default: "30" },
    queries: { type: "string", default: "30" },
    "trend-queries": { type: "string", default: "10" },
  },
});
const nodes = Number(values.nodes);
const fresh = await freshPostgres();
const dir = mkdtempSync(join(tmpdir(), "ni-bench-capacity-"));
const kubeconfig = join(dir, "kubeconfig");
const sim = await spawnUntil(["sim", "--nodes", String(nodes), "--pods-per-node", values["pods-per-node"]!, "--seed", "1", "--kubeconfig-out", kubeconfig], /https?:\/\/\S+/, {}, [
  "--max-old-space-size=4096",
]);
// Sampling off: the bench seeds its own samples and wants no writes of its own meanwhile.
// Trends are also summed by the default label keys (spot/on-demand among them); the seeded cells carry them too.
const LABEL_KEYS = SETTINGS.trendsLabelKeys.default.split(",");
const service = await spawnUntil(["serve", "--port", "0", "--kubeconfig", kubeconfig, "--trends-interval", "0", "--trends-label-keys", LABEL_KEYS.join(",")], /"url":"([^"]+)","graphql"/, {
  DATABASE_URL: fresh.url,
});
const url = service.match[1]!;
const client = new pg.Client({ connectionString: fresh.url });
await client.connect();

const SHAPE = `podShape: { cpu: "500m", memory: "1Gi", tolerations: [{ key: "nvidia.com/gpu", operator: "Exists" }] }`;
const FIGURES = `key { value } nodeCount readyNodeCount schedulableNodeCount
  cpu { capacity allocatable requests limits usage headroom requestRatio overcommitRatio usageRatio }
  memory { capacity allocatable requests limits usage headroom requestRatio overcommitRatio usageRatio }
  pods { allocatable requests headroom } ephemeralStorage { allocatable requests }`;
const TRENDS = `trends { samples cpu { peakUsage p95Usage peakRequests p95Requests } memory { peakUsage p95Usage peakRequests p95Requests } }`;
const live = {
  "one group": `{ capacityReport { total { ${FIGURES} } } }`,
  "by pool and zone, pod shape": `{ capacityReport(groupBy: [{ by: NODE_POOL }, { by: ZONE }], ${SHAPE}) { groups { ${FIGURES} fit { pods nodesWithRoom nodesExcluded } } total { nodeCount fit { pods } } } }`,
  "one group per node (label kubernetes.io/hostname)": `{ capacityReport(groupBy: [{ by: LABEL, labelKey: "kubernetes.io/hostname" }], ${SHAPE}) { groups { ${FIGURES} fit { pods } } } }`,
};

try {
  let synced = false;
  while (!synced) {
    // While the service parses the initial lists its event loop stalls for seconds, and a
    // kept-alive connection it closes meanwhile resets the next poll: poll again.
    const body = (await post(`{ clusters { synced metricsAvailable nodeCount } }`).catch(() => undefined)) as any;
    const cluster = body?.data.clusters[0];
    synced = cluster?.synced && cluster.metricsAvailable && cluster.nodeCount === nodes;
    if (!synced) await new Promise((r) => setTimeout(r, 200));
  }
  console.log(`service synced ${nodes} nodes and their pods (RSS ${rssMiB(service.child.pid!).toFixed(0)} MiB)`);

  // The very first report sums every pod of every node; later ones reuse those sums until pods change.
  const cold = await timed(live["by pool and zone, pod shape"]);
  console.log(`first report after sync (sums all pods): ${cold.ms.toFixed(0)} ms`);
  for (const [name, query] of Object.entries(live)) await measure(`live, ${name}`, query, Number(values.queries));

  await seedTrends();
  const now = Date.now();
  const ago = (ms: number) => new Date(now - ms).toISOString();
  const trendsReport = (args: string, since: string) => `{ capacityReport(${args}, trendsSince: "${since}") { groups { key { value } ${TRENDS} } total { ${TRENDS} } } }`;
  for (const [hours, what] of [
    [1, "1 h (60 samplings)"],
    [6, "6 h (360 samplings)"],
    [7 * 24, "7 d (168 hours)"],
    [30 * 24, "30 d (720 hours)"],
  ] as const) {
    await measure(`trends over ${what}, by pool and zone (cell rows)`, trendsReport("groupBy: [{ by: NODE_POOL }, { by: ZONE }]", ago(hours * 3_600_000)), Number(values["trend-queries"]));
  }
  for (const [hours, what] of [
    [1, "1 h (60 samplings)"],
    [6, "6 h (360 samplings)"],
    [7 * 24, "7 d (168 hours)"],
    [30 * 24, "30 d (720 hours)"],
  ] as const) {
    await measure(
      `trends over ${what}, by label node.kubernetes.io/capacity-type (cell rows)`,
      trendsReport(`groupBy: [{ by: LABEL, labelKey: "node.kubernetes.io/capacity-type" }]`, ago(hours * 3_600_000)),
      Number(values["trend-queries"]),
    );
  }
  for (const [hours, what] of [
    [1, "1 h (60 samplings)"],
    [6, "6 h (360 samplings)"],
    [7 * 24, "7 d (168 hours)"],
  ] as const) {
    await measure(
      `trends over ${what}, by label node-pool, Ready nodes (node rows)`,
      trendsReport(`groupBy: [{ by: LABEL, labelKey: "node-pool" }], filter: { ready: true }`, ago(hours * 3_600_000)),
      Number(values["trend-queries"]),
    );
  }
  console.log(`service RSS ${rssMiB(service.child.pid!).toFixed(0)} MiB at the end`);
} finally {
  await client.end();
  await stop(service.child);
  await stop(sim.child);
  await fresh.drop();
  rmSync(dir, { recursive: true, force: true });
}

/** Every node and cell: a sampling a minute for the last six hours, hourly rollups for the 30 days before the last two hours. */
async function seedTrends(): Promise<void> {
  const started = performance.now();
  const body = (await post(`{ nodes(first: 5000) { edges { node { name labels { key value } } } } }`)) as any;
  const nodes: { name: string; labels: Record<string, string> }[] = body.data.nodes.edges.map((e: any) => ({
    name: e.node.name,
    labels: Object.fromEntries(e.node.labels.map((l: any) => [l.key, l.value])),
  }));
  const names = nodes.map((n) => n.name);
  // The sampler's cells: nodes sharing pool, zone, instance type and role.
  const CELL: ReportGrouping[] = [{ by: "NODE_POOL" }, { by: "ZONE" }, { by: "INSTANCE_TYPE" }, { by: "ROLE" }];
  const cells = new Map<string, { values: (string | null)[]; labels: string; nodes: number }>();
  for (const node of nodes) {
    const values = CELL.map((g) => groupValue(g, "sim", node.labels));
    const labels = Object.fromEntries([...LABEL_KEYS].sort().map((key) => [key, node.labels[key] ?? null]));
    const key = JSON.stringify([...values, labels]);
    const cell = cells.get(key) ?? cells.set(key, { values, labels: JSON.stringify(labels), nodes: 0 }).get(key)!;
    cell.nodes++;
  }
  const cellArgs = [[...cells.keys()], ...[0, 1, 2, 3].map((i) => [...cells.values()].map((c) => c.values[i])), [...cells.values()].map((c) => c.labels), [...cells.values()].map((c) => c.nodes)];
  const lastMinute = Math.floor(Date.now() / 60_000) * 60_000;
  const lastHour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
  const raw = [new Date(lastMinute - 6 * 3_600_000), new Date(lastMinute)];
  const hourly = [new Date(lastHour - 30 * 86_400_000), new Date(lastHour - 2 * 3_600_000)];
  await client.query(
    `INSERT INTO node_usage_sample (cluster, node, at, cpu_usage, memory_usage, cpu_requests, memory_requests)
     SELECT 'sim', n, t, (random() * 4000)::int, random() * 16e9, (random() * 4000)::int, random() * 16e9
     FROM unnest($1::text[]) AS n, generate_series($2::timestamptz, $3::timestamptz, interval '1 minute') AS t`,
    [names, ...raw],
  );
  await client.query(
    `INSERT INTO node_usage_hourly (cluster, node, at, samples, cpu_usage, cpu_usage_peak, memory_usage, memory_usage_peak,
       cpu_requests, cpu_requests_peak, memory_requests, memory_requests_peak)
     SELECT 'sim', n, t, 60, (random() * 3000)::int, 4000, random() * 12e9, 16e9, (random() * 3000)::int, 4000, random() * 12e9, 16e9
     FROM unnest($1::text[]) AS n, generate_series($2::timestamptz, $3::timestamptz, interval '1 hour') AS t`,
    [names, ...hourly],
  );
  await client.query(
    `INSERT INTO cell_usage_sample (cluster, at, cell, pool, zone, instance_type, role, labels, nodes, cpu_usage, memory_usage, cpu_requests, memory_requests)
     SELECT 'sim', t, c.cell, c.pool, c.zone, c.instance_type, c.role, c.labels::jsonb, c.nodes, random() * 4000 * c.nodes, random() * 16e9 * c.nodes, random() * 4000 * c.nodes, random() * 16e9 * c.nodes
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[]) AS c(cell, pool, zone, instance_type, role, labels, nodes),
          generate_series($8::timestamptz, $9::timestamptz, interval '1 minute') AS t`,
    [...cellArgs, ...raw],
  );
  await client.query(
    `INSERT INTO cell_usage_hourly (cluster, at, cell, pool, zone, instance_type, role, labels, samples, cpu_usage, cpu_usage_peak, memory_usage, memory_usage_peak,
       cpu_requests, cpu_requests_peak, memory_requests, memory_requests_peak)
     SELECT 'sim', t, c.cell, c.pool, c.zone, c.instance_type, c.role, c.labels::jsonb, 60, random() * 3000 * c.nodes, 4000 * c.nodes, random() * 12e9 * c.nodes, 16e9 * c.nodes,
       random() * 3000 * c.nodes, 4000 * c.nodes, random() * 12e9 * c.nodes, 16e9 * c.nodes
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[]) AS c(cell, pool, zone, instance_type, role, labels, nodes),
          generate_series($8::timestamptz, $9::timestamptz, interval '1 hour') AS t`,
    [...cellArgs, ...hourly],
  );
  for (const table of ["node_usage_sample", "node_usage_hourly", "cell_usage_sample", "cell_usage_hourly"]) await client.query(`VACUUM ANALYZE ${table}`);
  const { rows } = await client.query(
    `SELECT (SELECT count(*) FROM node_usage_sample)::int AS raw, (SELECT count(*) FROM node_usage_hourly)::int AS hourly,
       pg_size_pretty(pg_total_relation_size('node_usage_sample') + pg_total_relation_size('node_usage_hourly')
         + pg_total_relation_size('cell_usage_sample') + pg_total_relation_size('cell_usage_hourly')) AS size`,
  );
  console.log(
    `seeded ${rows[0].raw.toLocaleString("en")} raw and ${rows[0].hourly.toLocaleString("en")} hourly node rows, and ${cells.size} cells' (${rows[0].size} in all) in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
}

async function measure(what: string, query: string, count: number): Promise<void> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < count + 3; i++) {
    const { ms, size } = await timed(query);
    if (i >= 3) times.push(ms); // the first few warm the JIT
    bytes = size;
  }
  times.sort((a, b) => a - b);
  console.log(`${what} (${(bytes / 1e3).toFixed(0)} kB JSON), n=${times.length}: p50 ${percentile(times, 50).toFixed(0)} ms, p99 ${percentile(times, 99).toFixed(0)} ms`);
}

async function timed(query: string): Promise<{ ms: number; size: number }> {
  const t = performance.now();
  const response = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query }) });
  const text = await response.text();
  const ms = performance.now() - t;
  const parsed = JSON.parse(text);
  if (parsed.errors) throw new Error(`bad answer: ${text.slice(0, 300)}`);
  return { ms, size: text.length };
}

async function post(query: string): Promise<unknown> {
  const response = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query }) });
  return response.json();
}
