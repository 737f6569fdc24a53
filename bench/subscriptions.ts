// Live subscribers at scale: 1,000 graphql-ws clients subscribed to nodeStatusChanged on one
// node-inventory (its own process, embedded PGlite), fed by a simulated cluster in this
// process. Each round flips one node's Ready condition in the simulator and times how long
// until every client has the event. Reports p50/p99 of change-to-receipt latency over all
// deliveries, and the service's CPU and memory.
// Usage: npm run bench:subscriptions [-- --subscribers 1000 --changes 40]
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { startSimulator } from "../src/sim/index.js";
import { cpuSeconds, percentile, rssMiB, spawnUntil, stop } from "./support.js";

const { values } = parseArgs({ options: { subscribers: { type: "string", default: "1000" }, changes: { type: "string", default: "40" } } });
const subscribers = Number(values.subscribers);
const changes = Number(values.changes);

const sim = await startSimulator({ port: 0, nodes: 50, seed: 3, churn: 0, clockSpeed: 0 });
console.log(`simulator at ${sim.url}`);
const dir = mkdtempSync(join(tmpdir(), "ni-bench-subs-"));
const kubeconfig = join(dir, "kubeconfig");
writeFileSync(kubeconfig, sim.kubeconfig());
const service = await spawnUntil(["serve", "--port", "0", "--data-dir", "memory", "--kubeconfig", kubeconfig, "--log-level", "info", "--max-websockets-per-caller", String(subscribers), "--max-subscriptions-per-caller", String(subscribers), "--max-in-flight-per-caller", String(subscribers)], /"url":"([^"]+)","graphql"/);
const url = service.match[1]!;
console.log(`service at ${url}`);
const clients: Client[] = [];
try {
  for (;;) {
    const body = (await (await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: "{ service { history { recordedTransitions pendingWrites } } }" }) })).json()) as any;
    if (process.env.BENCH_DEBUG) console.log(JSON.stringify(body));
    if (body.data.service.history.recordedTransitions > 0 && body.data.service.history.pendingWrites === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  // Each delivery: which change (node + time of the transition) and when it arrived.
  const arrivals = new Map<string, number[]>();
  let connected = 0;
  for (let i = 0; i < subscribers; i++) {
    const client = createClient({ url: url.replace(/^http/, "ws") + "/graphql", webSocketImpl: WebSocket, retryAttempts: 0, lazy: false, on: { connected: () => void connected++ } });
    clients.push(client);
    client.subscribe(
      { query: "subscription { nodeStatusChanged { name transition { type to at } } }" },
      {
        next: (value: any) => {
          const e = value.data?.nodeStatusChanged;
          if (!e?.transition) return;
          const key = `${e.name}@${e.transition.at}`;
          let list = arrivals.get(key);
          if (!list) arrivals.set(key, (list = []));
          list.push(performance.now());
        },
        error: (error) => console.error("subscription error", error),
        complete: () => {},
      },
    );
  }
  while (connected < subscribers) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 1_000));
  console.log(`${subscribers} subscribers connected`);

  const latencies: number[] = [];
  const cpu0 = cpuSeconds(service.child.pid!);
  const wall0 = performance.now();
  let peakRss = 0;
  const names = sim.cluster.nodeNames().filter((n) => !n.startsWith("control-plane"));
  for (let round = 0; round < changes; round++) {
    const node = names[round % names.length]!;
    sim.cluster.advance(10_000);
    const current = (sim.cluster.get("nodes", node) as any).status.conditions.find((c: any) => c.type === "Ready").status;
    const changedAt = performance.now();
    sim.cluster.setNodeCondition(node, "Ready", current === "True" ? "False" : "True");
    const at = new Date((sim.cluster.get("nodes", node) as any).status.conditions.find((c: any) => c.type === "Ready").lastTransitionTime).toISOString();
    const key = `${node}@${at}`;
    const deadline = changedAt + 10_000;
    while ((arrivals.get(key)?.length ?? 0) < subscribers && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    const got = arrivals.get(key) ?? [];
    if (got.length < subscribers) console.log(`round ${round}: only ${got.length} of ${subscribers} received within 10 s`);
    for (const t of got) latencies.push(t - changedAt);
    peakRss = Math.max(peakRss, rssMiB(service.child.pid!));
    await new Promise((r) => setTimeout(r, 100));
  }
  const cpu = cpuSeconds(service.child.pid!) - cpu0;
  const wall = (performance.now() - wall0) / 1000;
  latencies.sort((a, b) => a - b);
  console.log(`${latencies.length} deliveries of ${changes} changes to ${subscribers} subscribers`);
  console.log(`change-to-receipt latency: p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms, max ${latencies.at(-1)!.toFixed(0)} ms`);
  console.log(`service: CPU ${((cpu / wall) * 100).toFixed(0)}% of one core over ${wall.toFixed(1)} s, peak RSS ${peakRss.toFixed(0)} MiB`);
} finally {
  await Promise.all(clients.map((c) => c.dispose()));
  await stop(service.child);
  await sim.stop();
  rmSync(dir, { recursive: true, force: true });
}
