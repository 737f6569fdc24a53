// The moments a user meets, not only the repeated query: the all-node query of bench/inventory
// at its first sighting, back to back, spaced by a metrics sample, right after `synced` while
// the first history reconcile writes, and while 1% of the nodes change every second; and the
// service's event-loop delay (perf_hooks.monitorEventLoopDelay, as /metrics'
// nodejs_eventloop_lag_p99_seconds reports it, reset at each scrape) and `{ __typename }` p99
// through the first sync, the first reconcile, a relist of every pod and a burst of 1,000 node
// changes. Each query figure is beside its floor: JSON.stringify of the same answer in this
// process, measured in the same run.
// Usage: npm run bench:moments [-- --nodes 5000 --service-bin OTHER/bin/node-inventory.js --json FILE]
// BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" passes Node options to the service.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BIN, BenchReport, median, percentile, spawnUntil, stop } from "./support.js";

const { values } = parseArgs({
  options: {
    nodes: { type: "string", default: "5000" },
    "pods-per-node": { type: "string", default: "30" },
    "service-bin": { type: "string", default: BIN },
    json: { type: "string" },
  },
});
const nodes = Number(values.nodes);
const report = new BenchReport("moments", { nodes, podsPerNode: Number(values["pods-per-node"]), serviceBin: values["service-bin"] });
const FIELDS = `name labels { key value } conditions { type status reason lastTransitionTime }
  nodeInfo { kubeletVersion containerRuntime containerRuntimeRelease osImage kernelVersion }
  allocatable { cpuMillicores memoryBytes pods } requests { cpuMillicores memoryBytes }
  usage { cpuMillicores memoryBytes cpuPercent memoryPercent timestamp }`;
const query = (tag: string) => `{ nodes(first: ${Math.max(nodes, 1)}) { totalCount edges { node { ${FIELDS} } } } } # ${tag}`;
const SIM_AUTH = { authorization: "Bearer simulator" };

const dir = mkdtempSync(join(tmpdir(), "ni-bench-moments-"));
const kubeconfig = join(dir, "kubeconfig");
const sim = await spawnUntil(["sim", "--nodes", String(nodes), "--pods-per-node", values["pods-per-node"]!, "--seed", "1", "--kubeconfig-out", kubeconfig], /https?:\/\/\S+/, {}, [
  "--max-old-space-size=4096",
]);
const simUrl = sim.match[0]!;
const service = await spawnUntil(
  ["serve", "--port", "0", "--kubeconfig", kubeconfig, "--data-dir", "memory"],
  /"url":"([^"]+)","graphql"/,
  {},
  process.env.BENCH_SERVICE_NODE_ARGS?.split(" ").filter(Boolean) ?? [],
  values["service-bin"],
);
const url = service.match[1]!;

async function post(text: string): Promise<any> {
  const response = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: text }) });
  return response.json();
}

/** One all-node query, timed by the client including reading the body, beside JSON.stringify of the same answer. */
async function timedQuery(text: string): Promise<{ ms: number; floorMs: number }> {
  const t = performance.now();
  const response = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: text }) });
  const body = await response.text();
  const ms = performance.now() - t;
  const parsed = JSON.parse(body);
  if (parsed.errors || parsed.data.nodes.totalCount !== nodes) throw new Error(`bad answer: ${body.slice(0, 300)}`);
  const f = performance.now();
  JSON.stringify(parsed);
  return { ms, floorMs: performance.now() - f };
}

function addQueries(figure: string, runs: { ms: number; floorMs: number }[]): void {
  const sorted = runs.map((r) => r.ms).sort((a, b) => a - b);
  report.add(`${figure}, p50 of ${runs.length} (max ${Math.round(sorted.at(-1)!)} ms)`, median(sorted), "ms", {
    figure: "floor: JSON.stringify of the same answer",
    value: median(runs.map((r) => r.floorMs)),
  });
}

/** The service's event-loop delay since the last scrape, in ms (p99, max): the scrape resets its histogram. */
async function eventLoopDelay(): Promise<{ p99: number; max: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)`, "m").exec(text)?.[1] ?? NaN) * 1000;
  return { p99: read("nodejs_eventloop_lag_p99_seconds"), max: read("nodejs_eventloop_lag_max_seconds") };
}

/** `{ __typename }` sent back to back until stopped; returns their p99 in ms. */
function typenamePinger(): { stop(): Promise<number> } {
  const times: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t = performance.now();
      await post("{ __typename }").catch(() => undefined);
      times.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return percentile(
        times.sort((a, b) => a - b),
        99,
      );
    },
  };
}

async function through(what: string, work: () => Promise<void>): Promise<void> {
  await eventLoopDelay();
  const pinger = typenamePinger();
  await work();
  const typename = await pinger.stop();
  const delay = await eventLoopDelay();
  report.add(`event-loop delay p99 through ${what} (max ${Math.round(delay.max)} ms)`, delay.p99, "ms", { figure: "the issue's bound", value: 20 });
  report.add(`{ __typename } p99 through ${what}`, typename, "ms", { figure: "the issue's bound", value: 50 });
}

async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((r) => setTimeout(r, 100));
}

const nodeNames = async (): Promise<string[]> => ((await (await fetch(`${simUrl}/api/v1/nodes`, { headers: SIM_AUTH })).json()) as any).items.map((n: any) => n.metadata.name);
async function labelNodes(names: string[], value: string): Promise<void> {
  await Promise.all(
    names.map((name) =>
      fetch(`${simUrl}/api/v1/nodes/${name}`, {
        method: "PATCH",
        headers: { ...SIM_AUTH, "content-type": "application/merge-patch+json" },
        body: JSON.stringify({ metadata: { labels: { "bench-churn": value } } }),
      }).then((r) => r.arrayBuffer()),
    ),
  );
}

try {
  const synced = async () => {
    const c = (await post("{ clusters { synced metricsAvailable } }")).data?.clusters[0];
    return Boolean(c?.synced && c.metricsAvailable);
  };
  await through("the first sync", () => until(synced));
  // Right after synced: the first history reconcile of every node is being written.
  const duringReconcile = await timedQuery(query("during reconcile"));
  report.add("the query right after synced, while the first history reconcile writes (its first sighting)", duringReconcile.ms, "ms", {
    figure: "floor: JSON.stringify of the same answer",
    value: duringReconcile.floorMs,
  });
  await through("the first history reconcile", () =>
    until(async () => {
      const h = (await post("{ service { history { recordedTransitions pendingWrites } } }")).data?.service.history;
      return h?.recordedTransitions > 0 && h.pendingWrites === 0;
    }),
  );

  const cold: { ms: number; floorMs: number }[] = [];
  for (let i = 0; i < 3; i++) cold.push(await timedQuery(query(`cold ${i}`)));
  addQueries("cold: a document's first sighting", cold);
  const repeated: { ms: number; floorMs: number }[] = [];
  for (let i = 0; i < 10; i++) repeated.push(await timedQuery(query("repeated")));
  addQueries("the same document back to back", repeated);

  // Spaced: a metrics sample (every node's usage changed) between two sendings.
  const sampleOf = async () => (await post(`{ nodes(first: 1) { edges { node { usage { timestamp cpuMillicores } } } } }`)).data.nodes.edges[0].node.usage;
  const spaced: { ms: number; floorMs: number }[] = [];
  for (let i = 0; i < 3; i++) {
    const before = JSON.stringify(await sampleOf());
    await until(async () => JSON.stringify(await sampleOf()) !== before);
    spaced.push(await timedQuery(query("repeated")));
  }
  addQueries("spaced: a metrics sample between sendings", spaced);

  const names = await nodeNames();
  const onePercent = Math.max(1, Math.round(names.length / 100));
  const churned: { ms: number; floorMs: number }[] = [];
  for (let second = 0; second < 8; second++) {
    const started = performance.now();
    await labelNodes(names.slice((second * onePercent) % names.length, ((second * onePercent) % names.length) + onePercent), String(second));
    churned.push(await timedQuery(query("repeated")));
    await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (performance.now() - started))));
  }
  addQueries("after 1% of the nodes changed in the last second", churned);

  await through("a burst of 1,000 node changes", async () => {
    const burst = names.slice(0, Math.min(1000, names.length));
    await labelNodes(burst, "burst");
    await until(async () => (await post(`{ nodes(filter: { labelSelector: "bench-churn=burst" }, first: 1) { totalCount } }`)).data?.nodes.totalCount === burst.length);
  });
} finally {
  await stop(service.child);
  await stop(sim.child);
  rmSync(dir, { recursive: true, force: true });
  report.write(values.json);
}
