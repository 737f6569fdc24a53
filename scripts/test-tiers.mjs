#!/usr/bin/env node
// Runs one tier of the suite: `unit` (pure code, no process, database or browser: seconds),
// `integration` (the app, the simulator, PostgreSQL and PGlite in this process),
// `e2e` (the shipped program, the container build, kubectl, Python, Chromium, the manifests)
// or `all`. A file's tier is read from what it uses, so a new test lands in the right one
// without a list to keep. `--list` prints the tiers instead of running them.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;

/** What makes a test end-to-end: the shipped program, a browser, kubectl or Python, the deploy tree. */
const E2E_FOLDERS = /^test\/(shipped|deploy|proof)\//;
const E2E_USES = /support\/(program|browser|cli)\.js|runKubectl|\.kubectl\(|runPython|python3|bin\/node-inventory/;
/** What a unit test never uses: anything that starts a server, a database or a process. */
const HEAVY_USES =
  /support\/(app|sim-cluster|databases|scram-postgres|namespace-lifecycle-proxy|http-audits|outage-proxy)\.js|startSimulator|spawnSimulator|openDatabase|createApp|node:child_process|node:http"|node:net"|node:worker_threads/;

export function tierOf(file, source) {
  if (E2E_FOLDERS.test(file) || E2E_USES.test(source)) return "e2e";
  return HEAVY_USES.test(source) ? "integration" : "unit";
}

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith(".test.ts") ? [relative(root, path)] : [];
  });
}

const [tier = "all", ...rest] = process.argv.slice(2);
if (!["unit", "integration", "e2e", "all"].includes(tier)) {
  console.error(`usage: test-tiers.mjs unit|integration|e2e|all [--list]`);
  process.exit(2);
}
const files = testFiles(join(root, "test"))
  .sort()
  .filter((file) => tier === "all" || tierOf(file, readFileSync(join(root, file), "utf8")) === tier);

if (rest.includes("--list")) {
  for (const file of files) console.log(`${tierOf(file, readFileSync(join(root, file), "utf8"))}\t${file}`);
  process.exit(0);
}
const compiled = files.map((file) => join("dist", file.replace(/\.ts$/, ".js")));
const run = spawnSync(process.execPath, ["--test", "--test-concurrency=2", ...compiled], { cwd: root, stdio: "inherit" });
process.exit(run.status ?? 1);
