// The web UI at fleet scale: Debian's Chromium opens /ui/ on a node-inventory (its own
// process, on PostgreSQL as in production: BENCH_POSTGRES_URL, default the local server)
// watching a simulated cluster of 5,000 nodes in this process.
// Reports (1) navigation to all tiles painted, beside the fleet query's own time fetched by
// the same page (the floor: what any page must wait for), (2) change-to-tile latency p50/p99
// for 100 Ready flips made in the simulator, beside a graphql-ws subscriber in this process
// receiving the same events (the floor: what the service itself takes), and (3) Chromium's
// memory (JS heap, DOM nodes, and the proportional memory of all its processes).
// Usage: npm run bench:ui [-- --nodes 5000 --changes 100 --loads 3]
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createClient } from "graphql-ws";
import { chromium } from "playwright-core";
import WebSocket from "ws";
import { startSimulator } from "../src/sim/index.js";
import { CHROMIUM_ARGS } from "../test/support/browser.js";
import { freshPostgres, percentile, spawnUntil } from "./support.js";

const { values } = parseArgs({ options: { nodes: { type: "string", default: "5000" }, changes: { type: "string", default: "100" }, loads: { type: "string", default: "3" } } });
const nodeCount = Number(values.nodes);
const changes = Number(values.changes);
const loads = Number(values.loads);

/** The fleet query the page sends (web/ui/fleet/fleet-source.ts, TILE_FIELDS), for the floor. */
const FLEET = `{ nodes(first: 5000) { totalCount pageInfo { hasNextPage endCursor } edges { node { cluster name ready unschedulable status roles labels { key value } activeDrain { id } } } } }`;

/** A process and all its descendants, from /proc. */
function processTree(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.split(") ")[1]!.split(" ")[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) for (const [pid, parent] of parents) if (parent === tree[i]) tree.push(pid);
  return tree;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const sim = await startSimulator({ port: 0, nodes: nodeCount, podsPerNode: 4, seed: 5, churn: 0, clockSpeed: 0 });
console.log(`simulator with ${nodeCount} nodes at ${sim.url}`);
const dir = mkdtempSync(join(tmpdir(), "ni-bench-ui-"));
const kubeconfig = join(dir, "kubeconfig");
writeFileSync(kubeconfig, sim.kubeconfig());
const database = await freshPostgres();
const service = await spawnUntil(["serve", "--port", "0", "--database-url", database.url, "--kubeconfig", kubeconfig, "--log-level", "info", "--log-format", "json"], /"url":"([^"]+)","graphql"/);
const url = service.match[1]!;
// The service's log, for when a run goes wrong.
const serviceLog = join(tmpdir(), "ni-bench-ui-service.log");
service.child.stdout!.pipe(createWriteStream(serviceLog));
console.log(`service at ${url} (log: ${serviceLog})`);
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
const peer = createClient({ url: url.replace(/^http/, "ws") + "/graphql", webSocketImpl: WebSocket, retryAttempts: 0, lazy: false });
try {
  // Events come from the recorded history: wait until every node's conditions, as first seen, are written.
  const conditions = sim.cluster.nodeNames().reduce((sum, name) => sum + (sim.cluster.get("nodes", name) as any).status.conditions.length, 0);
  for (;;) {
    const body = (await (
      await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "{ service { history { recordedTransitions pendingWrites } } }" }),
      })
    ).json()) as any;
    // (A few writes may stay pending at this size: the transitions are what the page's events need.)
    if (body.data.service.history.recordedTransitions >= conditions) break;
    if (process.env.BENCH_DEBUG) console.log(JSON.stringify(body.data.service.history));
    await new Promise((r) => setTimeout(r, 1_000));
  }
  console.log(`history recorded (${conditions} conditions)`);

  const page = await browser.newPage({ viewport: { width: 1920, height: 1080 } });
  if (process.env.BENCH_DEBUG) {
    page.on("console", (m) => console.log("page:", m.type(), m.text()));
    page.on("websocket", (ws) => {
      ws.on("close", () => console.log("page: websocket closed"));
      ws.on("framereceived", (f) => String(f.payload).includes('"next"') || console.log("page: frame", String(f.payload).slice(0, 300)));
    });
  }
  // (1) Navigation to every tile painted, `loads` times, each beside the fleet query fetched by the page.
  const drawn: number[] = [];
  const fetched: number[] = [];
  for (let i = 0; i < loads; i++) {
    await page.goto(`${url}/ui/?group=CLUSTER,NODE_POOL,ZONE`, { waitUntil: "commit", timeout: 300_000 });
    await page.waitForFunction((n) => performance.getEntriesByName("ni:tiles-painted").some((m) => (m as PerformanceMark).detail === n), nodeCount, { timeout: 300_000, polling: 100 });
    drawn.push(await page.evaluate((n) => performance.getEntriesByName("ni:tiles-painted").find((m) => (m as PerformanceMark).detail === n)!.startTime, nodeCount));
    fetched.push(
      await page.evaluate(async (query) => {
        const start = performance.now();
        const response = await fetch("/graphql", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query }) });
        await response.json();
        return performance.now() - start;
      }, FLEET),
    );
  }
  const tiles = await page.locator("a.tile[data-node]").count();
  if (tiles !== nodeCount) throw new Error(`${tiles} tiles drawn, ${nodeCount} expected`);

  // (2) Change to tile: the page reports each tile's data-ready change with its own clock (epoch ms).
  const tileChanges = new Map<string, number>();
  await page.exposeFunction("niTileChanged", (key: string, at: number) => tileChanges.set(key, at));
  await page.evaluate(() => {
    new MutationObserver((records) => {
      const at = performance.timeOrigin + performance.now();
      for (const record of records) {
        // A tile patched in place, or (a full drawing of the view) drawn anew.
        const tiles =
          record.type === "attributes"
            ? [record.target as HTMLElement]
            : Array.from(record.addedNodes).flatMap((n) => (n instanceof HTMLElement ? Array.from(n.querySelectorAll<HTMLElement>("a.tile")) : []));
        for (const tile of tiles) (window as any).niTileChanged(`${tile.dataset.node}=${tile.dataset.ready}`, at);
      }
    }).observe(document.querySelector(".fleet-groups")!, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-ready"] });
  });
  const peerChanges = new Map<string, number>();
  let subscribed = false;
  peer.subscribe(
    { query: "subscription { nodeStatusChanged { cluster name node { ready } } }" },
    {
      next: (value: any) => {
        const e = value.data.nodeStatusChanged;
        peerChanges.set(`${e.cluster}/${e.name}=${e.node?.ready === "TRUE" ? "true" : "false"}`, Date.now());
      },
      error: (error) => console.error("subscription error", error),
      complete: () => {},
    },
  );
  // The peer's subscription is live once it has seen one event: flip a node until it does.
  const names = sim.cluster.nodeNames().filter((n) => !n.startsWith("control-plane"));
  const flip = (node: string) => {
    sim.cluster.advance(10_000);
    const current = (sim.cluster.get("nodes", node) as any).status.conditions.find((c: any) => c.type === "Ready").status;
    sim.cluster.setNodeCondition(node, "Ready", current === "True" ? "False" : "True");
    return current === "True" ? "false" : "true";
  };
  const warm = names[names.length - 1]!;
  while (!subscribed) {
    const state = flip(warm);
    const deadline = Date.now() + 5_000;
    while (!peerChanges.has(`sim/${warm}=${state}`) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    subscribed = peerChanges.has(`sim/${warm}=${state}`);
  }

  const toTile: number[] = [];
  const toPeer: number[] = [];
  for (let i = 0; i < changes; i++) {
    const node = names[(i * 37) % (names.length - 1)]!;
    const changedAt = Date.now();
    const key = `sim/${node}=${flip(node)}`;
    tileChanges.delete(key);
    peerChanges.delete(key);
    const deadline = changedAt + 15_000;
    while (!(tileChanges.has(key) && peerChanges.has(key)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    if (!tileChanges.has(key) || !peerChanges.has(key)) throw new Error(`change ${i} (${key}) not seen within 15 s (tile ${tileChanges.has(key)}, subscriber ${peerChanges.has(key)})`);
    toTile.push(tileChanges.get(key)! - changedAt);
    toPeer.push(peerChanges.get(key)! - changedAt);
  }

  // (3) Chromium's memory with the 5,000 tiles up and the changes applied.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("HeapProfiler.collectGarbage");
  await cdp.send("Performance.enable");
  const metrics = new Map(((await cdp.send("Performance.getMetrics")).metrics as { name: string; value: number }[]).map((m) => [m.name, m.value]));
  // Playwright starts Chromium as a child of this process; the service is another child.
  const pids = processTree(process.pid).filter((pid) => {
    try {
      return /chrom/i.test(readFileSync(`/proc/${pid}/comm`, "utf8"));
    } catch {
      return false;
    }
  });
  // Proportional set size: memory shared between Chromium's processes is counted once in all.
  const pss = pids.reduce((sum, pid) => {
    try {
      return sum + Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))![1]) / 1024;
    } catch {
      return sum;
    }
  }, 0);

  toTile.sort((a, b) => a - b);
  toPeer.sort((a, b) => a - b);
  const p = (values: number[], q: number) => percentile(values, q).toFixed(0);
  console.log(
    `navigation to ${nodeCount} tiles painted: median ${median(drawn).toFixed(0)} ms of ${loads} loads (${drawn.map((d) => d.toFixed(0)).join(", ")}); the fleet query alone from the page: median ${median(fetched).toFixed(0)} ms; ratio ${(median(drawn) / median(fetched)).toFixed(2)}`,
  );
  console.log(
    `change to tile, ${changes} Ready flips: p50 ${p(toTile, 50)} ms, p99 ${p(toTile, 99)} ms, max ${toTile.at(-1)!.toFixed(0)} ms; a graphql-ws subscriber in this process: p50 ${p(toPeer, 50)} ms, p99 ${p(toPeer, 99)} ms; ratio of p50s ${(percentile(toTile, 50) / Math.max(1, percentile(toPeer, 50))).toFixed(2)}`,
  );
  console.log(
    `Chromium: JS heap used ${((metrics.get("JSHeapUsedSize") ?? 0) / 2 ** 20).toFixed(1)} MiB, DOM nodes ${metrics.get("Nodes")}, memory of its ${pids.length} processes (PSS) ${pss.toFixed(0)} MiB`,
  );
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await peer.dispose();
  await browser.close();
  // Stopped, or killed if it takes more than 30 s.
  const exited = new Promise<void>((resolve) => (service.child.exitCode !== null ? resolve() : service.child.once("exit", () => resolve())));
  service.child.kill("SIGTERM");
  const killer = setTimeout(() => service.child.kill("SIGKILL"), 30_000);
  await exited;
  clearTimeout(killer);
  await database.drop();
  await sim.stop();
  rmSync(dir, { recursive: true, force: true });
}
