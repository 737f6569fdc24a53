#!/usr/bin/env node
// Runs one of the hostile-input attacks against a build of node-inventory started here (its
// bin/node-inventory.js under --root, embedded simulator, PGlite in memory) and prints how long
// another client's `{ __typename }` waited at worst meanwhile and the server's RSS before and at
// its peak. For docs/scaling.md's before/after figures: run it against two checkouts.
//
//   node scripts/hostile-probe.mjs --root /path/to/checkout --attack selector [--nodes 50] [--port 4877]
//
// Attacks: selector, in-list, subgraph, bad-representations, unresolved, pod-selector, assets,
// connections, metrics-names.
import { spawn, execFileSync } from "node:child_process";
import { connect } from "node:net";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: { root: { type: "string" }, attack: { type: "string" }, nodes: { type: "string", default: "50" }, port: { type: "string", default: "4877" } },
});
const root = values.root ?? process.cwd();
const port = Number(values.port);
const url = `http://127.0.0.1:${port}`;

const server = spawn(process.execPath, ["--max-semi-space-size=4", `${root}/bin/node-inventory.js`, "serve", "--port", String(port), "--simulate", values.nodes, "--data-dir", "memory", "--log-level", "warn"], {
  stdio: ["ignore", "pipe", "inherit"],
  env: { ...process.env, NODE_ENV: "production" },
});
// Error lines the server logs (JSON, level 50 and up), and those with a TypeError.
const logged = { errors: 0, typeErrors: 0 };
let partial = "";
server.stdout.on("data", (chunk) => {
  const lines = (partial + chunk).split("\n");
  partial = lines.pop();
  for (const line of lines) {
    if (/"level":(5|6)\d/.test(line)) logged.errors++;
    if (line.includes("TypeError")) logged.typeErrors++;
  }
});
const rss = () => Number(execFileSync("ps", ["-o", "rss=", "-p", String(server.pid)]).toString().trim()) * 1024;
const mib = (bytes) => `${Math.round(bytes / 1024 / 1024)} MiB`;

async function until(check, what, ms = 60_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      if (await check()) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const post = (path, body, timeoutMs = 120_000) =>
  fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) }).then(async (r) => {
    const text = await r.text();
    return { status: r.status, bytes: Buffer.byteLength(text), start: text.slice(0, 140) };
  });

/** Asks `{ __typename }` one at a time while `attack` runs; the longest wait, and the RSS peak. */
async function meanwhile(attack) {
  let worst = 0;
  let peak = rss();
  let running = true;
  const sampler = setInterval(() => (peak = Math.max(peak, rss())), 100);
  const prober = (async () => {
    while (running) {
      const began = performance.now();
      try {
        await post("/graphql", { query: "{ __typename }" }, 180_000);
      } catch {}
      worst = Math.max(worst, performance.now() - began);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const began = performance.now();
  const outcome = await attack().catch((error) => `failed: ${error.message}`);
  const took = performance.now() - began;
  running = false;
  await prober;
  clearInterval(sampler);
  return { outcome, took, worst, peak };
}

const ids = (n) => Array.from({ length: n }, (_, i) => i);
const ATTACKS = {
  // Ten aliases of a 310 KB selector of 40,000 "does not exist" requirements.
  selector: () => post("/graphql", { query: `query($s: String) { ${ids(10).map((i) => `a${i}: nodes(filter: { labelSelector: $s }) { totalCount }`).join(" ")} }`, variables: { s: ids(40_000).map((i) => `!k${i}`).join(",") } }),
  // 550 aliases of a 20,000-value in list (a body under 1 MiB: the list is one variable).
  "in-list": () => post("/graphql", { query: `query($s: String) { ${ids(550).map((i) => `a${i}: nodes(filter: { labelSelector: $s }) { totalCount }`).join(" ")} }`, variables: { s: `k in (${ids(20_000).map((i) => `v${i}`).join(",")})` } }),
  // _entities with 20,000 representations selecting pods, as a viewer would.
  subgraph: async () => {
    const { body } = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: "{ nodes(first: 1) { edges { node { id } } } }" }) }).then(async (r) => ({ body: await r.json() }));
    const id = body.data.nodes.edges[0].node.id;
    return post("/subgraph", { query: "query($r: [_Any!]!) { _entities(representations: $r) { ... on Node { name pods { name namespace phase } } } }", variables: { r: ids(20_000).map(() => ({ __typename: "Node", id })) } });
  },
  // 20,000 unknown asset names of 8 KB, 32 at a time.
  assets: async () => {
    let next = 0;
    await Promise.all(ids(32).map(async () => {
      while (next < 20_000) {
        const n = next++;
        await fetch(`${url}/assets/${String(n).padStart(6, "0")}${"x".repeat(8_000)}.js`).then((r) => r.arrayBuffer());
      }
    }));
    return "20000 sent";
  },
  // 21,500 idle connections (19,500 here, 2,000 from a second process: one process may open
  // 20,000 files here, the server too), then /healthz.
  connections: async () => {
    const helper = spawn(process.execPath, ["-e", `
      const net = require("node:net"); let n = 0;
      for (let i = 0; i < 2000; i++) { const s = net.connect(${port}, "127.0.0.1", () => { if (++n === 2000) console.log("ready"); }); s.on("error", () => { if (++n === 2000) console.log("ready"); }); }
      process.stdin.on("end", () => process.exit(0)); process.stdin.resume();`], { stdio: ["pipe", "pipe", "inherit"] });
    await new Promise((resolve) => helper.stdout.once("data", resolve));
    const sockets = [];
    let refused = 0;
    for (let i = 0; i < 19_500; i += 500) {
      await Promise.all(ids(500).map(() => new Promise((resolve) => {
        const socket = connect(port, "127.0.0.1", () => resolve());
        socket.on("error", () => (refused++, resolve()));
        sockets.push(socket);
      })));
    }
    const began = performance.now();
    const healthz = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(30_000) }).then((r) => r.status).catch((e) => e.message);
    const healthzMs = Math.round(performance.now() - began);
    const open = sockets.filter((s) => !s.destroyed && !s.readableEnded).length;
    for (const s of sockets) s.destroy();
    helper.stdin.end();
    return { healthz, healthzMs, stillOpen: open, refused };
  },
  // 4,998 malformed representations (no id, a type without a key, not an object).
  "bad-representations": () =>
    post("/subgraph", { query: "query($r: [_Any!]!) { _entities(representations: $r) { ... on Node { name } } }", variables: { r: ids(4_998).map((i) => (i % 3 === 0 ? { __typename: "Node" } : i % 3 === 1 ? { __typename: "Pod", id: "x" } : "not an object")) } }),
  // Two operations without operationName, an unknown operationName, an APQ hash that does not match.
  unresolved: async () => {
    const two = "query A { __typename } query B { __typename }";
    const answers = [await post("/graphql", { query: two }), await post("/graphql", { query: two, operationName: "C" }), await post("/graphql", { query: "{ __typename }", extensions: { persistedQuery: { version: 1, sha256Hash: "ab".repeat(32) } } })];
    return answers.map((a) => `${a.status} ${a.start.slice(0, 90)}`);
  },
  // A drain whose podSelector is 300 KB of a=b requirements (a dry run).
  "pod-selector": async () => {
    const { body } = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: "{ nodes(first: 1) { edges { node { name } } } }" }) }).then(async (r) => ({ body: await r.json() }));
    const name = body.data.nodes.edges[0].node.name;
    return post("/graphql", { query: "mutation($n: String!, $o: DrainOptions) { drainNode(name: $n, options: $o) { id status message } }", variables: { n: name, o: { podSelector: ids(75_000).map(() => "a=b").join(","), dryRun: true } } });
  },
  // 400 invented operation names, then is the UI's "Fleet" still counted as itself?
  "metrics-names": async () => {
    for (const i of ids(400)) await post("/graphql", { query: `query Invented${i} { __typename }` });
    await post("/graphql", { query: "query Fleet { __typename }" });
    const text = await (await fetch(`${url}/metrics`)).text();
    return { fleetCounted: /operations_total\{operation="Fleet"/.test(text), otherSeries: (text.match(/operation="other"/g) ?? []).length };
  },
};

try {
  await until(async () => (await fetch(`${url}/readyz`)).status === 200, "the service to be ready");
  const attack = ATTACKS[values.attack];
  if (!attack) throw new Error(`--attack: one of ${Object.keys(ATTACKS).join(", ")}`);
  const before = rss();
  const { outcome, took, worst, peak } = await meanwhile(attack);
  console.log(JSON.stringify({ root, attack: values.attack, outcome, attackMs: Math.round(took), typenameWorstMs: Math.round(worst), rssBefore: mib(before), rssPeak: mib(peak), logged }));
} finally {
  server.kill("SIGTERM");
}
