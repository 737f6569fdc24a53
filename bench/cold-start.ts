// Cold start to ready: spawns `node-inventory serve --port 0` and times until /readyz is 200.
// Usage: npm run bench:cold-start [-- --runs 5]
//   PGlite in memory (what `--data-dir memory` and bench:inventory run), PGlite on a fresh data
//   dir, PGlite on an existing one, and PostgreSQL
//   (BENCH_POSTGRES_URL, default postgresql://postgres@127.0.0.1:5432/postgres, a fresh database each run).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BIN, BIN_NODE_FLAGS } from "../src/package-info.js";
import { freshPostgres } from "./support.js";

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" } } });
const runs = Number(values.runs);

/** Milliseconds from spawn to the first 200 from /readyz. */
async function timeToReady(args: string[], env: Record<string, string> = {}): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [...BIN_NODE_FLAGS, BIN, "serve", "--port", "0", ...args], {
    env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = "";
    child.stdout.on("data", (chunk) => {
      buffered += chunk;
      const match = /"url":"([^"]+)"/.exec(buffered);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`exited ${code}`)));
  });
  for (;;) {
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
  }
  const elapsed = performance.now() - started;
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
  return elapsed;
}

function summary(name: string, samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  console.log(`${name.padEnd(28)} median ${median.toFixed(0)} ms   min ${sorted[0]!.toFixed(0)}   max ${sorted.at(-1)!.toFixed(0)}   (n=${runs})`);
}

const inMemory: number[] = [];
const fresh: number[] = [];
const existing: number[] = [];
const postgres: number[] = [];
for (let i = 0; i < runs; i++) {
  inMemory.push(await timeToReady(["--data-dir", "memory"]));
  const dir = mkdtempSync(join(tmpdir(), "ni-bench-"));
  fresh.push(await timeToReady(["--data-dir", dir]));
  existing.push(await timeToReady(["--data-dir", dir]));
  rmSync(dir, { recursive: true, force: true });

  const database = await freshPostgres();
  postgres.push(await timeToReady([], { DATABASE_URL: database.url }));
  await database.drop();
}
summary("PGlite, in memory", inMemory);
summary("PGlite, new data dir", fresh);
summary("PGlite, existing data dir", existing);
summary("PostgreSQL, new database", postgres);
