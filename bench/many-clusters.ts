// Many clusters in one replica: for each count (default 10 and 20), that many simulated clusters
// of 500 nodes and 30 pods per node, each in its own process, and one node-inventory watching
// them all. Measures the first sync of every cluster, the service's RSS after it, the query for
// every node of every cluster and a capacity report grouped by cluster (p50), each beside the
// same figure for ONE cluster holding as many nodes (10 × 500 beside 1 × 5,000: is a fleet split
// into clusters dearer than the same fleet in one?), and prints one cluster of 500 first, so the
// cost per cluster reads off too.
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

/** Starts one simulator of `nodes` nodes in its own process (it generates its cluster first); its kubeconfig. */
async function simulator(name: string, nodes: number, seed: number): Promise<{ child: ChildProcess; kubeconfig: string }> {
  const kubeconfig = join(dir, name);
  const args = ["sim", "--name", name, "--nodes", String(nodes), "--pods-per-node", values["pods-per-node"]!, "--seed", String(seed), "--kubeconfig-out", kubeconfig];
  // A simulator holds its whole cluster as objects: 5,000 nodes and 150,000 pods need more than V8's default heap.
  const sim = await spawnUntil(args, /https?:\/\/\S+/, {}, [`--max-old-space-size=${Math.max(2048, Math.ceil(nodes / 5000) * 4096)}`]);
  return { child: sim.child, kubeconfig };
}

/** Starts simulators of `perCluster` nodes until there are `count`, one after another. */
async function simulators(count: number): Promise<void> {
  while (kubeconfigs.length < count) {
    const i = kubeconfigs.length;
    const sim = await simulator(`c${i}`, perCluster, i + 1);
    sims.push(sim.child);
    kubeconfigs.push(sim.kubeconfig);
  }
}

interface Run {
  syncS: number;
  rss: number;
  queryMs: number;
  reportMs: number;
}

/** One service watching the clusters of these kubeconfigs, `total` nodes in all: sync, settled RSS, query and report p50. */
async function measure(clusterKubeconfigs: string[], total: number): Promise<Run> {
  const count = clusterKubeconfigs.length;
  const started = performance.now();
  const service = await spawnUntil(["serve", "--port", "0", "--data-dir", "memory", "--kubeconfig", clusterKubeconfigs.join(":")], /"url":"([^"]+)","graphql"/);
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
    const queryMs = await timed(
      `{ nodes(first: 5000) { totalCount edges { node { cluster name ready allocatable { cpuMillicores memoryBytes } requests { cpuMillicores memoryBytes } } } } }`,
      (b) => b.data.nodes.totalCount === total,
    );
    const reportMs = await timed(
      `{ capacityReport(groupBy: [{ by: CLUSTER }]) { groups { key { value } nodeCount cpu { allocatable requests } } total { nodeCount } } }`,
      (b) => b.data.capacityReport.total.nodeCount === total,
    );
    return { syncS, rss, queryMs, reportMs };
  } finally {
    await stop(service.child);
  }
}

try {
  await simulators(1);
  const one = await measure(kubeconfigs.slice(0, 1), perCluster);
  report.add(`1 cluster of ${perCluster} nodes: first sync`, one.syncS, "s");
  report.add(`1 cluster of ${perCluster} nodes: service RSS settled`, one.rss, "MiB");
  report.add(`1 cluster of ${perCluster} nodes: query of all nodes, p50`, one.queryMs, "ms");
  report.add(`1 cluster of ${perCluster} nodes: capacityReport by cluster, p50`, one.reportMs, "ms");
  for (const count of counts) {
    const total = count * perCluster;
    await simulators(count);
    const run = await measure(kubeconfigs.slice(0, count), total);
    // The peer: the same nodes and pods in one cluster, its simulator alone beside the service (the others idle).
    const single = await simulator(`one-${total}`, total, 1);
    let peer: Run;
    try {
      peer = await measure([single.kubeconfig], total);
    } finally {
      await stop(single.child);
    }
    const as = (value: number) => ({ figure: `1 cluster of ${total} nodes`, value });
    report.add(`${count} clusters × ${perCluster} nodes: first sync of all`, run.syncS, "s", as(peer.syncS));
    report.add(`${count} clusters: service RSS settled`, run.rss, "MiB", as(peer.rss));
    report.add(`${count} clusters: query of all nodes (first 5000), p50`, run.queryMs, "ms", as(peer.queryMs));
    report.add(`${count} clusters: capacityReport by cluster, p50`, run.reportMs, "ms", as(peer.reportMs));
  }
} finally {
  // The processes first: a report that cannot be written must not leave the simulators running.
  await Promise.all(sims.map((s) => stop(s)));
  rmSync(dir, { recursive: true, force: true });
  report.write(values.json);
}
