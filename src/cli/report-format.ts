/**
 * How `node-inventory report` prints a report: an aligned table in human units, CSV in base
 * units (seconds, millicores, bytes, ratios; one row per group, the total, and per node when
 * asked), or the GraphQL data as is.
 * Pure: GraphQL data in, text out.
 */

import { toCsv } from "./output-escaping.js";
import type { AvailabilityFigures } from "../reports/availability-report.js";
import type { ReportKey } from "../reports/grouping.js";
import type { ResourceCapacity } from "../graphql/generated/resolvers-types.js";

export type ReportFormat = "table" | "csv" | "json";

export type ReportKeyData = ReportKey;

/** Query.availabilityReport as the CLI asks for it (nodes only with --nodes). */
export interface AvailabilityData {
  from: string;
  to: string;
  groupBy: string[];
  groups: AvailabilityGroupData[];
  total: AvailabilityGroupData;
  nodes?: AvailabilityNodeData[];
  /** Clusters of the report the service no longer watches; null when not known (read from a database). */
  clustersNotConfigured: string[] | null;
}

/** The figures a group and a node share, as the API serves them. */
type AvailabilityFiguresData = AvailabilityFigures & { key: ReportKeyData[]; reboots: number };

export interface AvailabilityGroupData extends AvailabilityFiguresData {
  nodeCount: number;
}

export interface AvailabilityNodeData extends AvailabilityFiguresData {
  cluster: string;
  node: string;
  deleted: boolean;
}

/** A resource's figures come back exactly as the report makes them. */
export type ResourceCapacityData = ResourceCapacity;

interface ResourceTrendData {
  peakUsage: number | null;
  p95Usage: number | null;
  peakRequests: number;
  p95Requests: number;
}

export interface CapacityGroupData {
  key: ReportKeyData[];
  nodeCount: number;
  readyNodeCount: number;
  schedulableNodeCount: number;
  cpu: ResourceCapacityData;
  memory: ResourceCapacityData;
  pods: ResourceCapacityData;
  ephemeralStorage: ResourceCapacityData;
  fit: { pods: number; nodesWithRoom: number; nodesExcluded: number } | null;
  trends: { from: string; to: string; samples: number; cpu: ResourceTrendData; memory: ResourceTrendData } | null;
  /** Absent from answers of services before the forecast. */
  forecast?: { cpuRequestsFullAt: string | null; memoryRequestsFullAt: string | null } | null;
}

/** Query.capacityReport as the CLI asks for it. */
export interface CapacityData {
  generatedAt: string;
  groupBy: string[];
  groups: CapacityGroupData[];
  total: CapacityGroupData;
  podShape: { cpuMillicores: number; memoryBytes: number } | null;
  incompleteClusters: string[];
}

// ---------------------------------------------------------------- units

/** Seconds as a person reads them: 45s, 12m05s, 1h02m, 3d04h; "-" for none. */
export function formatDuration(seconds: number | null): string {
  if (seconds === null) return "-";
  const s = Math.round(seconds);
  if (s < 60) return seconds > 0 && seconds < 1 ? "<1s" : `${s}s`;
  const two = (n: number) => String(n).padStart(2, "0");
  if (s < 3_600) return `${Math.floor(s / 60)}m${two(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3_600)}h${two(Math.floor((s % 3_600) / 60))}m`;
  return `${Math.floor(s / 86_400)}d${two(Math.floor((s % 86_400) / 3_600))}h`;
}

/** A ratio as a percentage with `digits` decimals; "-" for none. */
export function formatPercent(ratio: number | null, digits = 1): string {
  return ratio === null ? "-" : `${(ratio * 100).toFixed(digits)}%`;
}

/**
 * Availability as a percentage that never says more than it knows: exactly 100% only when
 * every observed second was Ready, else truncated (never rounded up to 100%), to two decimals
 * or, at 99.99% and above, four (99.9997%): the digits that differ from 100% are shown.
 */
export function formatAvailability(ratio: number | null): string {
  if (ratio === null) return "-";
  if (ratio >= 1) return "100%";
  if (ratio <= 0) return "0%";
  const percent = ratio * 100;
  const digits = percent >= 99.99 ? 4 : 2;
  const scale = 10 ** digits;
  // A hair over the true value guards against 0.9997 * 100 = 99.96999… truncating a digit low.
  const shown = Math.min(Math.max(Math.floor(percent * scale + 1e-6) / scale, 1 / scale), 100 - 1 / scale);
  return `${shown.toFixed(digits)}%`;
}

const cores = (millicores: number | null) => (millicores === null ? "-" : (millicores / 1000).toFixed(1));
const gib = (bytes: number | null) => (bytes === null ? "-" : (bytes / 2 ** 30).toFixed(1));
const count = (n: number | null) => (n === null ? "-" : String(Math.round(n)));

// ---------------------------------------------------------------- layouts

/** Columns separated by two spaces, numbers right-aligned (a cell is "text" when `left` says so). */
export function renderTable(header: string[], rows: string[][], left: ReadonlySet<number>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (left.has(i) ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}


/** camelCase to snake_case, for CSV headers. */
const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

type Cell = string | number | boolean | null;
type Column<R> = [name: string, value: (row: R) => Cell];

/** Columns named after the fields they hold, in snake_case. */
function fields<R>(names: readonly (keyof R & string)[]): Column<R>[] {
  return names.map((name) => [snake(name), (row) => (row[name] ?? null) as Cell]);
}

/**
 * CSV of report rows: a `kind` column (group, total, node), one column per grouping
 * dimension, then `columns` in base units (empty where a row has no value).
 */
function reportCsv<R extends { key: ReportKeyData[] }>(dimensions: string[], rows: { kind: string; row: R }[], columns: Column<R>[]): string {
  return toCsv([
    ["kind", ...dimensions, ...columns.map(([name]) => name)],
    ...rows.map(({ kind, row }) => [kind, ...dimensions.map((_, i) => row.key[i]?.value ?? null), ...columns.map(([, value]) => value(row))]),
  ]);
}

function keyCells(dimensions: string[], key: ReportKeyData[]): string[] {
  return dimensions.map((_, i) => key[i]?.value ?? "(none)");
}

/** The label of the total row, in the first column (or a column of its own without groupings). */
function totalCells(dimensions: string[]): string[] {
  return dimensions.length ? ["TOTAL", ...dimensions.slice(1).map(() => "")] : [];
}

// ---------------------------------------------------------------- availability

const AVAILABILITY_COLUMNS = ["OBSERVED", "UNOBSERVED", "AVAILABILITY", "READY", "NOT READY", "UNKNOWN", "OUTAGES", "LONGEST", "MTTR", "FLAPS", "MAINTENANCE", "REBOOTS"];

function availabilityCells(f: AvailabilityFiguresData): string[] {
  return [
    formatDuration(f.observedSeconds),
    formatDuration(f.unobservedSeconds),
    formatAvailability(f.availability),
    formatDuration(f.readySeconds),
    formatDuration(f.notReadySeconds),
    formatDuration(f.unknownSeconds),
    String(f.outages),
    formatDuration(f.longestOutageSeconds),
    formatDuration(f.mttrSeconds),
    String(f.flaps),
    formatDuration(f.maintenanceSeconds),
    String(f.reboots),
  ];
}

export function availabilityTable(report: AvailabilityData): string {
  const dims = report.groupBy;
  const left = new Set(dims.map((_, i) => i));
  const groups = renderTable(
    [...dims.map((d) => d.toUpperCase()), "NODES", ...AVAILABILITY_COLUMNS],
    [
      ...(dims.length ? report.groups : []).map((g) => [...keyCells(dims, g.key), String(g.nodeCount), ...availabilityCells(g)]),
      [...totalCells(dims), String(report.total.nodeCount), ...availabilityCells(report.total)],
    ],
    left,
  );
  const gone = new Set(report.clustersNotConfigured ?? []);
  const heading = [`Availability from ${report.from} to ${report.to}`];
  if (gone.size) heading.push(`Not configured any more (recorded history only): ${[...gone].join(", ")}`);
  const parts = [...heading, "", groups];
  if (report.nodes) {
    const nodes = renderTable(
      ["CLUSTER", "NODE", ...dims.map((d) => d.toUpperCase()), "DELETED", ...AVAILABILITY_COLUMNS],
      report.nodes.map((n) => [gone.has(n.cluster) ? `${n.cluster} (not configured)` : n.cluster, n.node, ...keyCells(dims, n.key), n.deleted ? "yes" : "", ...availabilityCells(n)]),
      new Set([0, 1, ...dims.map((_, i) => i + 2), dims.length + 2]),
    );
    parts.push("", nodes);
  }
  return parts.join("\n") + "\n";
}

const AVAILABILITY_FIELDS = [
  "observedSeconds",
  "unobservedSeconds",
  "readySeconds",
  "notReadySeconds",
  "unknownSeconds",
  "availability",
  "outages",
  "longestOutageSeconds",
  "mttrSeconds",
  "flaps",
  "maintenanceSeconds",
  "reboots",
] as const;

type AvailabilityRow = Partial<AvailabilityGroupData & AvailabilityNodeData> & AvailabilityFiguresData;

export function availabilityCsv(report: AvailabilityData): string {
  const rows: { kind: string; row: AvailabilityRow }[] = [
    ...report.groups.map((row) => ({ kind: "group", row })),
    { kind: "total", row: report.total },
    ...(report.nodes ?? []).map((row) => ({ kind: "node", row })),
  ];
  const identity = report.nodes ? fields<AvailabilityRow>(["cluster", "node", "deleted"]) : [];
  return reportCsv(report.groupBy, rows, [...identity, ...fields<AvailabilityRow>(["nodeCount", ...AVAILABILITY_FIELDS])]);
}

// ---------------------------------------------------------------- capacity

/** Allocatable and requests in `unit`, then requests, limits and usage as shares of allocatable. */
function resourceCells(r: ResourceCapacityData, unit: (n: number | null) => string): string[] {
  return [unit(r.allocatable), unit(r.requests), formatPercent(r.requestRatio), formatPercent(r.overcommitRatio), formatPercent(r.usageRatio)];
}

function capacityColumns(report: CapacityData): { header: string[]; cells: (g: CapacityGroupData) => string[] } {
  const header = ["NODES", "READY", "SCHEDULABLE", "CPU ALLOC", "CPU REQ", "CPU REQ%", "CPU LIM%", "CPU USE%", "MEM ALLOC", "MEM REQ", "MEM REQ%", "MEM LIM%", "MEM USE%", "PODS", "PODS ALLOC"];
  const fit = report.podShape !== null;
  const trends = [report.total, ...report.groups].some((g) => g.trends);
  if (fit) header.push("FIT PODS", "NODES WITH ROOM");
  if (trends) header.push("CPU P95", "CPU PEAK", "MEM P95", "MEM PEAK", "CPU REQ FULL", "MEM REQ FULL");
  return {
    header,
    cells: (g) => [
      String(g.nodeCount),
      String(g.readyNodeCount),
      String(g.schedulableNodeCount),
      ...resourceCells(g.cpu, cores),
      ...resourceCells(g.memory, gib),
      count(g.pods.requests),
      count(g.pods.allocatable),
      ...(fit ? [count(g.fit?.pods ?? null), count(g.fit?.nodesWithRoom ?? null)] : []),
      ...(trends
        ? [
            cores(g.trends?.cpu.p95Usage ?? null),
            cores(g.trends?.cpu.peakUsage ?? null),
            gib(g.trends?.memory.p95Usage ?? null),
            gib(g.trends?.memory.peakUsage ?? null),
            // The day requests reach allocatable at the trend; "-" when not within a year.
            g.forecast?.cpuRequestsFullAt?.slice(0, 10) ?? "-",
            g.forecast?.memoryRequestsFullAt?.slice(0, 10) ?? "-",
          ]
        : []),
    ],
  };
}

export function capacityTable(report: CapacityData): string {
  const dims = report.groupBy;
  const { header, cells } = capacityColumns(report);
  const table = renderTable(
    [...dims.map((d) => d.toUpperCase()), ...header],
    [...(dims.length ? report.groups : []).map((g) => [...keyCells(dims, g.key), ...cells(g)]), [...totalCells(dims), ...cells(report.total)]],
    new Set(dims.map((_, i) => i)),
  );
  const lines = [`Capacity at ${report.generatedAt} (CPU in cores, memory in GiB)`];
  if (report.podShape) lines.push(`Pod shape: ${cores(report.podShape.cpuMillicores)} cores, ${gib(report.podShape.memoryBytes)} GiB`);
  const trend = report.total.trends;
  if (trend) lines.push(`Trends from ${trend.from} to ${trend.to} (${trend.samples} samples)`);
  if (report.incompleteClusters.length) lines.push(`Incomplete (not synced or unreachable): ${report.incompleteClusters.join(", ")}`);
  return [...lines, "", table].join("\n") + "\n";
}

const RESOURCES = ["cpu", "memory", "pods", "ephemeralStorage"] as const;
const RESOURCE_FIELDS = ["capacity", "allocatable", "requests", "limits", "usage", "headroom", "requestRatio", "overcommitRatio", "usageRatio"] as const;
const TREND_FIELDS = ["peakUsage", "p95Usage", "peakRequests", "p95Requests"] as const;

export function capacityCsv(report: CapacityData): string {
  const columns: Column<CapacityGroupData>[] = fields<CapacityGroupData>(["nodeCount", "readyNodeCount", "schedulableNodeCount"]);
  for (const resource of RESOURCES) {
    for (const field of RESOURCE_FIELDS) columns.push([`${snake(resource)}_${snake(field)}`, (g) => g[resource][field]]);
  }
  if (report.podShape) {
    for (const field of ["pods", "nodesWithRoom", "nodesExcluded"] as const) columns.push([`fit_${snake(field)}`, (g) => g.fit?.[field] ?? null]);
  }
  if ([report.total, ...report.groups].some((g) => g.trends)) {
    columns.push(["trends_samples", (g) => g.trends?.samples ?? null]);
    for (const resource of ["cpu", "memory"] as const) {
      for (const field of TREND_FIELDS) columns.push([`trends_${resource}_${snake(field)}`, (g) => g.trends?.[resource][field] ?? null]);
    }
    columns.push(["forecast_cpu_requests_full_at", (g) => g.forecast?.cpuRequestsFullAt ?? null], ["forecast_memory_requests_full_at", (g) => g.forecast?.memoryRequestsFullAt ?? null]);
  }
  return reportCsv(report.groupBy, [...report.groups.map((row) => ({ kind: "group", row })), { kind: "total", row: report.total }], columns);
}
