import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { PACKAGE_ROOT } from "../src/package-info.js";

export const BIN = join(PACKAGE_ROOT, "bin", "node-inventory.js");

/** Spawns `node-inventory args…` and resolves once `ready` matches a stdout line. */
export function spawnUntil(args: string[], ready: RegExp, env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  const child = spawn(process.execPath, [...nodeArgs, BIN, ...args], {
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
