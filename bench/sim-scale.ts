/**
 * Scale bench for the simulator: generate 5,000 nodes and ~150,000 pods in one
 * process, then time full LISTs over HTTP (JSON and Table), a field-selected
 * pod list, the fan-out of node changes to many watchers, and how soon a watch
 * ends after its timeoutSeconds; print memory.
 *
 *   node dist/bench/sim-scale.js [--nodes 5000] [--pods-per-node 30] [--watchers 200]
 */
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import { get } from "node:http";
import { startSimulator } from "../src/sim/index.js";

const { values } = parseArgs({ options: { nodes: { type: "string" }, "pods-per-node": { type: "string" }, watchers: { type: "string" } } });
const nodes = Number(values.nodes ?? 5000);
const podsPerNode = Number(values["pods-per-node"] ?? 30);
const watcherCount = Number(values.watchers ?? 200);

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MiB`;
const ms = (t: number) => `${t.toFixed(0)} ms`;

async function timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const r = await fn();
  console.log(`${label.padEnd(44)} ${ms(performance.now() - t0)}`);
  return r;
}

/** GET with a bare node:http client that only counts bytes, so the figure is the server's. */
function fetchBytes(url: string, accept = "application/json"): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { accept } }, (res) => {
      let n = 0;
      res.on("data", (c: Buffer) => (n += c.length));
      res.on("end", () => (res.statusCode === 200 ? resolve(n) : reject(new Error(`${url}: ${res.statusCode}`))));
    }).on("error", reject);
  });
}

const t0 = performance.now();
const sim = await startSimulator({ nodes, podsPerNode, seed: 1, churn: 0, clockSpeed: 0 });
const genMs = performance.now() - t0;
const store = sim.cluster.store;
console.log(`generated ${store.size("nodes")} nodes, ${store.size("pods")} pods, ${store.size("apps/deployments")} deployments, ${store.size("policy/poddisruptionbudgets")} PDBs`);
console.log(`${"time to generate and start".padEnd(44)} ${ms(genMs)}`);
global.gc?.();
const mem = process.memoryUsage();
console.log(`${"memory after generation".padEnd(44)} rss ${mb(mem.rss)}, heap used ${mb(mem.heapUsed)}`);

for (let i = 1; i <= 3; i++) {
  const bytes = await timed(`full node LIST (JSON) #${i}`, () => fetchBytes(`${sim.url}/api/v1/nodes`));
  if (i === 1) console.log(`  ${(bytes / 1024 / 1024).toFixed(1)} MiB`);
}
await timed("full node LIST (Table, kubectl get nodes)", () => fetchBytes(`${sim.url}/api/v1/nodes`, "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"));
await timed("node LIST limit=500 (first page)", () => fetchBytes(`${sim.url}/api/v1/nodes?limit=500`));
for (let i = 1; i <= 2; i++) {
  const bytes = await timed(`full pod LIST all namespaces (JSON) #${i}`, () => fetchBytes(`${sim.url}/api/v1/pods`));
  if (i === 1) console.log(`  ${(bytes / 1024 / 1024).toFixed(1)} MiB`);
}
const node = sim.cluster.nodeNames()[100]!;
await timed("pods on one node (fieldSelector spec.nodeName)", () => fetchBytes(`${sim.url}/api/v1/pods?fieldSelector=spec.nodeName=${node}`));
await timed("metrics.k8s.io NodeMetrics LIST", () => fetchBytes(`${sim.url}/apis/metrics.k8s.io/v1beta1/nodes`));

// Watch fan-out: many watchers on nodes, 1,000 node changes.
const rv = store.resourceVersion;
let received = 0;
const requests: ReturnType<typeof get>[] = [];
await Promise.all(
  Array.from(
    { length: watcherCount },
    () =>
      new Promise<void>((resolve) => {
        const req = get(`${sim.url}/api/v1/nodes?watch=1&resourceVersion=${rv}`, (res) => {
          res.on("data", (c: Buffer) => {
            for (let i = c.indexOf(10); i >= 0; i = c.indexOf(10, i + 1)) received++;
          });
          res.on("error", () => undefined);
          resolve();
        });
        req.on("error", () => undefined);
        requests.push(req);
      }),
  ),
);
const changes = 1000;
const names = sim.cluster.nodeNames();
const tw = performance.now();
// Each node flips to True and back, so every call is a real change.
for (let i = 0; i < changes; i++) sim.cluster.setNodeCondition(names[Math.floor(i / 2) % names.length]!, "DiskPressure", i % 2 ? "False" : "True");
const expected = changes * watcherCount;
const deadline = Date.now() + 60_000;
while (received < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
const fanMs = performance.now() - tw;
console.log(`${`${changes} node changes to ${watcherCount} watchers`.padEnd(44)} ${ms(fanMs)} (${received}/${expected} events, ${((received / fanMs) * 1000).toFixed(0)} events/s)`);
for (const req of requests) req.destroy();

// Watch timeoutSeconds: how long after the time asked the stream ends, as a ratio to it.
for (const seconds of [1, 2]) {
  const tt = performance.now();
  await fetchBytes(`${sim.url}/api/v1/nodes?watch=1&resourceVersion=${store.resourceVersion}&allowWatchBookmarks=true&timeoutSeconds=${seconds}`);
  const took = performance.now() - tt;
  console.log(`${`watch with timeoutSeconds=${seconds} ends after`.padEnd(44)} ${ms(took)} (${(took / (seconds * 1000)).toFixed(2)}x the time asked)`);
}

const end = process.memoryUsage();
console.log(`${"memory at end".padEnd(44)} rss ${mb(end.rss)}, heap used ${mb(end.heapUsed)}`);
await sim.stop();
