import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { startSimulator, type Simulator, type SimulatorOptions } from "../../src/sim/index.js";

const run = promisify(execFile);

/** A simulator with its kubeconfig written to a temporary file, for the service and kubectl alike. */
export interface SimWithKubeconfig {
  sim: Simulator;
  kubeconfigPath: string;
  /** Runs the real kubectl against the simulator and returns stdout. */
  kubectl(...args: string[]): Promise<string>;
  stop(): Promise<void>;
}

export async function startSimWithKubeconfig(options: SimulatorOptions): Promise<SimWithKubeconfig> {
  const sim = await startSimulator({ port: 0, churn: 0, ...options });
  const dir = mkdtempSync(join(tmpdir(), "ni-kubeconfig-"));
  const kubeconfigPath = join(dir, "config");
  writeFileSync(kubeconfigPath, sim.kubeconfig());
  return {
    sim,
    kubeconfigPath,
    kubectl: async (...args) => (await run("kubectl", ["--kubeconfig", kubeconfigPath, ...args], { maxBuffer: 256 * 1024 * 1024 })).stdout,
    async stop() {
      await sim.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A KubeConfig for a plain-HTTP test server listening on 127.0.0.1, with a bearer token, as cluster `name`. */
export function kubeConfigForServer(server: Server, name: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name, server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name, token: "t" }],
    contexts: [{ name, cluster: name, user: name }],
    currentContext: name,
  });
  return kubeConfig;
}

/** A kubeconfig file for a cluster named `dead` that refuses every connection. */
export function deadClusterKubeconfig(): string {
  const path = join(mkdtempSync(join(tmpdir(), "ni-dead-")), "config");
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
clusters: [{ name: dead, cluster: { server: "http://127.0.0.1:1" } }]
users: [{ name: dead, user: { token: not-a-secret-that-matters } }]
contexts: [{ name: dead, context: { cluster: dead, user: dead } }]
current-context: dead
`,
  );
  return path;
}

const WAIT_SCALE = Math.max(1, Number(process.env.TEST_WAIT_SCALE ?? 4) || 4);

/** Polls `check` until it returns something truthy, or fails after `timeoutMs` (stretched by WAIT_SCALE). */
export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, what: string, timeoutMs = 5_000): Promise<T> {
  // A bound here only tells a hang from a slow machine; speed is the benches' job. CI shares two
  // cores with whatever else runs, so every bound is stretched (TEST_WAIT_SCALE, default 4).
  timeoutMs *= WAIT_SCALE;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * The holder of the history Lease in the simulator: one Lease per installation, named
 * `node-inventory-history-<installation>`; a test with one installation finds exactly one.
 */
export function historyLeaseHolders(sim: SimWithKubeconfig): Map<string, string | undefined> {
  const leases = sim.sim.cluster.list("coordination.k8s.io/leases", "kube-system") as any[];
  return new Map(leases.filter((lease) => lease.metadata.name.startsWith("node-inventory-history-")).map((lease) => [lease.metadata.name, lease.spec?.holderIdentity]));
}

export function historyLeaseHolder(sim: SimWithKubeconfig): string | undefined {
  const holders = [...historyLeaseHolders(sim).values()];
  if (holders.length > 1) throw new Error(`expected one installation's history Lease, found ${holders.length}`);
  return holders[0];
}
