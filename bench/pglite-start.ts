// An embedded in-memory PGlite opened and migrated as `serve --data-dir memory` does it, from the
// build's initdb seed and by running initdb, each in a fresh process: wall time, CPU seconds,
// resident memory when migrated, its peak, and after a full collection.
// Usage: node dist/bench/pglite-start.js [--runs 3]   (a child runs: --child seed|initdb)
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import { openDatabase } from "../src/db/database.js";
import { migrate } from "../src/db/migrator.js";
import { createLogger } from "../src/log/logger.js";
import { BenchReport, median } from "./support.js";

const { values } = parseArgs({ options: { runs: { type: "string", default: "3" }, child: { type: "string" }, json: { type: "string" } } });

if (values.child) {
  const statusKiB = (field: string) => Number(readFileSync("/proc/self/status", "utf8").match(new RegExp(`${field}:\\s+(\\d+)`))![1]);
  const started = performance.now();
  const cpu = process.cpuUsage();
  const db = await openDatabase({ kind: "pglite", dataDir: "memory" }, values.child === "initdb" ? { pgliteSeed: null } : {});
  const opened = performance.now();
  await db.withConnection((c) => migrate(c, createLogger("silent")));
  const used = process.cpuUsage(cpu);
  const result = {
    openMs: opened - started,
    readyMs: performance.now() - started,
    cpuS: (used.user + used.system) / 1e6,
    rssMiB: statusKiB("VmRSS") / 1024,
    peakMiB: statusKiB("VmHWM") / 1024,
    collectedMiB: 0,
  };
  (globalThis as { gc?: () => void }).gc?.();
  await new Promise((r) => setTimeout(r, 200));
  result.collectedMiB = statusKiB("VmRSS") / 1024;
  await db.close();
  console.log(JSON.stringify(result));
} else {
  const run = promisify(execFile);
  const report = new BenchReport("pglite-start", { runs: Number(values.runs) });
  const results: Record<string, { readyMs: number; cpuS: number; rssMiB: number; peakMiB: number; collectedMiB: number }[]> = { seed: [], initdb: [] };
  // Alternated, so both ways see the same load.
  for (let i = 0; i < Number(values.runs); i++) {
    for (const way of ["initdb", "seed"]) {
      const { stdout } = await run(process.execPath, ["--expose-gc", fileURLToPath(import.meta.url), "--child", way]);
      results[way]!.push(JSON.parse(stdout.trim().split("\n").at(-1)!));
    }
  }
  const m = (way: string, f: (x: (typeof results)[string][number]) => number) => median(results[way]!.map(f));
  const cpu = (way: string) => m(way, (x) => x.cpuS);
  report.add("in-memory PGlite opened and migrated from the build's seed: CPU", cpu("seed"), "s", { figure: "running initdb", value: cpu("initdb") });
  report.add("  the same: wall time", m("seed", (x) => x.readyMs) / 1000, "s", { figure: "running initdb", value: m("initdb", (x) => x.readyMs) / 1000 });
  report.add(
    "  the same: RSS when migrated",
    m("seed", (x) => x.rssMiB),
    "MiB",
    { figure: "running initdb", value: m("initdb", (x) => x.rssMiB) },
  );
  report.add(
    "  the same: RSS after a full GC",
    m("seed", (x) => x.collectedMiB),
    "MiB",
    { figure: "running initdb", value: m("initdb", (x) => x.collectedMiB) },
  );
  report.add(
    "  the same: peak RSS",
    m("seed", (x) => x.peakMiB),
    "MiB",
    { figure: "running initdb", value: m("initdb", (x) => x.peakMiB) },
  );
  report.write(values.json);
}
