import { parseArgs, type ParseArgsConfig } from "node:util";
import { isLoopbackHost } from "../auth/loopback.js";
import { ROLES, type Role } from "../auth/principal.js";
import { labelKeyErrors } from "../k8s/label-validation.js";
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from "../log/logger.js";
import { redactUrl } from "../log/redact-url.js";

/** Where PGlite keeps its files when no PostgreSQL URL is given; `memory` keeps nothing. */
export type DatabaseConfig =
  | { kind: "postgres"; url: string }
  | { kind: "pglite"; dataDir: string | "memory" };

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
  /**
   * With no kubeconfig and no in-cluster credentials, serve the embedded simulator (true: the
   * demo of `npm start`) or stop with exit code 2 (false: the container image, where a demo
   * could be taken for production). Absent: true.
   */
  simulatorFallback?: boolean;
  /** The pod's service account (token, ca.crt, namespace) for in-cluster mode; absent: the standard path. */
  serviceAccountDir?: string;
}

/** How history is kept: for how long, and the Lease replicas elect a recorder with. */
export interface HistoryConfig {
  retentionDays: number;
  leaseNamespace: string;
  leaseDurationSeconds: number;
}

/** JWTs from an OpenID Connect issuer: whose, for whom, where its keys are, and where roles are. */
export interface OidcConfig {
  issuer: string;
  audience: string;
  jwksUrl: string;
  /** Dotted path of the claim holding roles (e.g. `realm_access.roles`): a string or an array. */
  rolesClaim: string;
  /** Claim values to roles; absent: the values `viewer`, `operator` and `admin` themselves. */
  roleMap?: Record<string, Role>;
  subjectClaim: string;
}

/**
 * Who may call. Without `tokensFile` and `oidc` the service is for its own machine only: it
 * refuses to listen beyond loopback and treats loopback callers as the local admin.
 */
export interface AuthConfig {
  tokensFile?: string;
  oidc?: OidcConfig;
  /** Act on Kubernetes as the caller (Impersonate-User) rather than as the service account. */
  impersonate: boolean;
  /** Mutations per minute per subject (a token bucket of as many); 0 turns the limit off. */
  mutationRateLimit: number;
}

/** Bounds on what one GraphQL operation may ask for. */
export interface LimitsConfig {
  /** Nesting of fields, the root field being 1. */
  maxQueryDepth: number;
  /** Objects an operation may resolve, lists counted at their `first` (see operation-limits.ts). */
  maxQueryCost: number;
  /** WebSocket connections one caller (subject) may hold open at once. */
  maxWebSocketsPerCaller: number;
  /** Subscriptions one WebSocket connection may carry at once. */
  maxSubscriptionsPerConnection: number;
  /** Subscriptions one caller may hold across all its connections. */
  maxSubscriptionsPerCaller: number;
  /** Operations one caller may have running at once (HTTP requests and WebSocket queries and mutations). */
  maxInFlightPerCaller: number;
  /** Operations running at once, all callers together. */
  maxInFlight: number;
  /** Objects one event of a subscription may make the server resolve (its selection and filter), checked at subscribe time. */
  maxSubscriptionEventCost: number;
  /** HTTP connections held open, all clients together (WebSockets included). */
  maxConnections: number;
  /** HTTP connections held open from one client address. */
  maxConnectionsPerAddress: number;
}

/** Capacity trends: how often node usage and requests are sampled, and how long raw samples stay. */
export interface TrendsConfig {
  /** Seconds between samplings; 0 turns sampling off. */
  intervalSeconds: number;
  /** Hours raw samples are kept before they are rolled up into hourly rows (kept as long as history). */
  rawRetentionHours: number;
  /** Label keys trends are also summed by, so reports grouped by them stay fast over long periods. */
  labelKeys: string[];
}

/** Everything `serve` needs, already validated. */
export interface Config {
  host: string;
  port: number;
  database: DatabaseConfig;
  logLevel: LogLevel;
  /** Absent: pretty when stdout is a terminal, JSON otherwise. */
  logFormat?: LogFormat;
  /** Whether the schema may be introspected (absent: yes). NODE_ENV never changes it. */
  introspection?: boolean;
  clusters: ClustersConfig;
  history: HistoryConfig;
  auth: AuthConfig;
  limits: LimitsConfig;
  maintenance: MaintenanceConfig;
  trends: TrendsConfig;
  /** Operation names /metrics counts under their own name beside the shipped UI's and CLI's (absent: those alone). */
  metricsOperations?: string[];
}

/** How drains run when their caller does not say. */
export interface MaintenanceConfig {
  /** A drain's deadline when its options give none (kubectl's is forever; a service's must not be). */
  drainTimeoutSeconds: number;
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
  logFormat: { flag: "log-format", env: "LOG_FORMAT", default: undefined, help: "json|pretty (default pretty when stdout is a terminal, else json)" },
  introspection: { flag: "introspection", env: "INTROSPECTION", default: "true", help: "answer the standard introspection query (true|false)" },
  kubeconfig: {
    flag: "kubeconfig",
    env: "KUBECONFIG",
    default: undefined,
    help: "kubeconfig file(s), ':'-separated; every context is a cluster (default ~/.kube/config, else in-cluster, else the simulator)",
  },
  context: { flag: "context", env: "KUBE_CONTEXTS", default: undefined, help: "only this context; repeatable (env: comma-separated)" },
  simulate: { flag: "simulate", env: "SIMULATE", default: undefined, help: "serve the embedded simulated cluster with this many nodes" },
  simulatorFallback: {
    flag: "simulator-fallback",
    env: "SIMULATOR_FALLBACK",
    default: "true",
    help: "with no kubeconfig or in-cluster credentials, serve the simulated cluster (true) or stop with exit code 2 (false, as in the container image)",
  },
  serviceAccountDir: {
    flag: "service-account-dir",
    env: "SERVICE_ACCOUNT_DIR",
    default: "/var/run/secrets/kubernetes.io/serviceaccount",
    help: "in-cluster credentials (token, ca.crt, namespace), used with KUBERNETES_SERVICE_HOST/PORT when no kubeconfig is given",
  },
  retentionDays: { flag: "history-retention-days", env: "HISTORY_RETENTION_DAYS", default: "90", help: "days of history kept; older rows are pruned hourly" },
  leaseNamespace: { flag: "lease-namespace", env: "LEASE_NAMESPACE", default: "kube-system", help: "namespace of the Lease that elects the replica recording each cluster" },
  leaseDuration: { flag: "lease-duration", env: "LEASE_DURATION_SECONDS", default: "15", help: "seconds a recorder's Lease lasts without renewal" },
  authTokensFile: {
    flag: "auth-tokens-file",
    env: "AUTH_TOKENS_FILE",
    default: undefined,
    help: "JSON array of {subject, role, token | sha256}: bearer tokens, re-read when the file changes",
  },
  oidcIssuer: { flag: "oidc-issuer", env: "OIDC_ISSUER", default: undefined, help: "accept JWTs from this issuer (iss); needs --oidc-audience and --oidc-jwks-url" },
  oidcAudience: { flag: "oidc-audience", env: "OIDC_AUDIENCE", default: undefined, help: "the audience (aud) a JWT must name" },
  oidcJwksUrl: { flag: "oidc-jwks-url", env: "OIDC_JWKS_URL", default: undefined, help: "the issuer's signing keys (JWKS): https://, or http:// on loopback" },
  oidcRolesClaim: { flag: "oidc-roles-claim", env: "OIDC_ROLES_CLAIM", default: "roles", help: "claim holding the roles, a dotted path such as realm_access.roles" },
  oidcRoleMap: {
    flag: "oidc-role-map",
    env: "OIDC_ROLE_MAP",
    default: undefined,
    help: "claim values to roles, e.g. sre=operator,platform=admin (unset: the values viewer, operator, admin)",
  },
  oidcSubjectClaim: { flag: "oidc-subject-claim", env: "OIDC_SUBJECT_CLAIM", default: "sub", help: "claim naming the caller" },
  impersonate: { flag: "impersonate", env: "IMPERSONATE_CALLERS", default: "false", help: "act on Kubernetes as the caller (Impersonate-User headers)" },
  mutationRateLimit: { flag: "mutation-rate-limit", env: "MUTATION_RATE_LIMIT", default: "30", help: "mutations per minute per caller; 0: no limit" },
  maxQueryDepth: { flag: "max-query-depth", env: "MAX_QUERY_DEPTH", default: "12", help: "deepest nesting of fields an operation may have" },
  maxWebSocketsPerCaller: { flag: "max-websockets-per-caller", env: "MAX_WEBSOCKETS_PER_CALLER", default: "100", help: "WebSocket connections one caller may hold open" },
  maxSubscriptionsPerConnection: { flag: "max-subscriptions-per-connection", env: "MAX_SUBSCRIPTIONS_PER_CONNECTION", default: "100", help: "subscriptions one WebSocket connection may carry" },
  maxSubscriptionsPerCaller: { flag: "max-subscriptions-per-caller", env: "MAX_SUBSCRIPTIONS_PER_CALLER", default: "1000", help: "subscriptions one caller may hold across its connections" },
  maxInFlightPerCaller: { flag: "max-in-flight-per-caller", env: "MAX_IN_FLIGHT_PER_CALLER", default: "16", help: "operations one caller may have running at once; more are refused (429, Retry-After)" },
  maxInFlight: { flag: "max-in-flight", env: "MAX_IN_FLIGHT", default: "128", help: "operations running at once, all callers together; more are refused (503, Retry-After)" },
  drainTimeout: { flag: "drain-timeout", env: "DRAIN_TIMEOUT_SECONDS", default: "600", help: "seconds a drain may take when its options do not say (at most 86400)" },
  maxConnections: { flag: "max-connections", env: "MAX_CONNECTIONS", default: "10000", help: "HTTP connections held open, all clients together (at most the open-files limit less 1024); past it the oldest idle one is closed" },
  maxConnectionsPerAddress: { flag: "max-connections-per-address", env: "MAX_CONNECTIONS_PER_ADDRESS", default: "1000", help: "HTTP connections held open from one client address; past it that address's oldest idle one is closed" },
  maxSubscriptionEventCost: { flag: "max-subscription-event-cost", env: "MAX_SUBSCRIPTION_EVENT_COST", default: "10000", help: "most objects one event of a subscription may ask for (its selection and filter); more is refused at subscribe time" },
  maxQueryCost: { flag: "max-query-cost", env: "MAX_QUERY_COST", default: "500000", help: "most objects an operation may ask for, lists counted at their `first`" },
  trendsInterval: { flag: "trends-interval", env: "TRENDS_INTERVAL_SECONDS", default: "60", help: "seconds between samples of node usage and requests for capacity trends; 0 turns sampling off" },
  trendsRawRetention: { flag: "trends-raw-retention-hours", env: "TRENDS_RAW_RETENTION_HOURS", default: "48", help: "hours raw trend samples are kept before hourly rollups replace them" },
  trendsLabelKeys: {
    flag: "trends-label-keys",
    env: "TRENDS_LABEL_KEYS",
    // Low-cardinality keys most clusters set: CPU architecture, and spot or on-demand capacity.
    default: "kubernetes.io/arch,node.kubernetes.io/capacity-type,karpenter.sh/capacity-type",
    help: "comma-separated node label keys trends are also summed by (low-cardinality keys: a report grouped by one reads sums, not every node); empty: none",
  },
  metricsOperations: {
    flag: "metrics-operations",
    env: "METRICS_OPERATIONS",
    default: "",
    help: "comma-separated operation names /metrics counts by name besides those of the shipped web UI and CLI; any other name counts as `other`",
  },
} as const satisfies Record<string, { flag: string; env: string; default: string | undefined; help: string }>;

/** Settings a flag may give several times. */
const REPEATABLE = new Set<string>(["context"]);
/** Settings whose flag takes no value (its presence means true); their variable is true/false. */
const SWITCHES = new Set<string>(["impersonate"]);

type SettingName = keyof typeof SETTINGS;

/** parseArgs options for a subset of settings, every one a string flag. */
export function settingOptions(names: readonly SettingName[]): NonNullable<ParseArgsConfig["options"]> {
  return Object.fromEntries(
    names.map((name) => [
      SETTINGS[name].flag,
      SWITCHES.has(name) ? { type: "boolean" as const } : { type: "string" as const, multiple: REPEATABLE.has(name) },
    ]),
  );
}

/** `--flag value` lines for `--help`, aligned. */
export function settingsHelp(names: readonly SettingName[]): string {
  const rows = names.map((name) => {
    const s = SETTINGS[name];
    const fallback = s.default === undefined ? "" : ` (default ${s.default})`;
    return [`  --${s.flag}${SWITCHES.has(name) ? "" : " <value>"}`, `${s.help}${fallback}; env ${s.env}`];
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

  const logFormat = pick("logFormat", flags, env) as LogFormat | undefined;
  if (logFormat !== undefined && !LOG_FORMATS.includes(logFormat)) {
    throw new ConfigError(`${describeSource("logFormat", flags)}: "${logFormat}" is not one of ${LOG_FORMATS.join(", ")}`);
  }

  return {
    host,
    port,
    logLevel,
    ...(logFormat ? { logFormat } : {}),
    ...(booleanSetting("introspection", flags, env) ? {} : { introspection: false }),
    ...metricsOperations(flags, env),
    database: databaseConfig(flags, env),
    clusters: clustersConfig(flags, env),
    history: historyConfig(flags, env),
    auth: authConfig(flags, env),
    limits: {
      maxQueryDepth: wholeNumber("maxQueryDepth", flags, env, 1, 1_000),
      maxQueryCost: wholeNumber("maxQueryCost", flags, env, 1, 1_000_000_000),
      maxWebSocketsPerCaller: wholeNumber("maxWebSocketsPerCaller", flags, env, 1, 1_000_000),
      maxSubscriptionsPerConnection: wholeNumber("maxSubscriptionsPerConnection", flags, env, 1, 1_000_000),
      maxSubscriptionsPerCaller: wholeNumber("maxSubscriptionsPerCaller", flags, env, 1, 1_000_000),
      maxInFlightPerCaller: wholeNumber("maxInFlightPerCaller", flags, env, 1, 100_000),
      maxInFlight: wholeNumber("maxInFlight", flags, env, 1, 100_000),
      maxConnections: wholeNumber("maxConnections", flags, env, 1, 1_000_000),
      maxConnectionsPerAddress: wholeNumber("maxConnectionsPerAddress", flags, env, 1, 1_000_000),
      maxSubscriptionEventCost: wholeNumber("maxSubscriptionEventCost", flags, env, 1, 1_000_000_000),
    },
    maintenance: { drainTimeoutSeconds: wholeNumber("drainTimeout", flags, env, 1, 86_400) },
    trends: {
      intervalSeconds: wholeNumber("trendsInterval", flags, env, 0, 86_400),
      rawRetentionHours: wholeNumber("trendsRawRetention", flags, env, 1, 8_760),
      labelKeys: trendsLabelKeys(flags, env),
    },
  };
}

/** At most this many: every key multiplies the cells a sampling writes. */
const MAX_TRENDS_LABEL_KEYS = 8;

function trendsLabelKeys(flags: Record<string, unknown>, env: NodeJS.ProcessEnv): string[] {
  // The flag or variable set to "" means none; pick() would read an empty variable as unset.
  const s = SETTINGS.trendsLabelKeys;
  const text = typeof flags[s.flag] === "string" ? (flags[s.flag] as string) : (env[s.env] ?? s.default);
  const keys = [...new Set(commaList(text))];
  const source = describeSource("trendsLabelKeys", flags);
  for (const key of keys) {
    const errors = labelKeyErrors(key);
    if (errors.length) throw new ConfigError(`${source}: "${key}" is not a label key: ${errors.join("; ")}`);
  }
  if (keys.length > MAX_TRENDS_LABEL_KEYS) throw new ConfigError(`${source}: ${keys.length} keys; at most ${MAX_TRENDS_LABEL_KEYS}`);
  return keys;
}

/** `a, b,,c` → ["a", "b", "c"]. */
function metricsOperations(flags: Record<string, unknown>, env: NodeJS.ProcessEnv): { metricsOperations?: string[] } {
  const names = [...new Set(commaList(pick("metricsOperations", flags, env) ?? ""))];
  for (const name of names) {
    if (!/^[_A-Za-z][_0-9A-Za-z]{0,99}$/.test(name)) throw new ConfigError(`${describeSource("metricsOperations", flags)}: "${name}" is not a GraphQL operation name`);
  }
  return names.length ? { metricsOperations: names } : {};
}

function commaList(text: string): string[] {
  return text.split(",").map((item) => item.trim()).filter(Boolean);
}

function wholeNumber(name: SettingName, flags: Record<string, unknown>, env: NodeJS.ProcessEnv, min: number, max: number): number {
  const text = pick(name, flags, env)!;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw new ConfigError(`${describeSource(name, flags)}: "${text}" is not a whole number from ${min} to ${max}`);
  }
  return value;
}

/** A switch: true when its flag is given, else its variable read as a boolean, else false. */
function switchSetting(name: SettingName, flags: Record<string, unknown>, env: NodeJS.ProcessEnv): boolean {
  const s = SETTINGS[name];
  if (flags[s.flag] === true) return true;
  const text = (env[s.env] ?? "").trim().toLowerCase();
  if (text === "" || text === "false" || text === "0" || text === "no") return false;
  if (text === "true" || text === "1" || text === "yes") return true;
  throw new ConfigError(`${s.env}: "${text}" is not true or false`);
}

/** A setting spelled true/false (also 1/0, yes/no), from its flag, variable or default. */
function booleanSetting(name: SettingName, flags: Record<string, unknown>, env: NodeJS.ProcessEnv): boolean {
  const text = pick(name, flags, env)!.trim().toLowerCase();
  if (text === "true" || text === "1" || text === "yes") return true;
  if (text === "false" || text === "0" || text === "no") return false;
  throw new ConfigError(`${describeSource(name, flags)}: "${text}" is not true or false`);
}

function authConfig(flags: Record<string, unknown>, env: NodeJS.ProcessEnv): AuthConfig {
  const tokensFile = pick("authTokensFile", flags, env);
  const oidc = oidcConfig(flags, env);
  return {
    ...(tokensFile !== undefined ? { tokensFile } : {}),
    ...(oidc ? { oidc } : {}),
    impersonate: switchSetting("impersonate", flags, env),
    mutationRateLimit: wholeNumber("mutationRateLimit", flags, env, 0, 1_000_000),
  };
}

const OIDC_REQUIRED = ["oidcIssuer", "oidcAudience", "oidcJwksUrl"] as const;

function oidcConfig(flags: Record<string, unknown>, env: NodeJS.ProcessEnv): OidcConfig | undefined {
  const values = OIDC_REQUIRED.map((name) => pick(name, flags, env));
  if (values.every((value) => value === undefined)) return undefined;
  const missing = values.indexOf(undefined);
  if (missing >= 0) {
    const set = values.findIndex((value) => value !== undefined);
    throw new ConfigError(
      `${describeSource(OIDC_REQUIRED[set]!, flags)} is set but ${describeSource(OIDC_REQUIRED[missing]!, flags)} is not: OIDC needs an issuer, an audience and a JWKS URL`,
    );
  }
  const [issuer, audience, jwksUrl] = values as [string, string, string];
  let url: URL;
  try {
    url = new URL(jwksUrl);
  } catch {
    throw new ConfigError(`${describeSource("oidcJwksUrl", flags)}: "${jwksUrl}" is not a URL`);
  }
  // Keys fetched over plain HTTP could be swapped on the way, and with them every identity.
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname))) {
    throw new ConfigError(`${describeSource("oidcJwksUrl", flags)}: "${jwksUrl}" must be https:// (http:// only on loopback)`);
  }
  const mapText = pick("oidcRoleMap", flags, env);
  return {
    issuer,
    audience,
    jwksUrl,
    rolesClaim: pick("oidcRolesClaim", flags, env)!,
    subjectClaim: pick("oidcSubjectClaim", flags, env)!,
    ...(mapText !== undefined ? { roleMap: roleMap(mapText, describeSource("oidcRoleMap", flags)) } : {}),
  };
}

/** `a=admin, b=operator` → { a: "admin", b: "operator" }. */
function roleMap(text: string, source: string): Record<string, Role> {
  const entries = commaList(text).map((entry) => {
    const at = entry.lastIndexOf("=");
    const role = entry.slice(at + 1).trim() as Role;
    if (at <= 0 || !ROLES.includes(role)) {
      throw new ConfigError(`${source}: "${entry}" is not <claim value>=<role> with a role of ${ROLES.join(", ")}`);
    }
    return [entry.slice(0, at).trim(), role] as const;
  });
  // fromEntries defines own properties, so a value named __proto__ is just a key.
  return Object.fromEntries(entries);
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
  const contexts = fromFlags?.length ? fromFlags : commaList(env[SETTINGS.context.env] ?? "");
  const simulateText = pick("simulate", flags, env);
  // Said only when they differ from the default, so a config written out in full elsewhere need not name them.
  const fallback: Pick<ClustersConfig, "simulatorFallback" | "serviceAccountDir"> = booleanSetting("simulatorFallback", flags, env) ? {} : { simulatorFallback: false };
  const dir = pick("serviceAccountDir", flags, env)!;
  if (dir !== SETTINGS.serviceAccountDir.default) fallback.serviceAccountDir = dir;
  if (simulateText === undefined) return { kubeconfigs, contexts, ...fallback };
  const simulate = Number(simulateText);
  if (!/^\d+$/.test(simulateText) || simulate < 1 || simulate > 10_000) {
    throw new ConfigError(`${describeSource("simulate", flags)}: "${simulateText}" is not a node count (1-10000)`);
  }
  return { kubeconfigs, contexts, simulate, ...fallback };
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

/** postgresql://user:secret@host/db?sslpassword=… → postgresql://user@host/db?sslpassword=REDACTED: safe to log. */
export function redactDatabaseUrl(url: string): string {
  return redactUrl(url);
}
