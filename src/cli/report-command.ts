/**
 * `node-inventory report capacity|availability`: asks a running service's GraphQL API for a
 * report (or, for availability, computes it straight from the history database by running
 * the same GraphQL operation in process) and prints it as a table, CSV or JSON.
 */

import { graphql as execute } from "graphql";
import { ConfigError, configFrom, parseFlags } from "../config/config.js";
import { openDatabase } from "../db/database.js";
import { parseDateTime } from "../graphql/date-time.js";
import { formatError } from "../graphql/errors.js";
import { buildSchema } from "../graphql/schema.js";
import { createLogger } from "../log/logger.js";
import { AvailabilityQueries } from "../reports/availability-queries.js";
import { availabilityResolvers } from "../reports/availability-resolvers.js";
import { historyClusterCheck } from "../cluster/unknown-cluster.js";
import type { ReportDimension, ReportGrouping } from "../reports/grouping.js";
import { terminalText } from "./output-escaping.js";
import {
  availabilityCsv,
  availabilityTable,
  capacityCsv,
  capacityTable,
  type AvailabilityData,
  type CapacityData,
  type ReportFormat,
} from "./report-format.js";
import { parseDuration } from "./durations.js";
import { DEFAULT_SERVICE_URL, errorLine, post, serviceBase, ServiceError, type GraphqlResult } from "./service-client.js";

export { DEFAULT_SERVICE_URL };
export { parseDuration } from "./durations.js";

export const REPORT_HELP = `Usage: node-inventory report capacity|availability [options]

Prints a report of a running node-inventory service (its GraphQL API), or computes the
availability report straight from the history database (--database-url).

Options:
  --cluster <name>          one cluster (default: every cluster)
  --group-by <list>         comma-separated: cluster, pool, zone, instance-type, role, label:KEY
  --from <time> --to <time> the period, RFC 3339 (--to defaults to now); for capacity, the trends period
  --since <duration>        the period ending now, e.g. 7d, 12h, 30m, 1h30m (availability default: 7d)
  --flap-threshold <dur>    availability: an ended outage shorter than this is a flap (default 5m)
  --nodes                   availability: a row per node as well
  --pod-shape <shape>       capacity: how many pods of this shape fit, e.g. cpu=500m,memory=1Gi
  --format <format>         table, csv or json (default table)
  --url <url>               the service (default ${DEFAULT_SERVICE_URL}); env NODE_INVENTORY_URL
  --token <token>           sent as "Authorization: Bearer <token>"; env NODE_INVENTORY_TOKEN
  --database-url <url>      availability without a service: the history database; env DATABASE_URL
  --help                    show this help

A service URL (flag or env) wins over a database URL; flags win over the environment.
Exit codes: 0 printed, 1 the service or database failed (one line with its error code),
2 bad flags.`;

const GROUP_BY: Record<string, ReportDimension> = {
  cluster: "CLUSTER",
  pool: "NODE_POOL",
  zone: "ZONE",
  "instance-type": "INSTANCE_TYPE",
  role: "ROLE",
};

/** A failure of the service or database the report asked: printed as one line, exit 1. */
export class ReportError extends Error {
  override name = "ReportError";
}

/** The figures a group and a node share (the schema has no interface for them). */
const AVAILABILITY_FIGURES =
  "key { dimension value } observedSeconds unobservedSeconds readySeconds notReadySeconds unknownSeconds availability outages longestOutageSeconds mttrSeconds flaps maintenanceSeconds reboots";

const AVAILABILITY_QUERY = `query AvailabilityReport($cluster: String, $from: DateTime!, $to: DateTime!, $groupBy: [ReportGrouping!], $flapThresholdSeconds: Int, $nodes: Boolean!) {
  availabilityReport(cluster: $cluster, from: $from, to: $to, groupBy: $groupBy, flapThresholdSeconds: $flapThresholdSeconds) {
    from to groupBy clustersNotConfigured
    groups { nodeCount ${AVAILABILITY_FIGURES} }
    total { nodeCount ${AVAILABILITY_FIGURES} }
    nodes @include(if: $nodes) { cluster node deleted ${AVAILABILITY_FIGURES} }
  }
}`;

const CAPACITY_QUERY = `query CapacityReport($cluster: String, $groupBy: [ReportGrouping!], $podShape: PodShapeInput, $trendsSince: DateTime, $trendsUntil: DateTime) {
  capacityReport(cluster: $cluster, groupBy: $groupBy, podShape: $podShape, trendsSince: $trendsSince, trendsUntil: $trendsUntil) {
    generatedAt groupBy incompleteClusters
    podShape { cpuMillicores memoryBytes }
    groups { ...Group }
    total { ...Group }
  }
}
fragment Resource on ResourceCapacity { unit capacity allocatable requests limits usage headroom requestRatio overcommitRatio usageRatio }
fragment Trend on ResourceTrend { peakUsage p95Usage peakRequests p95Requests }
fragment Group on CapacityGroup {
  key { dimension value } nodeCount readyNodeCount schedulableNodeCount
  cpu { ...Resource } memory { ...Resource } pods { ...Resource } ephemeralStorage { ...Resource }
  fit { pods nodesWithRoom nodesExcluded }
  trends { from to samples cpu { ...Trend } memory { ...Trend } }
  forecast { cpuRequestsFullAt memoryRequestsFullAt }
}`;

/** The GraphQL operations the command sends, for tests that check them against the schema. */
export const REPORT_OPERATIONS = { availability: AVAILABILITY_QUERY, capacity: CAPACITY_QUERY } as const;

type Source = { kind: "service"; url: string; token?: string } | { kind: "database"; flags: Record<string, unknown>; env: NodeJS.ProcessEnv };

/** What the command line asks for, checked. */
export interface ReportPlan {
  report: "capacity" | "availability";
  format: ReportFormat;
  source: Source;
  variables: Record<string, unknown>;
}

/** A flag's time, read by the API's own DateTime parser: what the service would refuse is refused here, never rolled over. */
function parseTime(text: string, flag: string): Date {
  try {
    return parseDateTime(text);
  } catch (error) {
    throw new ConfigError(`${flag}: ${(error as Error).message.replace(/^DateTime must be/, "must be")}`);
  }
}

/** `zone,pool,label:team` to ReportGrouping inputs. */
export function parseGroupBy(text: string): ReportGrouping[] {
  return text.split(",").map((part) => {
    const name = part.trim();
    if (name.startsWith("label:") && name.length > "label:".length) return { by: "LABEL", labelKey: name.slice("label:".length) };
    const by = GROUP_BY[name];
    if (!by) throw new ConfigError(`--group-by: "${name}" is not one of ${[...Object.keys(GROUP_BY), "label:KEY"].join(", ")}`);
    return { by };
  });
}

/** `cpu=500m,memory=1Gi` to a PodShapeInput. */
export function parsePodShape(text: string): { cpu: string; memory: string } {
  const shape: Record<string, string> = {};
  for (const part of text.split(",")) {
    const [name, value, ...rest] = part.split("=").map((s) => s.trim());
    if (!name || !value || rest.length || (name !== "cpu" && name !== "memory")) {
      throw new ConfigError(`--pod-shape: "${part}" is not cpu=QUANTITY or memory=QUANTITY (e.g. cpu=500m,memory=1Gi)`);
    }
    shape[name] = value;
  }
  if (!shape.cpu || !shape.memory) throw new ConfigError(`--pod-shape: needs both cpu and memory (e.g. cpu=500m,memory=1Gi)`);
  return { cpu: shape.cpu, memory: shape.memory };
}

const OPTIONS = {
  ...Object.fromEntries(
    ["cluster", "group-by", "from", "to", "since", "flap-threshold", "pod-shape", "format", "url", "token", "database-url"].map((flag) => [flag, { type: "string" as const }]),
  ),
  nodes: { type: "boolean" as const },
};

/** The period asked for: --from/--to, or --since, or `fallback` seconds ending now (none without one). */
function period(flags: Record<string, unknown>, now: Date, fallbackSeconds: number | undefined): { from: Date; to: Date } | undefined {
  const since = flags.since as string | undefined;
  const fromText = flags.from as string | undefined;
  const toText = flags.to as string | undefined;
  if (since !== undefined && (fromText !== undefined || toText !== undefined)) throw new ConfigError("--since cannot be combined with --from or --to");
  if (toText !== undefined && fromText === undefined) throw new ConfigError("--to needs --from");
  if (fromText !== undefined) {
    const from = parseTime(fromText, "--from");
    const to = toText !== undefined ? parseTime(toText, "--to") : now;
    if (to.getTime() <= from.getTime()) throw new ConfigError("--to must be after --from");
    return { from, to };
  }
  const seconds = since !== undefined ? parseDuration(since, "--since") : fallbackSeconds;
  if (seconds === undefined) return undefined;
  if (seconds <= 0) throw new ConfigError("--since must be longer than 0s");
  return { from: new Date(now.getTime() - seconds * 1000), to: now };
}

function source(flags: Record<string, unknown>, env: NodeJS.ProcessEnv): Source {
  const flagUrl = flags.url as string | undefined;
  const flagDatabase = flags["database-url"] as string | undefined;
  if (flagUrl !== undefined && flagDatabase !== undefined) throw new ConfigError("give --url or --database-url, not both");
  const token = (flags.token as string | undefined) ?? (env.NODE_INVENTORY_TOKEN || undefined);
  const service = (url: string, flag: string): Source => ({ kind: "service", url: serviceBase(url, flag), ...(token ? { token } : {}) });
  if (flagUrl !== undefined) return service(flagUrl, "--url");
  if (flagDatabase !== undefined) return { kind: "database", flags: { "database-url": flagDatabase }, env: {} };
  if (env.NODE_INVENTORY_URL) return service(env.NODE_INVENTORY_URL, "NODE_INVENTORY_URL");
  if (env.DATABASE_URL) return { kind: "database", flags: {}, env: { DATABASE_URL: env.DATABASE_URL } };
  return service(DEFAULT_SERVICE_URL, "--url");
}

/**
 * Reads the command line into a plan, or throws ConfigError (exit 2) naming the bad flag.
 * Nothing is contacted yet.
 */
export function planReport(argv: readonly string[], env: NodeJS.ProcessEnv, now = new Date()): ReportPlan {
  const [report, ...rest] = argv;
  if (report !== "capacity" && report !== "availability") {
    throw new ConfigError(report === undefined || report.startsWith("-") ? "report: say which, capacity or availability" : `report: "${report}" is not capacity or availability`);
  }
  const flags = parseFlags(rest, OPTIONS);
  const format = (flags.format as string | undefined) ?? "table";
  if (format !== "table" && format !== "csv" && format !== "json") throw new ConfigError(`--format: "${format}" is not table, csv or json`);
  const groupBy = flags["group-by"] !== undefined ? parseGroupBy(flags["group-by"] as string) : undefined;
  const cluster = flags.cluster as string | undefined;
  const src = source(flags, env);
  const common = { ...(cluster !== undefined ? { cluster } : {}), ...(groupBy ? { groupBy } : {}) };

  return { report, format, source: src, variables: { ...common, ...(report === "availability" ? availabilityVariables(flags, now) : capacityVariables(flags, now, src)) } };
}

function availabilityVariables(flags: Record<string, unknown>, now: Date): Record<string, unknown> {
  if (flags["pod-shape"] !== undefined) throw new ConfigError("--pod-shape is for report capacity");
  const { from, to } = period(flags, now, 7 * 86_400)!;
  const flap = flags["flap-threshold"] as string | undefined;
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    ...(flap !== undefined ? { flapThresholdSeconds: parseDuration(flap, "--flap-threshold") } : {}),
    nodes: Boolean(flags.nodes),
  };
}

function capacityVariables(flags: Record<string, unknown>, now: Date, src: Source): Record<string, unknown> {
  if (flags.nodes || flags["flap-threshold"] !== undefined) throw new ConfigError(`--${flags.nodes ? "nodes" : "flap-threshold"} is for report availability`);
  if (src.kind === "database") {
    throw new ConfigError("report capacity needs live cluster data from a running service: give --url (or NODE_INVENTORY_URL) instead of a database URL");
  }
  const trends = period(flags, now, undefined);
  return {
    ...(flags["pod-shape"] !== undefined ? { podShape: parsePodShape(flags["pod-shape"] as string) } : {}),
    ...(trends ? { trendsSince: trends.from.toISOString(), trendsUntil: trends.to.toISOString() } : {}),
  };
}

/** Over HTTP with the fleet commands' client; its failures are the report's. */
async function overHttp(source: Extract<Source, { kind: "service" }>, query: string, variables: Record<string, unknown>): Promise<GraphqlResult> {
  try {
    return await post({ endpoint: source.url.endsWith("/graphql") ? source.url : `${source.url}/graphql`, ...(source.token ? { token: source.token } : {}) }, query, variables);
  } catch (error) {
    throw error instanceof ServiceError ? new ReportError(error.message) : error;
  }
}

/** The availability operation run in this process against the history database: no service needed. */
async function fromDatabase(source: Extract<Source, { kind: "database" }>, query: string, variables: Record<string, unknown>): Promise<GraphqlResult> {
  const config = configFrom(source.flags, source.env);
  const database = await openDatabase(config.database);
  try {
    const [table] = await database.withConnection((c) => c.query<{ found: string | null }>("SELECT to_regclass('node_state')::text AS found"));
    if (!table?.found) throw new ReportError(`${database.description} holds no node-inventory history (is it the service's database? \`node-inventory migrate\` creates the tables)`);
    const logger = createLogger("silent");
    // Without a service, the clusters this database holds history of are the known ones.
    const schema = buildSchema([availabilityResolvers(new AvailabilityQueries(database, logger), historyClusterCheck(database))]);
    const result = await execute({ schema, source: query, variableValues: variables, contextValue: { requestId: "cli", logger, loaders: new Map() } });
    return { data: result.data as GraphqlResult["data"], ...(result.errors ? { errors: result.errors.map((e) => formatError(e.toJSON(), e)) } : {}) };
  } finally {
    await database.close();
  }
}

/** Runs the command: prints the report on stdout and resolves 0, or throws (main prints one line). */
export async function reportCommand(argv: string[], env: NodeJS.ProcessEnv = process.env, write: (text: string) => void = (t) => void process.stdout.write(t)): Promise<number> {
  // Node text (names, label values) is escaped for a terminal; CSV cells are escaped by toCsv.
  const out = (text: string) => write(terminalText(text));
  const plan = planReport(argv, env);
  const query = REPORT_OPERATIONS[plan.report];
  const result = plan.source.kind === "service" ? await overHttp(plan.source, query, plan.variables) : await fromDatabase(plan.source, query, plan.variables);
  if (result.errors?.length) throw new ReportError(errorLine(result.errors));
  const field = plan.report === "availability" ? "availabilityReport" : "capacityReport";
  const data = result.data?.[field];
  if (!data) throw new ReportError(`the answer holds no ${field}`);
  if (plan.format === "json") out(JSON.stringify(result.data, null, 2) + "\n");
  else if (plan.report === "availability") out((plan.format === "csv" ? availabilityCsv : availabilityTable)(data as AvailabilityData));
  else out((plan.format === "csv" ? capacityCsv : capacityTable)(data as CapacityData));
  return 0;
}
