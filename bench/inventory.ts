// The live inventory at scale: a simulated 5,000-node, 150,000-pod cluster in its own process,
// node-inventory in another. Each figure is printed beside its floor or peer, measured in the
// same run: the first sync beside a raw GET of every node and pod (the transfer floor); the
// query for all nodes (name, labels, conditions, nodeInfo, allocatable, requests, usage) beside
// JSON.stringify of that same answer in this process (the serialisation floor) and beside
// `kubectl get nodes -o json` against the same simulator; the service's memory after sync and
// right after the queries.
// The service runs what it ships with by default, an embedded in-memory PGlite; with
// --postgres it runs on a fresh database of the PostgreSQL at BENCH_POSTGRES_URL (default
// postgresql://postgres@127.0.0.1:5432/postgres) instead, as a deployment does; the report says which.
// Usage: npm run bench:inventory [-- --nodes 5000 --queries 30 --kubectl-runs 5 --postgres --json FILE]
// BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" passes Node options to the service.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { promisify } from "node:util";
import { BenchReport, cpuSeconds, freshPostgres, median, percentile, rssMiB, rssSampler, spawnUntil, stop, timedGet } from "./support.js";

const run = promisify(execFile);
const { values } = parseArgs({
  options: {
    nodes: { type: "string", default: "5000" },
    "pods-per-node": { type: "string", default: "30" },
    queries: { type: "string", default: "30" },
    "kubectl-runs": { type: "string", default: "5" },
    postgres: { type: "boolean", default: false },
    json: { type: "string" },
  },
});
const nodes = Number(values.nodes);
const database = values.postgres ? "PostgreSQL" : "in-memory PGlite";
const report = new BenchReport("inventory", { nodes, podsPerNode: Number(values["pods-per-node"]), queries: Number(values.queries), database });
const QUERY = `{ nodes(first: ${Math.max(nodes, 1)}) { totalCount edges { node {
  name labels { key value } conditions { type status reason lastTransitionTime }
  nodeInfo { kubeletVersion containerRuntime containerRuntimeRelease osImage kernelVersion }
  allocatable { cpuMillicores memoryBytes pods } requests { cpuMillicores memoryBytes }
  usage { cpuMillicores memoryBytes cpuPercent memoryPercent } } } } }`;

const dir = mkdtempSync(join(tmpdir(), "ni-bench-inventory-"));
const kubeconfig = join(dir, "kubeconfig");
let started = performance.now();
const sim = await spawnUntil(["sim", "--nodes", String(nodes), "--pods-per-node", values["pods-per-node"]!, "--seed", "1", "--kubeconfig-out", kubeconfig], /https?:\/\/\S+/, {}, [
  "--max-old-space-size=4096",
]);
const simUrl = sim.match[0]!;
console.log(`simulator: ${nodes} nodes ready in ${((performance.now() - started) / 1000).toFixed(1)} s (pid ${sim.child.pid}, ${rssMiB(sim.child.pid!).toFixed(0)} MiB)`);

// The transfer floor: every node and pod as the apiserver serves them, read and thrown away.
const auth = { authorization: "Bearer simulator" };
const podsGet: number[] = [];
const nodesGet: number[] = [];
let podBytes = 0;
for (let i = 0; i < 3; i++) {
  const pods = await timedGet(`${simUrl}/api/v1/pods`, auth);
  podsGet.push(pods.ms);
  podBytes = pods.bytes;
  nodesGet.push((await timedGet(`${simUrl}/api/v1/nodes`, auth)).ms);
}
const transferFloorMs = median(podsGet) + median(nodesGet);
console.log(`raw GET /api/v1/pods ${(podBytes / 1e6).toFixed(0)} MB: ${median(podsGet).toFixed(0)} ms; /api/v1/nodes: ${median(nodesGet).toFixed(0)} ms`);

started = performance.now();
const pg = values.postgres ? await freshPostgres() : undefined;
const service = await spawnUntil(
  ["serve", "--port", "0", "--kubeconfig", kubeconfig, ...(pg ? [] : ["--data-dir", "memory"])],
  /"url":"([^"]+)","graphql"/,
  pg ? { DATABASE_URL: pg.url } : {},
  process.env.BENCH_SERVICE_NODE_ARGS?.split(" ").filter(Boolean) ?? [],
);
console.log(`service on ${database}`);
const url = service.match[1]!;
try {
  const syncPeak = rssSampler(service.child.pid!);
  let synced = false;
  while (!synced) {
    const body = (await post(`{ clusters { synced metricsAvailable nodeCount } }`)) as any;
    synced = body.data.clusters[0].synced && body.data.clusters[0].metricsAvailable;
    if (!synced) await new Promise((r) => setTimeout(r, 100));
  }
  const syncMs = performance.now() - started;
  report.add("first sync of nodes and pods (spawn to synced)", syncMs / 1000, "s", { figure: "transfer floor: raw GET of all pods and nodes", value: transferFloorMs / 1000 });
  console.log(`  (${cpuSeconds(service.child.pid!).toFixed(1)} CPU s)`);
  report.add("service peak RSS during sync", syncPeak.stop(), "MiB");
  // The sync parses ~450 MB of JSON; give V8 a moment to collect and return what it no longer needs.
  await new Promise((r) => setTimeout(r, 10_000));
  report.add("service RSS settled, 10 s after sync", rssMiB(service.child.pid!), "MiB");

  const queryTimes: number[] = [];
  const floorTimes: number[] = [];
  let bytes = 0;
  const queryPeak = rssSampler(service.child.pid!, 20);
  for (let i = 0; i < Number(values.queries) + 3; i++) {
    const t = performance.now();
    const response = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: QUERY }) });
    const text = await response.text();
    const elapsed = performance.now() - t;
    const parsed = JSON.parse(text);
    if (parsed.errors || parsed.data.nodes.totalCount !== nodes) throw new Error(`bad answer: ${text.slice(0, 300)}`);
    const f = performance.now();
    JSON.stringify(parsed);
    const floor = performance.now() - f;
    if (i >= 3) {
      // the first few warm the JIT
      queryTimes.push(elapsed);
      floorTimes.push(floor);
    }
    bytes = text.length;
  }
  const rssAfterQueries = rssMiB(service.child.pid!);
  const queryPeakRss = queryPeak.stop();
  queryTimes.sort((a, b) => a - b);

  const kubectlTimes: number[] = [];
  for (let i = 0; i < Number(values["kubectl-runs"]); i++) {
    const t = performance.now();
    await run("kubectl", ["--kubeconfig", kubeconfig, "get", "nodes", "-o", "json"], { maxBuffer: 1024 * 1024 * 1024 });
    kubectlTimes.push(performance.now() - t);
  }

  const p50 = percentile(queryTimes, 50);
  console.log(`query for all ${nodes} nodes: ${(bytes / 1e6).toFixed(1)} MB JSON, n=${queryTimes.length}, p99 ${percentile(queryTimes, 99).toFixed(0)} ms`);
  report.add(`query for all ${nodes} nodes, p50`, p50, "ms", { figure: "floor: JSON.stringify of the same answer in one process, p50", value: median(floorTimes) });
  const k50 = median(kubectlTimes);
  report.add(`kubectl get nodes -o json, p50 (n=${kubectlTimes.length})`, k50, "ms", { figure: "our query p50", value: p50 });
  report.add("service RSS right after the queries", rssAfterQueries, "MiB");
  report.add("service peak RSS during the queries", queryPeakRss, "MiB");
} finally {
  // The processes first: a report that cannot be written must not leave the service running.
  await stop(service.child);
  await stop(sim.child);
  await pg?.drop();
  rmSync(dir, { recursive: true, force: true });
  report.write(values.json);
}

async function post(query: string): Promise<unknown> {
  const response = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query }) });
  return response.json();
}
