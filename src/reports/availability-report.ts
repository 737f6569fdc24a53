/**
 * The availability report: each node's figures (availability-timeline.ts) in the API's shape,
 * summed into groups (reports/grouping.ts, shared with the capacity report) and a total.
 * Pure: the query layer hands it rows, so the arithmetic is tested without a database.
 */

import { AppError, ErrorCode } from "../graphql/errors.js";
import type { AvailabilityGroup, AvailabilityReport, NodeAvailability, QueryAvailabilityReportArgs } from "../graphql/generated/resolvers-types.js";
import { compareKeys, dimensionName, groupKey, validateGroupings, type ReportGrouping, type ReportKey } from "./grouping.js";
import { nodeFigures, type NodeFigures, type RecordedNode, type Spans, type TimelineEvent } from "./availability-timeline.js";

export type { AvailabilityGroup, AvailabilityReport, NodeAvailability } from "../graphql/generated/resolvers-types.js";

/** The arguments, checked and with defaults. */
export interface AvailabilityRequest {
  cluster: string | null;
  from: Date;
  to: Date;
  groupings: ReportGrouping[];
  flapThresholdSeconds: number;
}

/** An outage shorter than this is a flap unless the caller says otherwise. */
export const DEFAULT_FLAP_THRESHOLD_SECONDS = 300;

/** The figures a node and a group share: the API's AvailabilityGroup without its identity. */
export type AvailabilityFigures = Omit<AvailabilityGroup, "__typename" | "key" | "nodeCount" | "reboots">;

/** One node's recorded state and the rows of its history the report needs. */
export interface NodeHistory {
  node: RecordedNode;
  events: TimelineEvent[];
  /** REBOOTED node changes in the period. */
  reboots: number;
}

/**
 * Checks the arguments: `to` after `from`, a flap threshold of zero or more, valid groupings.
 * @throws AppError BAD_USER_INPUT naming what is wrong.
 */
export function availabilityRequest(args: QueryAvailabilityReportArgs): AvailabilityRequest {
  if (!(args.to.getTime() > args.from.getTime())) throw new AppError(ErrorCode.BAD_USER_INPUT, "to must be after from");
  const threshold = args.flapThresholdSeconds ?? DEFAULT_FLAP_THRESHOLD_SECONDS;
  if (!Number.isInteger(threshold) || threshold < 0) {
    throw new AppError(ErrorCode.BAD_USER_INPUT, `flapThresholdSeconds must be a whole number of seconds, 0 or more, got ${threshold}`);
  }
  return {
    cluster: args.cluster ?? null,
    from: args.from,
    to: args.to,
    groupings: validateGroupings(args.groupBy),
    flapThresholdSeconds: threshold,
  };
}

/** Sums of a set of nodes' figures, in milliseconds; seconds are made once, at the end. */
class Totals {
  nodeCount = 0;
  observedMs = 0;
  unobservedMs = 0;
  readyMs = 0;
  notReadyMs = 0;
  unknownMs = 0;
  outages = 0;
  longestOutageMs = 0;
  endedOutages = 0;
  endedOutageMs = 0;
  flaps = 0;
  maintenanceMs = 0;
  reboots = 0;

  add(f: NodeFigures, reboots: number): void {
    this.nodeCount++;
    this.reboots += reboots;
    this.observedMs += f.observedMs;
    this.unobservedMs += f.unobservedMs;
    this.readyMs += f.readyMs;
    this.notReadyMs += f.notReadyMs;
    this.unknownMs += f.unknownMs;
    this.outages += f.outages;
    this.longestOutageMs = Math.max(this.longestOutageMs, f.longestOutageMs);
    this.endedOutages += f.endedOutages;
    this.endedOutageMs += f.endedOutageMs;
    this.flaps += f.flaps;
    this.maintenanceMs += f.maintenanceMs;
  }
}

/** Decimals the API gives availability to: a millionth, a ten-thousandth of a percent. */
export const AVAILABILITY_DIGITS = 6;

/**
 * `ready / observed` to {@link AVAILABILITY_DIGITS} decimals, but never rounded up to 1 while
 * some observed time was not Ready, nor down to 0 while some was: a one-second outage in a
 * year still reads below 100%. Null when nothing was observed.
 */
export function availabilityOf(readyMs: number, observedMs: number): number | null {
  if (!(observedMs > 0)) return null;
  const scale = 10 ** AVAILABILITY_DIGITS;
  const rounded = Math.round((readyMs / observedMs) * scale) / scale;
  if (readyMs < observedMs && rounded >= 1) return (scale - 1) / scale;
  if (readyMs > 0 && rounded <= 0) return 1 / scale;
  return rounded;
}

function figuresOf(t: Totals | NodeFigures): AvailabilityFigures {
  return {
    observedSeconds: t.observedMs / 1000,
    unobservedSeconds: t.unobservedMs / 1000,
    readySeconds: t.readyMs / 1000,
    notReadySeconds: t.notReadyMs / 1000,
    unknownSeconds: t.unknownMs / 1000,
    availability: availabilityOf(t.readyMs, t.observedMs),
    outages: t.outages,
    longestOutageSeconds: t.longestOutageMs / 1000,
    // Over all ended outages, not a mean of the nodes' means: a node with ten outages weighs ten.
    mttrSeconds: t.endedOutages > 0 ? t.endedOutageMs / t.endedOutages / 1000 : null,
    flaps: t.flaps,
    maintenanceSeconds: t.maintenanceMs / 1000,
  };
}


/**
 * The report over [from, min(to, now)): a node is listed when it was observed for some of it.
 * `histories` may hold rows outside the period; see availability-timeline.ts for the rules.
 * `watched` is each cluster's recorded coverage; a cluster without any was never watched.
 */
export function buildAvailabilityReport(
  request: AvailabilityRequest,
  histories: readonly NodeHistory[],
  now: Date,
  watched: ReadonlyMap<string, Spans>,
): Omit<AvailabilityReport, "clustersNotConfigured"> {
  const base = {
    from: request.from.getTime(),
    end: Math.min(request.to.getTime(), now.getTime()),
    flapThresholdMs: request.flapThresholdSeconds * 1000,
  };
  const nodes: NodeAvailability[] = [];
  const groups = new Map<string, { key: ReportKey[]; totals: Totals }>();
  const total = new Totals();
  for (const { node, events, reboots } of histories) {
    const figures = nodeFigures(node, events, { ...base, watched: watched.get(node.cluster) ?? [] });
    if (figures.observedMs <= 0) continue;
    const { key, id } = groupKey(request.groupings, node.cluster, node.labels);
    nodes.push({ cluster: node.cluster, node: node.name, key, ...figuresOf(figures), reboots, deleted: figures.deleted });
    let group = groups.get(id);
    if (!group) groups.set(id, (group = { key, totals: new Totals() }));
    group.totals.add(figures, reboots);
    total.add(figures, reboots);
  }
  nodes.sort((a, b) => (a.cluster === b.cluster ? (a.node < b.node ? -1 : a.node > b.node ? 1 : 0) : a.cluster < b.cluster ? -1 : 1));
  return {
    from: request.from,
    to: request.to,
    groupBy: request.groupings.map(dimensionName),
    groups: [...groups.values()]
      .sort((a, b) => compareKeys(a.key, b.key))
      .map(({ key, totals }) => ({ key, nodeCount: totals.nodeCount, ...figuresOf(totals), reboots: totals.reboots })),
    total: { key: [], nodeCount: total.nodeCount, ...figuresOf(total), reboots: total.reboots },
    nodes,
  };
}
