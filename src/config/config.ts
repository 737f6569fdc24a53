import { parseArgs, type ParseArgsConfig } from "node:util";

/** Where PGlite keeps its files when no PostgreSQL URL is given; `memory` keeps nothing. */
export type DatabaseConfig =
  | { kind: "postgres"; url: string }
  | { kind: "pglite"; dataDir: string | "memory" };

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Which clusters to watch: the contexts of kubeconfig files, the in-cluster service account,
 * or the embedded simulator (`simulate` nodes) when neither is found or it is asked for.
 */
export interface ClustersConfig {
  /** kubeconfig paths (KUBECONFIG may list several); empty: look for ~/.kube/config. */
  kubeconfigs: string[];
  /** Only these contexts; empty: every context. */
  contexts: string[];
  /** Run the embedded simulator with this many nodes instead of any real cluster. */
  simulate?: number;
}

/** How history is kept: for how long, and the Lease replicas elect a recorder with. */
export interface HistoryConfig {
  retentionDays: number;
  leaseNamespace: string;
  leaseDurationSeconds: number;
}

/** Capacity trends: how often node usage and requests are sampled, and how long raw samples stay. */
export interface TrendsConfig {
  /** Seconds between samplings; 0 turns sampling off. */
  intervalSeconds: number;
  /** Hours raw samples are kept before they are rolled up into hourly rows (kept as long as history). */
  rawRetentionHours: number;
}

/** Everything `serve` needs, already validated. */
export interface Config {
  host: string;
  port: number;
  database: DatabaseConfig;
  logLevel: LogLevel;
  clusters: ClustersConfig;
  history: HistoryConfig;
  trends: TrendsConfig;
}

/** A setting that cannot be used; the CLI prints `message` alone and exits 2. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * One row per setting: the CLI flag, the environment variable that stands in for it, and
 * the default. Flags win over the environment. The README's configuration table mirrors it.
 */
export const SETTINGS = {
  host: { flag: "host", env: "HOST", default: "127.0.0.1", help: "address to listen on" },
  port: { flag: "port", env: "PORT", default: "4000", help: "port to listen on; 0 picks a free one" },
  databaseUrl: {
    flag: "database-url",
    env: "DATABASE_URL",
    default: undefined,
    help: "postgresql:// URL; unset selects embedded PGlite",
  },
  dataDir: { flag: "data-dir", env: "DATA_DIR", default: "./data", help: "PGlite directory; `memory` keeps it in memory" },
  logLevel: { flag: "log-level", env: "LOG_LEVEL", default: "info", help: LOG_LEVELS.join("|") },
  kubeconfig: {
    flag: "kubeconfig",
    env: "KUBECONFIG",
    default: undefined,
    help: "kubeconfig file(s), ':'-separated; every context is a cluster (default ~/.kube/config, else in-cluster, else the simulator)",
  },
  context: { flag: "context", env: "KUBE_CONTEXTS", default: undefined, help: "only this context; repeatable (env: comma-separated)" },
  simulate: { flag: "simulate", env: "SIMULATE", default: undefined, help: "serve the embedded simulated cluster with this many nodes" },
  retentionDays: { flag: "history-retention-days", env: "HISTORY_RETENTION_DAYS", default: "90", help: "days of history kept; older rows are pruned hourly" },
  leaseNamespace: { flag: "lease-namespace", env: "LEASE_NAMESPACE", default: "kube-system", help: "namespace of the Lease that elects the replica recording each cluster" },
  leaseDuration: { flag: "lease-duration", env: "LEASE_DURATION_SECONDS", default: "15", help: "seconds a recorder's Lease lasts without renewal" },
  trendsInterval: { flag: "trends-interval", env: "TRENDS_INTERVAL_SECONDS", default: "60", help: "seconds between samples of node usage and requests for capacity trends; 0 turns sampling off" },
  trendsRawRetention: { flag: "trends-raw-retention-hours", env: "TRENDS_RAW_RETENTION_HOURS", default: "48", help: "hours raw trend samples are kept before hourly rollups replace them" },
} as const satisfies Record<string, { flag: string; env: string; default: string | undefined; help: string }>;

/** Settings a flag may give several times. */
const REPEATABLE = new Set<string>(["context"]);

type SettingName = keyof typeof SETTINGS;

/** parseArgs options for a subset of settings, every one a string flag. */
export function settingOptions(names: readonly SettingName[]): NonNullable<ParseArgsConfig["options"]> {
  return Object.fromEntries(
    names.map((name) => [SETTINGS[name].flag, { type: "string" as const, multiple: REPEATABLE.has(name) }]),
  );
}

/** `--flag value` lines for `--help`, aligned. */
export function settingsHelp(names: readonly SettingName[]): string {
  const rows = names.map((name) => {
    const s = SETTINGS[name];
    const fallback = s.default === undefined ? "" : ` (default ${s.default})`;
    return [`  --${s.flag} <value>`, `${s.help}${fallback}; env ${s.env}`];
  });
  const width = Math.max(...rows.map(([left]) => left!.length)) + 2;
  return rows.map(([left, right]) => left!.padEnd(width) + right).join("\n");
}

/** Reads one setting: the flag if given, else the environment, else the default. */
function pick(name: SettingName, flags: Record<string, unknown>, env: NodeJS.ProcessEnv): string | undefined {
  const s = SETTINGS[name];
  const fromFlag = flags[s.flag];
  if (typeof fromFlag === "string") return fromFlag;
  const fromEnv = env[s.env];
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  return s.default;
}

function describeSource(name: SettingName, flags: Record<string, unknown>): string {
  const s = SETTINGS[name];
  return typeof flags[s.flag] === "string" ? `--${s.flag}` : s.env;
}

/** Parses `argv` (after the command name) and `env` into a Config, or throws ConfigError. */
export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Config {
  const names = Object.keys(SETTINGS) as SettingName[];
  const flags = parseFlags(argv, settingOptions(names));
  return configFrom(flags, env);
}

/** Validates settings already parsed from flags (by parseFlags) against the environment. */
export function configFrom(flags: Record<string, unknown>, env: NodeJS.ProcessEnv): Config {
  const host = pick("host", flags, env)!;
  if (host.trim() === "") throw new ConfigError(`${describeSource("host", flags)}: must not be empty`);

  const portText = pick("port", flags, env)!;
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) {
    throw new ConfigError(
      `${describeSource("port", flags)}: "${portText}" is not a port number (0-65535; 0 picks a free port)`,
    );
  }

  const logLevel = pick("logLevel", flags, env)! as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`${describeSource("logLevel", flags)}: "${logLevel}" is not one of ${LOG_LEVELS.join(", ")}`);
  }

  return {
    host,
    port,
    logLevel,
    database: databaseConfig(flags, env),
    clusters: clustersConfig(flags, env),
    history: historyConfig(flags, env),
    trends: { intervalSeconds: wholeNumber("trendsInterval", flags, env, 0, 86_400), rawRetentionHours: wholeNumber("trendsRawRetention", flags, env, 1, 8_760) },
  };
}

function wholeNumber(name: SettingName, flags: Record<string, unknown>, env: NodeJS.ProcessEnv, min: number, max: number): number {
  const text = pick(name, flags, env)!;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw new ConfigError(`${describeSource(name, flags)}: "${text}" is not a whole number from ${min} to ${max}`);
  }
  return value;
}

function historyConfig(flags: Record<string, unknown>, env: NodeJS.ProcessEnv): HistoryConfig {
  const leaseNamespace = pick("leaseNamespace", flags, env)!;
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(leaseNamespace)) {
    throw new ConfigError(`${describeSource("leaseNamespace", flags)}: "${leaseNamespace}" is not a namespace name`);
  }
  return {
    retentionDays: wholeNumber("retentionDays", flags, env, 1, 36_500),
    leaseNamespace,
    leaseDurationSeconds: wholeNumber("leaseDuration", flags, env, 1, 3_600),
  };
}

function clustersConfig(flags: Record<string, unknown>, env: NodeJS.ProcessEnv): ClustersConfig {
  const kubeconfigs = (pick("kubeconfig", flags, env) ?? "").split(":").filter(Boolean);
  const fromFlags = flags[SETTINGS.context.flag] as string[] | undefined;
  const contexts = fromFlags?.length ? fromFlags : (env[SETTINGS.context.env] ?? "").split(",").map((c) => c.trim()).filter(Boolean);
  const simulateText = pick("simulate", flags, env);
  if (simulateText === undefined) return { kubeconfigs, contexts };
  const simulate = Number(simulateText);
  if (!/^\d+$/.test(simulateText) || simulate < 1 || simulate > 10_000) {
    throw new ConfigError(`${describeSource("simulate", flags)}: "${simulateText}" is not a node count (1-10000)`);
  }
  return { kubeconfigs, contexts, simulate };
}

function databaseConfig(flags: Record<string, unknown>, env: NodeJS.ProcessEnv): DatabaseConfig {
  const url = pick("databaseUrl", flags, env);
  if (url === undefined) return { kind: "pglite", dataDir: pick("dataDir", flags, env)! };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // The URL may hold a password: never echo it back.
    throw new ConfigError(`${describeSource("databaseUrl", flags)}: not a valid URL (expected postgresql://user@host:5432/db)`);
  }
  if (parsed.protocol !== "postgresql:" && parsed.protocol !== "postgres:") {
    throw new ConfigError(
      `${describeSource("databaseUrl", flags)}: scheme "${parsed.protocol.replace(/:$/, "")}" is not supported (use postgresql://)`,
    );
  }
  return { kind: "postgres", url };
}

/** parseArgs in strict mode, with its errors turned into one ConfigError line. */
export function parseFlags(
  argv: readonly string[],
  options: NonNullable<ParseArgsConfig["options"]>,
): Record<string, unknown> {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new ConfigError((error as Error).message.replace(/\. To specify a positional argument.*$/s, ""));
  }
}

/** postgresql://user:secret@host/db → postgresql://user@host/db: safe to log. */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = "";
    return parsed.toString();
  } catch {
    return "(unparseable URL)";
  }
}
