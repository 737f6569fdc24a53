import { Writable } from "node:stream";
import { AppProbes } from "../../src/app/app-probes.js";
import { createApp, type App, type AppOverrides } from "../../src/app/create-app.js";
import { loadConfig, type AuthConfig, type Config } from "../../src/config/config.js";
import { createLogger } from "../../src/log/logger.js";
import { isDeepStrictEqual } from "node:util";
import { eventually, type SimWithKubeconfig } from "./sim-cluster.js";

/** Log lines the app wrote, parsed, for tests that assert on logging. */
export interface CapturedLogs {
  lines: Record<string, unknown>[];
}

/** The settings' defaults, as a user without any configuration gets them. */
const DEFAULTS = loadConfig([], {});

/** What a test may set; `auth` is merged over the defaults (no authentication: the local admin). */
export type TestConfig = Partial<Omit<Config, "auth" | "limits">> & { auth?: Partial<AuthConfig>; limits?: Partial<Config["limits"]> };

/**
 * Starts the real app through the real composition root on 127.0.0.1:0 with an in-memory
 * PGlite unless told otherwise. Logs are captured rather than printed. Without `auth` the
 * test is on loopback with no authentication, so every request is the local admin's.
 */
export async function startTestApp(config: TestConfig = {}, overrides: AppOverrides = {}): Promise<{ app: App; url: string; logs: CapturedLogs; probes: AppProbes }> {
  const probes = overrides.probes ?? new AppProbes();
  const logs: CapturedLogs = { lines: [] };
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line) logs.lines.push(JSON.parse(line));
      done();
    },
  });
  const app = createApp(
    {
      host: "127.0.0.1",
      port: 0,
      logLevel: "info",
      database: { kind: "pglite", dataDir: "memory" },
      clusters: { kubeconfigs: [], contexts: [], simulate: 3 },
      // The simulator's nodes are a year old: keep all their history unless a test is about retention.
      history: { retentionDays: 36_500, leaseNamespace: "kube-system", leaseDurationSeconds: 15 },
      maintenance: DEFAULTS.maintenance,
      trends: { intervalSeconds: 60, rawRetentionHours: 48, labelKeys: [] },
      ...config,
      auth: { ...DEFAULTS.auth, ...config.auth },
      limits: { ...DEFAULTS.limits, ...config.limits },
    },
    { logger: createLogger("debug", sink), ...overrides, probes },
  );
  await app.start();
  return { app, url: app.url, logs, probes };
}

/** Resolves once the hub holds `count` subscription listeners: a subscription is registered, events will reach it. */
export function subscribers(probes: AppProbes, count: number): Promise<true> {
  return eventually(() => probes.subscriberCount() >= count || undefined, `${count} subscription listeners (have ${probes.subscriberCount()})`, 10_000);
}

/** Each node of a simulated cluster with its resourceVersion now. */
export function simNodeVersions(cluster: SimWithKubeconfig): Record<string, string> {
  return Object.fromEntries(cluster.sim.cluster.nodeNames().map((name) => [name, (cluster.sim.cluster.get("nodes", name) as any).metadata.resourceVersion as string]));
}

/** Whether the app's cache holds each node as the simulator holds it now: every change so far has reached the service. */
export function cacheHolds(probes: AppProbes, cluster: SimWithKubeconfig, name = "sim"): boolean {
  return isDeepStrictEqual(probes.cachedNodeVersions(name), simNodeVersions(cluster));
}

/** Resolves once the app's cache holds each node as the simulator holds it now. */
export function cacheCaughtUp(probes: AppProbes, cluster: SimWithKubeconfig, name = "sim"): Promise<true> {
  return eventually(() => cacheHolds(probes, cluster, name) || undefined, `the cache of ${name} to hold its nodes as they are`, 10_000);
}

/** Resolves once /readyz says every dependency is up, the clusters synced: a node lookup then answers from the cache. */
export function ready(url: string): Promise<true> {
  return eventually(async () => (await fetch(`${url}/readyz`)).status === 200 || undefined, "the app to be ready", 20_000);
}

/** What a caller sees of a one-field operation: the HTTP status and the first error's code ("ok" without one). */
export function outcome(response: { status: number; body: { errors?: any[] } }): { status: number; code: string } {
  return { status: response.status, code: response.body.errors?.[0]?.extensions?.code ?? "ok" };
}

/** POSTs a GraphQL operation and returns the HTTP status and parsed body. */
export async function graphql(
  url: string,
  query: string,
  variables?: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: { data?: any; errors?: any[] } }> {
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, body: (await response.json()) as { data?: any; errors?: any[] } };
}
