// Live subscribers at scale: 5,000 graphql-ws clients subscribed to nodeStatusChanged on one
// node-inventory (its own process, embedded PGlite), fed by a simulated cluster in this
// process. Each round flips one node's Ready condition in the simulator and times how long
// until every client has the event. Reports p50/p99 of change-to-receipt latency over all
// deliveries beside the same latency with one subscriber (the pipeline's floor: watch,
// history, notice, one delivery), measured first in the same run, and the service's CPU and memory:
// its CPU per delivery (CPU seconds, which hold on a busy machine where milliseconds do not), its
// main thread's GC pauses, and this process's own CPU (it holds every client: is it the bottleneck?).
// Usage: npm run bench:subscriptions [-- --subscribers 5000 --changes 40 --json FILE]
// BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" passes Node options to the service (to profile it).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { startSimulator } from "../src/sim/index.js";
import { BenchReport, cpuSeconds, mainThreadSchedule, percentile, rssMiB, spawnUntil, stop } from "./support.js";

const { values } = parseArgs({ options: { subscribers: { type: "string", default: "5000" }, changes: { type: "string", default: "40" }, json: { type: "string" } } });
const subscribers = Number(values.subscribers);
const changes = Number(values.changes);
const report = new BenchReport("subscriptions", { subscribers, changes });

const sim = await startSimulator({ port: 0, nodes: 50, seed: 3, churn: 0, clockSpeed: 0 });
console.log(`simulator at ${sim.url}`);
const dir = mkdtempSync(join(tmpdir(), "ni-bench-subs-"));
const kubeconfig = join(dir, "kubeconfig");
writeFileSync(kubeconfig, sim.kubeconfig());
const service = await spawnUntil(
  [
    "serve",
    "--port",
    "0",
    "--data-dir",
    "memory",
    "--kubeconfig",
    kubeconfig,
    "--log-level",
    "info",
    "--max-websockets-per-caller",
    String(subscribers),
    "--max-subscriptions-per-caller",
    String(subscribers),
    "--max-in-flight-per-caller",
    String(subscribers),
  ],
  /"url":"([^"]+)","graphql"/,
  {},
  process.env.BENCH_SERVICE_NODE_ARGS?.split(" ").filter(Boolean) ?? [],
);
const url = service.match[1]!;
console.log(`service at ${url}`);
const clients: Client[] = [];
try {
  for (;;) {
    const body = (await (
      await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "{ service { history { recordedTransitions pendingWrites } } }" }),
      })
    ).json()) as any;
    if (process.env.BENCH_DEBUG) console.log(JSON.stringify(body));
    if (body.data.service.history.recordedTransitions > 0 && body.data.service.history.pendingWrites === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  // Each delivery: which change (node + time of the transition) and when it arrived.
  const arrivals = new Map<string, number[]>();
  let connected = 0;
  /** Subscriptions the service holds, from its /metrics. */
  const held = async () => Number(/^node_inventory_subscriptions (\d+)/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1] ?? 0);
  /** The service's V8 heap in use and the seconds its main thread has spent in garbage collection (prom-client's defaults). */
  const heapAndGc = async () => {
    const text = await (await fetch(`${url}/metrics`)).text();
    const gcSeconds = [...text.matchAll(/^nodejs_gc_duration_seconds_sum\{[^}]*\} ([\d.e+-]+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    return { heapMiB: Number(/^nodejs_heap_size_used_bytes ([\d.e+]+)/m.exec(text)?.[1] ?? 0) / 2 ** 20, gcSeconds };
  };
  /** Opens `count` more subscribers, in batches: 5,000 connection_init frames at once outwait graphql-ws's 3 s init timeout (4408). */
  const subscribe = async (count: number) => {
    for (let done = 0; done < count; done += 500) await subscribeBatch(Math.min(500, count - done));
    console.log(`${connected} subscribers connected and subscribed`);
  };
  const subscribeBatch = async (count: number) => {
    const target = connected + count;
    let failed = 0;
    for (let i = 0; i < count; i++) {
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
          error: (error) => {
            failed++;
            console.error("subscription error", error instanceof Error ? error.message : ((error as any)?.message ?? (error as any)?.code ?? error));
          },
          complete: () => {},
        },
      );
    }
    // Every subscription registered in the service before a round starts, so none misses a change.
    while (connected + failed < target || (await held()) < target - failed) await new Promise((r) => setTimeout(r, 100));
    if (failed) throw new Error(`${failed} of ${count} clients could not subscribe`);
  };

  const names = sim.cluster.nodeNames().filter((n) => !n.startsWith("control-plane"));
  let round = 0;
  let peakRss = 0;
  /**
   * From each change to its last receipt, summed over the rounds: the time, and how much of it
   * the service's and this process's main threads spent runnable but waiting for a CPU. A
   * receipt is timestamped when this process's loop gets to it, so the latencies are the
   * service's only while this process is neither waiting nor busy (its loop delay, below).
   */
  const windows = { ms: 0, serviceWaitedNs: 0, benchWaitedNs: 0 };
  /** `count` changes, each awaited until all `expected` subscribers have it; every delivery's latency. */
  const rounds = async (count: number, expected: number): Promise<number[]> => {
    const latencies: number[] = [];
    for (let i = 0; i < count; i++, round++) {
      const node = names[round % names.length]!;
      sim.cluster.advance(10_000);
      const current = (sim.cluster.get("nodes", node) as any).status.conditions.find((c: any) => c.type === "Ready").status;
      const service0 = mainThreadSchedule(service.child.pid!);
      const bench0 = mainThreadSchedule(process.pid);
      const changedAt = performance.now();
      sim.cluster.setNodeCondition(node, "Ready", current === "True" ? "False" : "True");
      const at = new Date((sim.cluster.get("nodes", node) as any).status.conditions.find((c: any) => c.type === "Ready").lastTransitionTime).toISOString();
      const key = `${node}@${at}`;
      // Every delivery is waited for and counted, however slow; one missing after 60 s fails the bench.
      const deadline = changedAt + 60_000;
      while ((arrivals.get(key)?.length ?? 0) < expected && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      const got = arrivals.get(key) ?? [];
      windows.ms += Math.max(...got) - changedAt;
      windows.serviceWaitedNs += mainThreadSchedule(service.child.pid!).waitedNs - service0.waitedNs;
      windows.benchWaitedNs += mainThreadSchedule(process.pid).waitedNs - bench0.waitedNs;
      if (got.length < expected) throw new Error(`round ${round}: only ${got.length} of ${expected} subscribers received the change within 60 s`);
      for (const t of got) latencies.push(t - changedAt);
      peakRss = Math.max(peakRss, rssMiB(service.child.pid!));
      await new Promise((r) => setTimeout(r, 100));
    }
    return latencies.sort((a, b) => a - b);
  };

  // The floor: the same change reaching a single subscriber.
  await subscribe(1);
  const alone = await rounds(10, 1);
  const connectCpu0 = cpuSeconds(service.child.pid!);
  const connectStart = performance.now();
  await subscribe(subscribers - 1);
  // Connecting (in batches of 500) is what a reconnect storm after a restart costs the service.
  const connectSeconds = (performance.now() - connectStart) / 1000;
  const connectCpu = cpuSeconds(service.child.pid!) - connectCpu0;
  const gc0 = await heapAndGc();
  const cpu0 = cpuSeconds(service.child.pid!);
  const benchCpu0 = process.cpuUsage();
  const wall0 = performance.now();
  Object.assign(windows, { ms: 0, serviceWaitedNs: 0, benchWaitedNs: 0 });
  const benchLoop = monitorEventLoopDelay({ resolution: 5 });
  benchLoop.enable();
  const latencies = await rounds(changes, subscribers);
  benchLoop.disable();
  const cpu = cpuSeconds(service.child.pid!) - cpu0;
  const benchCpu = process.cpuUsage(benchCpu0);
  const wall = (performance.now() - wall0) / 1000;
  const gc1 = await heapAndGc();
  console.log(`${latencies.length} deliveries of ${changes} changes to ${subscribers} subscribers, max ${latencies.at(-1)!.toFixed(0)} ms`);
  report.add(`change-to-receipt p50, ${subscribers} subscribers`, percentile(latencies, 50), "ms", { figure: "p50 with one subscriber", value: percentile(alone, 50) });
  report.add(`change-to-receipt p99, ${subscribers} subscribers`, percentile(latencies, 99), "ms", { figure: "p99 with one subscriber", value: percentile(alone, 99) });
  report.add("service CPU during the rounds", (cpu / wall) * 100, "% of one core");
  // CPU seconds read as a cost, whatever else the machine runs: what each delivery costs the service.
  report.add("service CPU per delivery", (cpu * 1e6) / latencies.length, "µs");
  // This process holds all the clients (and the simulator): if it were saturated, it and not the service would set the latency.
  report.add("service main-thread GC pauses during the rounds", ((gc1.gcSeconds - gc0.gcSeconds) / cpu) * 100, "% of its CPU");
  report.add(`service heap in use with ${subscribers} subscribers`, gc0.heapMiB, "MiB");
  report.add("bench process (clients, simulator) CPU during the rounds", ((benchCpu.user + benchCpu.system) / 1e6 / wall) * 100, "% of one core");
  // Is the latency the service's? The machine's share (both programs waiting for a CPU) and this process's (its loop late to a receipt).
  report.add("service main thread waiting for a CPU, change to last receipt", windows.serviceWaitedNs / 1e4 / windows.ms, "% of that time");
  report.add("bench main thread waiting for a CPU, change to last receipt", windows.benchWaitedNs / 1e4 / windows.ms, "% of that time");
  report.add("bench event-loop delay during the rounds, p99", benchLoop.percentile(99) / 1e6, "ms");
  report.add("bench event-loop delay during the rounds, max", benchLoop.max / 1e6, "ms");
  report.add(`connecting and subscribing ${subscribers - 1} clients`, connectSeconds, "s");
  report.add("service CPU per client connected and subscribed", (connectCpu * 1000) / (subscribers - 1), "ms");
  report.add("service peak RSS", peakRss, "MiB");
} finally {
  // The processes first: a report that cannot be written must not leave the service running.
  await Promise.all(clients.map((c) => c.dispose()));
  await stop(service.child);
  await sim.stop();
  rmSync(dir, { recursive: true, force: true });
  report.write(values.json);
}
