import type { ChildProcess } from "node:child_process";
import { finished, readyUrl, spawnCli, type Finished } from "./cli.js";

/** `bin/node-inventory.js serve …` as a user starts it: a child process, its URL once ready, its exit. */
export interface RunningProgram {
  child: ChildProcess;
  url: string;
  /** Every line it printed on stdout so far. */
  stdout(): string;
  /** Sends SIGTERM and resolves with how it ended. */
  terminate(): Promise<Finished>;
  exit: Promise<Finished>;
}

export async function startProgram(args: string[], env: Record<string, string> = {}, cwd?: string): Promise<RunningProgram> {
  const child = spawnCli(["serve", ...args], { HOME: "/nonexistent", ...env }, cwd);
  let out = "";
  child.stdout!.on("data", (chunk) => (out += chunk));
  const exit = finished(child, 300_000);
  let url: string;
  try {
    url = await readyUrl(child);
  } catch (error) {
    // Not ready in time: no process left behind writing or listening.
    child.kill("SIGKILL");
    throw error;
  }
  return {
    child,
    url,
    stdout: () => out,
    exit,
    terminate: () => (child.kill("SIGTERM"), exit),
  };
}

/** GraphQL over HTTP to a running program as the holder of `token`: resolves with `data`, fails the test on any error. */
export function programApi(program: () => RunningProgram, token: string) {
  return async (query: string, variables: Record<string, unknown> = {}): Promise<any> => {
    const response = await fetch(`${program().url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data?: any; errors?: unknown[] };
    if (body.errors !== undefined) throw new Error(`GraphQL errors: ${JSON.stringify(body.errors)}`);
    return body.data;
  };
}
