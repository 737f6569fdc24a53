import { spawn, type ChildProcess } from "node:child_process";
import { BIN, BIN_NODE_FLAGS, PACKAGE_ROOT } from "../../src/package-info.js";

export { BIN };

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node-inventory args…` to the end, with only `env` (plus PATH) in its environment. */
export function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = 20_000): Promise<Finished> {
  const child = spawnCli(args, env);
  return finished(child, timeoutMs);
}

/** The program tests run: this build's, or another build's (NODE_INVENTORY_BIN) to measure what a change did. */
const PROGRAM = process.env.NODE_INVENTORY_BIN ?? BIN;

export function spawnCli(args: string[], env: Record<string, string> = {}, cwd = PACKAGE_ROOT): ChildProcess {
  return spawn(process.execPath, [...BIN_NODE_FLAGS, PROGRAM, ...args], { cwd, env: { PATH: process.env.PATH ?? "", ...env }, stdio: "pipe" });
}

export function finished(child: ChildProcess, timeoutMs = 20_000): Promise<Finished> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => (stdout += d));
  child.stderr?.on("data", (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`node-inventory did not exit within ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      // Let the pipes drain.
      setImmediate(() => resolve({ code, stdout, stderr }));
    });
  });
}

/** Waits for the JSON log line saying the service is ready and returns its URL. */
export function readyUrl(child: ChildProcess, timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = "";
    const timer = setTimeout(() => reject(new Error(`not ready within ${timeoutMs} ms:\n${buffered}`)), timeoutMs);
    child.stdout!.on("data", (chunk) => {
      buffered += chunk;
      for (const line of buffered.split("\n")) {
        if (!line.startsWith("{")) continue;
        const entry = JSON.parse(line);
        if (entry.msg === "node-inventory ready") {
          clearTimeout(timer);
          resolve(entry.url);
        }
      }
    });
    child.once("exit", (code) => reject(new Error(`exited with ${code} before ready:\n${buffered}`)));
  });
}
