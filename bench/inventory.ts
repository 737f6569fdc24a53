// The live inventory at scale: a simulated 5,000-node, 150,000-pod cluster in its own process,
// node-inventory in another. Measures the latency of a query for all nodes (name, labels,
// conditions, nodeInfo, allocatable, requests, usage) beside `kubectl get nodes -o json`
// against the same simulator, and the service's memory after sync.
// Usage: npm run bench:inventory [-- --nodes 5000 --queries 30 --kubectl-runs 5]
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { promisify } from "node:util";
import { cpuSeconds, percentile, rssMiB, spawnUntil, stop } from "./support.js";

const run = promisify(execFile);
const { values } = parseArgs({
  options: {
    nodes: { type: "string", default: "5000" },
    "pods-per-node": { type: "string", default: "30" },
    queries: { type: "string", default: "30" },
    "kubectl-runs": { type: "string", default: "5" },
  },
});
const nodes = Number(values.nodes);
const QUERY = `{ nodes(first: ${Math.max(nodes, 1)}) { totalCount edges { node {
  name labels { key value } conditions { type status reason lastTransitionTime }
  nodeInfo { kubeletVersion containerRuntime containerRuntimeRelease osImage kernelVersion }
  allocatable { cpuMillicores memoryBytes pods } requests { cpuMillicores memoryBytes }
  usage { cpuMillicores memoryBytes cpuPercent memoryPercent } } } } }`;

const dir = mkdtempSync(join(tmpdir(), "ni-bench-inventory-"));
const kubeconfig = join(dir, "kubeconfig");
let started = performance.now();
const sim = await spawnUntil(
  ["sim", "--nodes", String(nodes), "--pods-per-node", values["pods-per-node"]!, "--seed", "1", "--kubeconfig-out", kubeconfig],
  /https?:\/\/\S+/,
  {},
  ["--max-old-space-size=4096"],
);
console.log(`simulator: ${nodes} nodes ready in ${((performance.now() - started) / 1000).toFixed(1)} s (pid ${sim.child.pid}, ${rssMiB(sim.child.pid!).toFixed(0)} MiB)`);

started = performance.now();
const service = await spawnUntil(["serve", "--port", "0", "--data-dir", "memory", "--kubeconfig", kubeconfig], /"url":"([^"]+)","graphql"/);
const url = service.match[1]!;
try {
  let synced = false;
  while (!synced) {
    const body = (await post(`{ clusters { synced metricsAvailable nodeCount } }`)) as any;
    synced = body.data.clusters[0].synced && body.data.clusters[0].metricsAvailable;
    if (!synced) await new Promise((r) => setTimeout(r, 100));
  }
  const syncSeconds = (performance.now() - started) / 1000;
  const cpuAfterSync = cpuSeconds(service.child.pid!);
  console.log(`service: synced ${nodes} nodes and their pods in ${syncSeconds.toFixed(1)} s (${cpuAfterSync.toFixed(1)} CPU s), RSS ${rssMiB(service.child.pid!).toFixed(0)} MiB at sync`);
  // The sync parses ~450 MB of JSON; give V8 a moment to collect and return what it no longer needs.
  await new Promise((r) => setTimeout(r, 10_000));
  console.log(`service: RSS ${rssMiB(service.child.pid!).toFixed(0)} MiB 10 s after sync`);

  const queryTimes: number[] = [];
  let bytes = 0;
  for (let i = 0; i < Number(values.queries) + 3; i++) {
    const t = performance.now();
    const response = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: QUERY }) });
    const text = await response.text();
    const elapsed = performance.now() - t;
    const parsed = JSON.parse(text);
    if (parsed.errors || parsed.data.nodes.totalCount !== nodes) throw new Error(`bad answer: ${text.slice(0, 300)}`);
    if (i >= 3) queryTimes.push(elapsed); // the first few warm the JIT
    bytes = text.length;
  }
  queryTimes.sort((a, b) => a - b);
  const rssAfterQueries = rssMiB(service.child.pid!);

  const kubectlTimes: number[] = [];
  for (let i = 0; i < Number(values["kubectl-runs"]); i++) {
    const t = performance.now();
    await run("kubectl", ["--kubeconfig", kubeconfig, "get", "nodes", "-o", "json"], { maxBuffer: 1024 * 1024 * 1024 });
    kubectlTimes.push(performance.now() - t);
  }
  kubectlTimes.sort((a, b) => a - b);

  const p50 = percentile(queryTimes, 50);
  const p99 = percentile(queryTimes, 99);
  const k50 = percentile(kubectlTimes, 50);
  console.log(`query for all ${nodes} nodes (${(bytes / 1e6).toFixed(1)} MB JSON), n=${queryTimes.length}: p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms`);
  console.log(`kubectl get nodes -o json, n=${kubectlTimes.length}: p50 ${k50.toFixed(0)} ms, min ${kubectlTimes[0]!.toFixed(0)} ms`);
  console.log(`ratio kubectl p50 / query p50: ${(k50 / p50).toFixed(1)}x`);
  console.log(`service RSS after sync ${rssAfterQueries.toFixed(0)} MiB (after the queries)`);
} finally {
  await stop(service.child);
  await stop(sim.child);
  rmSync(dir, { recursive: true, force: true });
}

async function post(query: string): Promise<unknown> {
  const response = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query }) });
  return response.json();
}

