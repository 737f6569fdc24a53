import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { get as httpGet } from "node:http";
import { loadavg } from "node:os";
import pg from "pg";
import { BIN, BIN_NODE_FLAGS } from "../src/package-info.js";

export { BIN };

/** Spawns `node-inventory args…` (or another build's `bin`), as its shebang starts node plus `nodeArgs`, and resolves once `ready` matches a stdout line. */
export function spawnUntil(args: string[], ready: RegExp, env: Record<string, string> = {}, nodeArgs: string[] = [], bin = BIN): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  const child = spawn(process.execPath, [...BIN_NODE_FLAGS, ...nodeArgs, bin, ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let buffered = "";
    child.stdout!.on("data", (chunk) => {
      buffered += chunk;
      const match = ready.exec(buffered);
      if (match) {
        child.stdout!.removeAllListeners("data");
        child.stdout!.resume();
        resolve({ child, match });
      }
    });
    child.once("exit", (code) => reject(new Error(`node-inventory ${args[0]} exited ${code} before ready:\n${buffered.slice(-2000)}`)));
  });
}

/** Resident memory of a process in MiB, from /proc. */
export function rssMiB(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]);
  return kb / 1024;
}

/** CPU seconds (user + system) a process has used, from /proc. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * Nanoseconds a process's main thread has run and has waited, runnable, for a CPU (the
 * scheduler's own accounting, /proc/PID/task/PID/schedstat). On a machine shared with other
 * work, the waiting is time a latency figure includes that neither program spent.
 */
export function mainThreadSchedule(pid: number): { ranNs: number; waitedNs: number } {
  const [ran, waited] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ");
  return { ranNs: Number(ran), waitedNs: Number(waited) };
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/**
 * A new, empty PostgreSQL database for one bench run (BENCH_POSTGRES_URL names the server's
 * admin URL, default postgresql://postgres@127.0.0.1:5432/postgres), and how to drop it.
 */
export async function freshPostgres(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = process.env.BENCH_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
  const name = `ni_bench_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/** One measured figure, beside the peer or floor it is to be read against (measured in the same run). */
export interface Figure {
  figure: string;
  value: number;
  unit: string;
  /** The peer or floor, and value / peer. */
  peer?: { figure: string; value: number; unit: string };
  ratio?: number;
  /** 1-minute load average when it was taken: the machine may be shared. */
  load: number;
}

/**
 * What a bench measured, printed as it goes and, with `--json FILE`, written as JSON for
 * `npm run bench` (bench/all.ts) to gather.
 */
export class BenchReport {
  readonly figures: Figure[] = [];
  private readonly startLoad = loadavg()[0]!;

  constructor(
    readonly bench: string,
    readonly parameters: Record<string, unknown>,
  ) {}

  /** Records a figure; with a peer, also its ratio. Prints one line. */
  add(figure: string, value: number, unit: string, peer?: { figure: string; value: number; unit?: string }): Figure {
    const entry: Figure = { figure, value: round(value), unit, load: round(loadavg()[0]!) };
    if (peer) {
      entry.peer = { figure: peer.figure, value: round(peer.value), unit: peer.unit ?? unit };
      entry.ratio = round(value / peer.value);
    }
    this.figures.push(entry);
    const beside = entry.peer ? `   (${entry.ratio}x ${entry.peer.figure}: ${entry.peer.value} ${entry.peer.unit})` : "";
    console.log(`${figure}: ${entry.value} ${unit}${beside}   [load ${entry.load}]`);
    return entry;
  }

  /** Writes the report to `file` when one was given. */
  write(file: string | undefined): void {
    if (!file) return;
    const report = { bench: this.bench, parameters: this.parameters, at: new Date().toISOString(), load: { start: round(this.startLoad), end: round(loadavg()[0]!) }, figures: this.figures };
    writeFileSync(file, JSON.stringify(report, null, 2) + "\n");
  }
}

function round(n: number): number {
  return Math.abs(n) >= 100 ? Math.round(n) : Math.round(n * 100) / 100;
}

/** Samples a process's RSS every `everyMs` until stopped; returns the highest seen. */
export function rssSampler(pid: number, everyMs = 50): { stop(): number } {
  let peak = rssMiB(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssMiB(pid));
    } catch {
      // the process ended
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}

/** Milliseconds to GET `url` whole, counting bytes only (the transfer floor of a LIST). */
export function timedGet(url: string, headers: Record<string, string> = {}): Promise<{ ms: number; bytes: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    httpGet(url, { headers }, (res) => {
      let bytes = 0;
      res.on("data", (chunk: Buffer) => (bytes += chunk.length));
      res.on("end", () => (res.statusCode === 200 ? resolve({ ms: performance.now() - started, bytes }) : reject(new Error(`${url}: HTTP ${res.statusCode}`))));
      res.on("error", reject);
    }).on("error", reject);
  });
}

export function median(samples: number[]): number {
  return percentile(
    [...samples].sort((a, b) => a - b),
    50,
  );
}
