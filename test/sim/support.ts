/** Shared helpers for the simulator tests. */
import { KubeConfig } from "@kubernetes/client-node";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { Simulator } from "../../src/sim/index.js";

/** A client-node KubeConfig pointed at a simulator, from its own kubeconfig text. */
export function kubeConfigFor(sim: Simulator): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(sim.kubeconfig());
  return kc;
}

/** The Status body of a client-node ApiException. */
export function statusOf(err: unknown): { code: number; reason: string; message: string; details?: any } {
  const body = (err as { body?: unknown }).body;
  return (typeof body === "string" ? JSON.parse(body) : body) as never;
}

/** The suite's one poll-with-a-deadline (stretched by TEST_WAIT_SCALE). */
export { eventually } from "../support/sim-cluster.js";

/** Lines of a watch stream read until it ends (or `max` lines). */
export async function readWatch(url: string, max = Infinity): Promise<any[]> {
  const res = await fetch(url);
  const out: any[] = [];
  const decoder = new TextDecoder();
  let buf = "";
  const reader = res.body!.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      out.push(JSON.parse(buf.slice(0, i)));
      buf = buf.slice(i + 1);
      if (out.length >= max) {
        await reader.cancel();
        return out;
      }
    }
  }
  return out;
}

/** A response read whole: status, headers and the body as text. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * HTTP(S) requests to a simulator as its kubeconfig describes it: the server,
 * the CA it was written with (for `--tls`) and, unless told otherwise, the
 * kubeconfig user's bearer token (which `--rbac` requires).
 */
export function kubeconfigClient(kubeconfigText: string): {
  server: string;
  token: string;
  request(method: string, path: string, options?: { token?: string | null; body?: unknown; headers?: Record<string, string> }): Promise<RawResponse>;
  json(path: string): Promise<any>;
} {
  const server = JSON.parse(/^\s+server: (".*")$/m.exec(kubeconfigText)![1]!) as string;
  const ca = /^\s+certificate-authority-data: (\S+)$/m.exec(kubeconfigText)?.[1];
  const token = JSON.parse(/^\s+token: (".*")$/m.exec(kubeconfigText)![1]!) as string;
  const request = (method: string, path: string, options: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {}): Promise<RawResponse> =>
    new Promise((resolve, reject) => {
      const url = new URL(path, server);
      const headers: Record<string, string> = { ...(options.headers ?? {}) };
      const bearer = options.token === undefined ? token : options.token;
      if (bearer !== null) headers["authorization"] = `Bearer ${bearer}`;
      const body = options.body === undefined ? undefined : JSON.stringify(options.body);
      if (body !== undefined) headers["content-type"] ??= "application/json";
      const send = url.protocol === "https:" ? httpsRequest : httpRequest;
      const req = send(url, { method, headers, ...(ca ? { ca: Buffer.from(ca, "base64").toString("utf8") } : {}) }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end(body);
    });
  return {
    server,
    token,
    request,
    async json(path: string) {
      const r = await request("GET", path);
      if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.text}`);
      return JSON.parse(r.text);
    },
  };
}

/** The kubectl to run: KUBECTL if set (e.g. Debian's 1.20 build), else the one on PATH. */
export const KUBECTL = process.env["KUBECTL"] ?? "kubectl";
const SIM_MAIN = fileURLToPath(new URL("../../src/sim/sim-main.js", import.meta.url));

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run kubectl with a kubeconfig; rejects only when kubectl is missing (these tests never skip). */
export function runKubectl(kubeconfig: string, args: string[], options: { input?: string } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = execFile(KUBECTL, ["--kubeconfig", kubeconfig, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err && (err as NodeJS.ErrnoException).code === "ENOENT") return reject(new Error("kubectl is not on PATH: install it (scripts/test-prerequisites.sh, or Debian's kubernetes-client)"));
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
    if (options.input !== undefined) child.stdin!.end(options.input);
  });
}

/** A standalone simulator (`node-inventory sim`) run as a child process, as a user runs it. */
export interface SimProcess {
  url: string;
  dir: string;
  kubeconfig: string;
  kubeconfigText: string;
  stop(): Promise<void>;
}

export async function spawnSimulator(args: string[]): Promise<SimProcess> {
  const dir = await mkdtemp(join(tmpdir(), "sim-"));
  const kubeconfig = join(dir, "kubeconfig");
  const child: ChildProcess = spawn(process.execPath, [SIM_MAIN, "--port", "0", "--kubeconfig-out", kubeconfig, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    let err = "";
    child.stdout!.on("data", (d) => {
      out += d;
      if (out.includes("\n")) resolve(out.split("\n")[0]!.trim());
    });
    child.stderr!.on("data", (d) => (err += d));
    child.once("exit", (code) => reject(new Error(`simulator exited with ${code}: ${err}`)));
  });
  // The kubeconfig is written before the URL is printed.
  const kubeconfigText = await readFile(kubeconfig, "utf8");
  return {
    url,
    dir,
    kubeconfig,
    kubeconfigText,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
