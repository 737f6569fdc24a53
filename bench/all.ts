// Every bench at its default size, one after another, and one JSON summary.
// Benches that take --json (inventory, moments, subscriptions, cache-memory, many-clusters) give figures beside their peer or floor;
// the others' printed lines are kept as they are.
// Usage: npm run bench [-- --json .bench/results.json --only inventory,subscriptions]
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { PACKAGE_ROOT } from "../src/package-info.js";

const BENCHES = [
  "inventory",
  "moments",
  "subscriptions",
  "cache-memory",
  "many-clusters",
  "cold-start",
  "node-filter",
  "capacity-report",
  "availability-report",
  "history",
  "history-store",
  "drain",
  "fragment-fan-out",
  "sim-scale",
];
/** The benches that write their figures as JSON (BenchReport in support.ts). */
const WITH_JSON = new Set(["inventory", "moments", "subscriptions", "cache-memory", "many-clusters"]);

const { values } = parseArgs({ options: { json: { type: "string", default: ".bench/results.json" }, only: { type: "string" } } });
const chosen = values.only ? values.only.split(",").map((s) => s.trim()) : BENCHES;
const unknown = chosen.filter((b) => !BENCHES.includes(b));
if (unknown.length) throw new Error(`no such bench: ${unknown.join(", ")} (have ${BENCHES.join(", ")})`);

mkdirSync(dirname(values.json!), { recursive: true });
const dir = mkdtempSync(join(tmpdir(), "ni-bench-all-"));
const results: unknown[] = [];
try {
  for (const bench of chosen) {
    const file = join(dir, `${bench}.json`);
    const args = [join(PACKAGE_ROOT, "dist", "bench", `${bench}.js`), ...(WITH_JSON.has(bench) ? ["--json", file] : [])];
    console.log(`\n=== ${bench} (load ${loadavg()[0]!.toFixed(1)})`);
    const started = performance.now();
    const loadBefore = loadavg()[0]!;
    const { code, lines } = await run(args);
    const entry = {
      bench,
      exitCode: code,
      seconds: Math.round((performance.now() - started) / 100) / 10,
      load: { start: Math.round(loadBefore * 100) / 100, end: Math.round(loadavg()[0]! * 100) / 100 },
      ...(existsSync(file) ? { report: JSON.parse(readFileSync(file, "utf8")) } : { output: lines }),
    };
    results.push(entry);
    // Written after every bench, so a long run that is cut short keeps what it measured.
    writeFileSync(values.json!, JSON.stringify({ at: new Date().toISOString(), node: process.version, results }, null, 2) + "\n");
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`\nsummary written to ${values.json}`);

/** Runs a bench, echoing its output, and keeps its stdout lines. */
function run(args: string[]): Promise<{ code: number | null; lines: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      process.stdout.write(chunk);
      out += chunk;
    });
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, lines: out.split("\n").filter((line) => line.trim() !== "") }));
  });
}
