import { assertConfiguredCluster } from "../cluster/unknown-cluster.js";
import type { ClusterRegistry } from "../cluster/cluster-registry.js";
import type { CachedNode } from "../cluster/model.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import type { CapacityReport, CapacityTrends, NodeFilter, QueryCapacityReportArgs, ResourceTrend } from "../graphql/generated/resolvers-types.js";
import type { InventoryService } from "../inventory/inventory-service.js";
import { compileNodeFilter } from "../inventory/node-filter.js";
import { nodeFilterFacts } from "../inventory/heartbeats.js";
import { CapacityTally, nodeAmounts, type CapacityGroupView, type NodeAmounts } from "./capacity-report.js";
import { dimensionName, groupKey, validateGroupings, type ReportGrouping, type ReportKey } from "./grouping.js";
import { compilePodShape } from "./pod-fit.js";
import { fullAt, hourlyP95 } from "./capacity-forecast.js";
import { CELL_COLUMNS, emptyTrend, type DepartedNode, type GroupTrend, type TrendResolution, type TrendsStore } from "./trends-store.js";

const HOUR_MS = 3_600_000;

/** Periods up to this long that lie within the raw retention are read sampling by sampling; longer ones hour by hour. */
export const RAW_PERIOD_MS = 6 * HOUR_MS;


/**
 * Query.capacityReport: live figures from the watch caches in one pass over the nodes, and,
 * for a trends period, the sampled peaks and p95 from the database.
 *
 * Which nodes trends cover, so that a pool that has since shrunk still shows the peak it had:
 * a report grouped only by cluster, pool, zone, instance type, role or a label key configured for
 * trends (--trends-label-keys), and not filtered, reads the cell rows, which hold every node
 * sampled, grouped as it was then, unless some rows of the period were sampled before a key it
 * groups by was configured. Any other report reads the node rows of the nodes the live figures
 * cover (the filter applied to them as they are now) and of the nodes deleted during the period,
 * filtered and grouped as history last recorded them. Clusters that are not synced are left out
 * of both and named in incompleteClusters.
 */
export class CapacityReports {
  /** Parsed capacity and allocatable per cached node: nodes are immutable, a change replaces them. */
  private readonly amounts = new WeakMap<CachedNode, NodeAmounts>();

  constructor(
    private readonly clusters: ClusterRegistry,
    private readonly inventory: InventoryService,
    private readonly trends: TrendsStore,
    private readonly options: { rawRetentionHours: number; labelKeys: readonly string[] },
  ) {}

  /**
   * @throws AppError BAD_USER_INPUT for a bad filter, grouping, pod shape or period; NOT_FOUND for
   *   a cluster that is not configured; UNAVAILABLE when trends are asked for and the database fails.
   */
  async report(query: QueryCapacityReportArgs, now = new Date()): Promise<CapacityReport> {
    const groupings = validateGroupings(query.groupBy);
    const matches = compileNodeFilter(query.filter, nodeFilterFacts(this.clusters));
    const shape = query.podShape ? compilePodShape(query.podShape) : undefined;
    const asked = trendsPeriod(query.trendsSince, query.trendsUntil, now);
    const period = asked && trendsResolution(asked, now, this.options.rawRetentionHours);
    const caches = query.cluster != null ? [this.cluster(query.cluster)] : this.clusters.all();

    const tally = new CapacityTally(groupings, shape);
    const incompleteClusters: string[] = [];
    const covered: string[] = [];
    // Trends by cell need nothing per node; trends by node need each node's group. Cells split by
    // label keys may turn out not to cover the period: keep the nodes' groups for that case too.
    const byCells = period !== null && isCellReport(query.filter, groupings, this.options.labelKeys);
    const labelKeys = groupings.flatMap((g) => (g.by === "LABEL" ? [g.labelKey!] : []));
    let nodeRows = period && (!byCells || labelKeys.length) ? { clusters: [] as string[], nodes: [] as string[], ids: [] as string[] } : undefined;

    for (const cache of caches) {
      if (!cache.status().synced) {
        incompleteClusters.push(cache.name);
        continue;
      }
      covered.push(cache.name);
      for (const node of cache.allNodes()) {
        if (!matches(node)) continue;
        const id = tally.add(node, this.amountsOf(node), this.inventory.podTotals(node), cache.usage(node.name));
        if (nodeRows) {
          nodeRows.clusters.push(node.cluster);
          nodeRows.nodes.push(node.name);
          nodeRows.ids.push(id);
        }
      }
    }

    let trends: Map<string | null, GroupTrend> | undefined;
    if (period) {
      if (byCells && (await this.trends.cellsCarry(covered, labelKeys, period.since, period.until))) nodeRows = undefined;
      if (nodeRows) {
        for (const departed of await this.trends.departedNodes(covered, period.since)) {
          if (this.clusters.get(departed.cluster)?.node(departed.name)) continue;
          const node = departedAsNode(departed);
          if (!matches(node)) continue;
          nodeRows.clusters.push(node.cluster);
          nodeRows.nodes.push(node.name);
          nodeRows.ids.push(groupings.length ? groupKey(groupings, node.cluster, node.labels).id : "");
        }
      }
      const source = nodeRows ? { kind: "nodes" as const, ...nodeRows } : { kind: "cells" as const, clusters: covered, groupings };
      trends = await this.trends.groupTrends(source, period.since, period.until, period.resolution);
      // A group may have samples and no live node (its nodes are gone): it is shown all the same.
      if (groupings.length) for (const id of trends.keys()) if (id !== null) tally.ensureGroup(id, keyOf(groupings, id));
    }

    const trendsOf = (id: string | null): CapacityTrends | null => {
      if (!period || !trends) return null;
      const trend = trends.get(id) ?? emptyTrend();
      return { from: period.since, to: period.until, samples: trend.samples, cpu: resourceTrend(trend, "cpu"), memory: resourceTrend(trend, "memory") };
    };
    const forecastOf = (id: string | null, group: CapacityGroupView) => {
      if (!period || !trends) return null;
      const series = (trends.get(id) ?? emptyTrend()).requestSeries;
      const until = period.until.getTime();
      const of = (pick: (p: (typeof series)[number]) => number | null, allocatable: number) => fullAt(hourlyP95(series.map((p) => ({ at: p.at, value: pick(p) }))), allocatable, until);
      return { cpuRequestsFullAt: of((p) => p.cpu, group.cpu.allocatable), memoryRequestsFullAt: of((p) => p.memory, group.memory.allocatable), podsFullAt: null };
    };
    const { groups, total } = tally.result();
    return {
      generatedAt: now,
      groupBy: groupings.map(dimensionName),
      // Without groupings the one group is the total.
      groups: groups.map(({ id, ...group }) => ({ ...group, trends: trendsOf(groupings.length ? id : null), forecast: forecastOf(groupings.length ? id : null, group) })),
      total: { ...total, trends: trendsOf(null), forecast: forecastOf(null, total) },
      podShape: shape ? { cpuMillicores: shape.cpuMillicores, memoryBytes: shape.memoryBytes, extended: [...(shape.extended ?? [])] } : null,
      incompleteClusters,
    };
  }

  private amountsOf(node: CachedNode): NodeAmounts {
    let amounts = this.amounts.get(node);
    if (!amounts) this.amounts.set(node, (amounts = nodeAmounts(node)));
    return amounts;
  }

  private cluster(name: string) {
    assertConfiguredCluster(this.clusters, name);
    return this.clusters.get(name)!;
  }
}

/**
 * How a period is read: sampling by sampling when it is at most {@link RAW_PERIOD_MS} long and
 * within the raw retention; otherwise hour by hour, from the start of the hour `since` falls in.
 */
export function trendsResolution(period: { since: Date; until: Date }, now: Date, rawRetentionHours: number): { since: Date; until: Date; resolution: TrendResolution } {
  const rawFrom = now.getTime() - rawRetentionHours * HOUR_MS;
  if (period.until.getTime() - period.since.getTime() <= RAW_PERIOD_MS && period.since.getTime() >= rawFrom) return { ...period, resolution: "raw" };
  return { since: new Date(Math.floor(period.since.getTime() / HOUR_MS) * HOUR_MS), until: period.until, resolution: "hourly" };
}

/** The trends period [since, until), until defaulting to now; null without trendsSince. */
export function trendsPeriod(since: Date | null | undefined, until: Date | null | undefined, now: Date): { since: Date; until: Date } | null {
  if (!since) {
    if (until) throw new AppError(ErrorCode.BAD_USER_INPUT, "trendsUntil needs trendsSince");
    return null;
  }
  const end = until ?? now;
  if (end.getTime() < since.getTime()) {
    throw new AppError(ErrorCode.BAD_USER_INPUT, `trendsUntil (${end.toISOString()}) is before trendsSince (${since.toISOString()})`);
  }
  return { since, until: end };
}

/** Whether the cell rows may answer: no filter, and only dimensions and label keys a cell row carries. */
function isCellReport(filter: NodeFilter | null | undefined, groupings: readonly ReportGrouping[], labelKeys: readonly string[]): boolean {
  const unfiltered = !filter || Object.values(filter).every((value) => value == null);
  return unfiltered && groupings.every((g) => (g.by === "LABEL" ? labelKeys.includes(g.labelKey!) : CELL_COLUMNS[g.by] !== undefined));
}

/** A group's key from its id (the JSON array of its values). */
function keyOf(groupings: readonly ReportGrouping[], id: string): ReportKey[] {
  const values = JSON.parse(id) as (string | null)[];
  return groupings.map((grouping, i) => ({ dimension: dimensionName(grouping), value: values[i] ?? null }));
}

function resourceTrend(trend: GroupTrend, resource: "cpu" | "memory"): ResourceTrend {
  const usage = resource === "cpu" ? trend.cpuUsage : trend.memoryUsage;
  const requests = resource === "cpu" ? trend.cpuRequests : trend.memoryRequests;
  return { peakUsage: usage.peak, p95Usage: usage.p95, peakRequests: requests.peak ?? 0, p95Requests: requests.p95 ?? 0 };
}

/** A deleted node in the shape the node filter reads (name, labels, conditions, schedulability). */
function departedAsNode(departed: DepartedNode): CachedNode {
  return {
    cluster: departed.cluster,
    name: departed.name,
    uid: "",
    resourceVersion: "",
    creationTimestamp: "",
    labels: departed.labels,
    annotations: {},
    taints: [],
    unschedulable: departed.unschedulable,
    conditions: Object.entries(departed.conditions).map(([type, status]) => ({ type, status })),
    addresses: [],
    nodeInfo: { kubeletVersion: "", containerRuntimeVersion: "", osImage: "", kernelVersion: "", operatingSystem: "", architecture: "" },
    capacity: {},
    allocatable: {},
  };
}
