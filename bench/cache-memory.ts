// What the watch cache costs per object, and what turning the API's JSON into it costs.
// In one process: a simulated cluster (default 1,000 nodes, 30,000 pods), a ClusterCache synced
// from it over HTTP, and the heap measured after full collections before and after: bytes per
// node and per pod kept (beside the bytes of the same objects as the API serves them). Then,
// over every stored pod's JSON: JSON.parse per pod beside stripPod (the transform to the
// cached shape) per pod.
// Usage: npm run build && node dist/bench/cache-memory.js [-- --nodes 1000 --json FILE]
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Writable } from "node:stream";
import { parseArgs } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { ClusterCache } from "../src/cluster/cluster-cache.js";
import { KubeClient } from "../src/cluster/kube-client.js";
import { stripNode, stripPod } from "../src/cluster/strip.js";
import { createLogger } from "../src/log/logger.js";
import { startSimulator } from "../src/sim/index.js";
import { BenchReport, median } from "./support.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const heap = () => {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
};

const { values } = parseArgs({ options: { nodes: { type: "string", default: "1000" }, json: { type: "string" } } });
const nodes = Number(values.nodes);
const report = new BenchReport("cache-memory", { nodes, podsPerNode: 30 });
const sim = await startSimulator({ port: 0, nodes, podsPerNode: 30, seed: 1, churn: 0, clockSpeed: 0 });
const store = sim.cluster.store;
const podEntries = [...store.values("pods")];
const nodeEntries = [...store.values("nodes")];
const apiBytes = (entries: { bytes: Buffer }[]) => entries.reduce((sum, e) => sum + e.bytes.length, 0) / entries.length;
try {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(sim.kubeconfig());
  const quiet = createLogger("error", new Writable({ write: (_c, _e, done) => done() }));
  const before = heap();
  const cache = new ClusterCache({ name: "sim", client: new KubeClient(kubeConfig), logger: quiet, metricsIntervalMs: 3_600_000 });
  cache.start();
  while (!cache.status().synced) await new Promise((r) => setTimeout(r, 50));
  // Nodes alone first: a cache without pods, measured the same way.
  const total = heap() - before;
  await cache.stop();
  const nodesOnly: unknown[] = [];
  const beforeNodes = heap();
  for (const e of nodeEntries) nodesOnly.push(stripNode("sim", JSON.parse(e.json)));
  const perNode = (heap() - beforeNodes) / nodeEntries.length;
  const perPod = (total - perNode * nodeEntries.length) / podEntries.length;
  report.add("cache bytes per node", perNode, "B", { figure: "its JSON as the API serves it", value: apiBytes(nodeEntries) });
  report.add("cache bytes per pod (with its indexes)", perPod, "B", { figure: "its JSON as the API serves it", value: apiBytes(podEntries) });
  report.add("cache for the whole cluster", total / 2 ** 20, "MiB");

  // Parse and transform, per pod: best of a few passes over every pod.
  const texts = podEntries.map((e) => e.json);
  const parseRuns: number[] = [];
  const stripRuns: number[] = [];
  for (let run = 0; run < 5; run++) {
    let t = performance.now();
    const parsed = texts.map((text) => JSON.parse(text));
    parseRuns.push(((performance.now() - t) * 1000) / texts.length);
    t = performance.now();
    for (const raw of parsed) stripPod("sim", raw);
    stripRuns.push(((performance.now() - t) * 1000) / texts.length);
  }
  report.add("stripPod (transform to the cached shape) per pod", median(stripRuns), "µs", { figure: "JSON.parse per pod", value: median(parseRuns) });
  nodesOnly.length = 0;
} finally {
  report.write(values.json);
  await sim.stop();
}
