// Many clusters in one replica: for each count (default 10 and 20), that many simulated clusters
// of 500 nodes and 30 pods per node, each in its own process, and one node-inventory watching
// them all. Measures the first sync of every cluster, the service's RSS after it, the query for
// every node of every cluster and a capacity report grouped by cluster (p50), each beside the
// same figure for one cluster of the same size measured first in the same run, so the cost per
// cluster reads as a ratio.
// Usage: npm run build && node dist/bench/many-clusters.js [-- --counts 10,20 --nodes-per-cluster 500 --queries 10 --json FILE]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { ChildProcess } from "node:child_process";
import { BenchReport, median, rssMiB, spawnUntil, stop } from "./support.js";

const { values } = parseArgs({
  options: {
    counts: { type: "string", default: "10,20" },
    "nodes-per-cluster": { type: "string", default: "500" },
    "pods-per-node": { type: "string", default: "30" },
    queries: { type: "string", default: "10" },
    json: { type: "string" },
  },
});
const counts = values.counts!.split(",").map(Number);
const perCluster = Number(values["nodes-per-cluster"]);
const report = new BenchReport("many-clusters", { counts, nodesPerCluster: perCluster, podsPerNode: Number(values["pods-per-node"]) });
const dir = mkdtempSync(join(tmpdir(), "ni-bench-clusters-"));
const sims: ChildProcess[] = [];
const kubeconfigs: string[] = [];

/** Starts simulators until there are `count`, one after another (each generates its cluster first). */
async function simulators(count: number): Promise<void> {
  while (kubeconfigs.length < count) {
    const i = kubeconfigs.length;
    const kubeconfig = join(dir, `c${i}`);
    const sim = await spawnUntil(["sim", "--name", `c${i}`, "--nodes", String(perCluster), "--pods-per-node", values["pods-per-node"]!, "--seed", String(i + 1), "--kubeconfig-out", kubeconfig], /https?:\/\/\S+/);
    sims.push(sim.child);
    kubeconfigs.push(kubeconfig);
  }
}

interface Run {
  syncS: number;
  rss: number;
  queryMs: number;
  reportMs: number;
}

/** One service watching the first `count` clusters: sync, settled RSS, query and report p50. */
async function measure(count: number): Promise<Run> {
  await simulators(count);
  const started = performance.now();
  const service = await spawnUntil(["serve", "--port", "0", "--data-dir", "memory", "--kubeconfig", kubeconfigs.slice(0, count).join(":")], /"url":"([^"]+)","graphql"/);
  const url = service.match[1]!;
  const post = async (query: string) => (await (await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query }) })).json()) as any;
  try {
    for (;;) {
      const clusters = (await post("{ clusters { synced } }")).data.clusters as { synced: boolean }[];
      if (clusters.length === count && clusters.every((c) => c.synced)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const syncS = (performance.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, 10_000));
    const rss = rssMiB(service.child.pid!);
    const timed = async (query: string, check: (body: any) => boolean) => {
      const times: number[] = [];
      for (let i = 0; i < Number(values.queries) + 2; i++) {
        const t = performance.now();
        const body = await post(query);
        if (body.errors || !check(body)) throw new Error(`bad answer: ${JSON.stringify(body).slice(0, 300)}`);
        if (i >= 2) times.push(performance.now() - t);
      }
      return median(times);
    };
    const total = count * perCluster;
    const queryMs = await timed(`{ nodes(first: 5000) { totalCount edges { node { cluster name ready allocatable { cpuMillicores memoryBytes } requests { cpuMillicores memoryBytes } } } } }`, (b) => b.data.nodes.totalCount === total);
    const reportMs = await timed(`{ capacityReport(groupBy: [{ by: CLUSTER }]) { groups { key { value } nodeCount cpu { allocatable requests } } total { nodeCount } } }`, (b) => b.data.capacityReport.total.nodeCount === total);
    return { syncS, rss, queryMs, reportMs };
  } finally {
    await stop(service.child);
  }
}

try {
  const one = await measure(1);
  report.add(`1 cluster of ${perCluster} nodes: first sync`, one.syncS, "s");
  report.add(`1 cluster: service RSS settled`, one.rss, "MiB");
  for (const count of counts) {
    const run = await measure(count);
    report.add(`${count} clusters × ${perCluster} nodes: first sync of all`, run.syncS, "s", { figure: "1 cluster", value: one.syncS });
    report.add(`${count} clusters: service RSS settled`, run.rss, "MiB", { figure: "1 cluster", value: one.rss });
    report.add(`${count} clusters: query of all nodes (first 5000), p50`, run.queryMs, "ms", { figure: "1 cluster", value: one.queryMs });
    report.add(`${count} clusters: capacityReport by cluster, p50`, run.reportMs, "ms", { figure: "1 cluster", value: one.reportMs });
  }
} finally {
  report.write(values.json);
  await Promise.all(sims.map((s) => stop(s)));
  rmSync(dir, { recursive: true, force: true });
}
