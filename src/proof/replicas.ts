/**
 * The shipped program (`bin/node-inventory.js serve`) run as the soak's replicas: each a child
 * process that can be killed, frozen and resumed, restarted with a skewed clock, and measured.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, readFileSync, type WriteStream } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

export interface ReplicaOptions {
  /** The package folder whose bin/node-inventory.js runs (a mutant's copy in tests). */
  programRoot: string;
  kubeconfig: string;
  leaseDurationSeconds: number;
  /** DATABASE_URL, or a PGlite data directory when it is not a URL. */
  database: string;
  logDir: string;
}

/** One replica slot: the process in it comes and goes. */
export class Replica {
  child: ChildProcess | undefined;
  url: string | undefined;
  frozen = false;
  /** Clock skew of the process now running (ms). */
  skewMs = 0;
  /** Every process this slot ran: pid and start time, for RSS series. */
  readonly incarnations: { pid: number; startedAt: number }[] = [];
  private readonly log: WriteStream;
  private exited: Promise<void> = Promise.resolve();

  constructor(
    readonly index: number,
    private readonly options: ReplicaOptions,
  ) {
    this.log = createWriteStream(join(options.logDir, `replica-${index}.log`), { flags: "a" });
  }

  get pid(): number | undefined {
    return this.child?.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined;
  }

  get running(): boolean {
    return this.pid !== undefined && this.url !== undefined;
  }

  /** Start a process in the slot and wait until it says it is ready. */
  async start(skewMs = 0): Promise<void> {
    const bin = join(this.options.programRoot, "bin", "node-inventory.js");
    const flags = /^#!\/usr\/bin\/env -S node((?: --[\w-]+(?:=\S+)?)*)\n/.exec(readFileSync(bin, "utf8"))?.[1]?.split(" ").filter(Boolean) ?? [];
    const preload = skewMs ? ["--import", pathToFileURL(join(import.meta.dirname, "skewed-clock.js")).href] : [];
    const database = /^postgres(ql)?:\/\//.test(this.options.database) ? { DATABASE_URL: this.options.database } : { DATA_DIR: this.options.database };
    const args = [
      "serve",
      "--port",
      "0",
      "--kubeconfig",
      this.options.kubeconfig,
      "--lease-duration",
      String(this.options.leaseDurationSeconds),
      "--log-format",
      "json",
      "--trends-interval",
      "0",
      "--mutation-rate-limit",
      "0",
      "--history-retention-days",
      "36500",
    ];
    const child = spawn(process.execPath, [...flags, ...preload, bin, ...args], {
      cwd: this.options.programRoot,
      env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent", ...database, PROOF_CLOCK_SKEW_MS: String(skewMs) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    this.url = undefined;
    this.frozen = false;
    this.skewMs = skewMs;
    this.incarnations.push({ pid: child.pid!, startedAt: Date.now() });
    this.log.write(`--- start pid ${child.pid} skew ${skewMs} ms at ${new Date().toISOString()}\n`);
    child.stdout!.pipe(this.log, { end: false });
    child.stderr!.pipe(this.log, { end: false });
    this.exited = new Promise((resolve) => child.once("exit", () => resolve()));
    this.url = await new Promise<string>((resolve, reject) => {
      let buffered = "";
      const timer = setTimeout(() => reject(new Error(`replica ${this.index} not ready within 180 s`)), 180_000);
      child.stdout!.on("data", (chunk: Buffer) => {
        if (this.url) return;
        buffered += chunk.toString();
        const lines = buffered.split("\n");
        buffered = lines.pop() ?? "";
        for (const line of lines) {
          if (!line.startsWith("{")) continue;
          try {
            const entry = JSON.parse(line);
            if (entry.msg === "node-inventory ready") {
              clearTimeout(timer);
              resolve(entry.url);
            }
          } catch {
            // Not a log line of ours.
          }
        }
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`replica ${this.index} exited (${code ?? signal}) before ready`));
      });
    });
  }

  /** kill -9, and wait until the process is gone. */
  async kill(): Promise<void> {
    if (!this.child || this.pid === undefined) return;
    if (this.frozen) this.child.kill("SIGCONT");
    this.child.kill("SIGKILL");
    await this.exited;
    this.url = undefined;
    this.frozen = false;
  }

  freeze(): void {
    if (this.pid === undefined) return;
    this.child!.kill("SIGSTOP");
    this.frozen = true;
  }

  thaw(): void {
    if (this.pid === undefined) return;
    this.child!.kill("SIGCONT");
    this.frozen = false;
  }

  /** SIGTERM and wait for the end (SIGKILL after 30 s). */
  async stop(): Promise<void> {
    if (!this.child || this.pid === undefined) return;
    this.thaw();
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child?.kill("SIGKILL"), 30_000);
    await this.exited;
    clearTimeout(timer);
    this.url = undefined;
  }

  /** Resident set size of the process now running, MiB; undefined when none. */
  rssMiB(): number | undefined {
    const pid = this.pid;
    if (pid === undefined) return undefined;
    try {
      const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
      return kb ? Number(kb) / 1024 : undefined;
    } catch {
      return undefined;
    }
  }

  close(): void {
    this.log.end();
  }
}
