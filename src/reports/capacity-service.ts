import type { ClusterRegistry } from "../cluster/cluster-registry.js";
import type { CachedNode } from "../cluster/model.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import type { InventoryService } from "../inventory/inventory-service.js";
import { compileNodeFilter, type NodeFilterInput } from "../inventory/node-filter.js";
import { CapacityTally, nodeAmounts, type CapacityGroupView, type NodeAmounts } from "./capacity-report.js";
import { dimensionName, groupKey, validateGroupings, type ReportGrouping } from "./grouping.js";
import { compilePodShape, type PodShapeInput } from "./pod-fit.js";
import { emptyTrend, type DepartedNode, type GroupTrend, type NodeGroups, type TrendsStore } from "./trends-store.js";

/** Query.capacityReport's arguments. */
export interface CapacityReportQuery {
  cluster?: string | null;
  filter?: NodeFilterInput | null;
  groupBy?: readonly ReportGrouping[] | null;
  podShape?: PodShapeInput | null;
  trendsSince?: Date | null;
  trendsUntil?: Date | null;
}

/** The GraphQL `ResourceTrend`. */
export interface ResourceTrendView {
  peakUsage: number | null;
  p95Usage: number | null;
  peakRequests: number;
  p95Requests: number;
}

/** The GraphQL `CapacityTrends`. */
export interface CapacityTrendsView {
  from: Date;
  to: Date;
  samples: number;
  cpu: ResourceTrendView;
  memory: ResourceTrendView;
}

export type CapacityGroupWithTrends = CapacityGroupView & { trends: CapacityTrendsView | null };

/** The GraphQL `CapacityReport`. */
export interface CapacityReportView {
  generatedAt: Date;
  groupBy: string[];
  groups: CapacityGroupWithTrends[];
  total: CapacityGroupWithTrends;
  podShape: { cpuMillicores: number; memoryBytes: number } | null;
  incompleteClusters: string[];
}

/**
 * Query.capacityReport: live figures from the watch caches in one pass over the nodes, and,
 * for a trends period, the sampled peaks and p95 from the database.
 *
 * Which nodes trends cover: the nodes the live figures cover (the filter applied to them as
 * they are now), plus nodes deleted during the period, grouped and filtered as history last
 * recorded them, so a pool that has since shrunk still shows the peak it had. Clusters that
 * are not synced are left out of both and named in incompleteClusters.
 */
export class CapacityReports {
  /** Parsed capacity and allocatable per cached node: nodes are immutable, a change replaces them. */
  private readonly amounts = new WeakMap<CachedNode, NodeAmounts>();

  constructor(
    private readonly clusters: ClusterRegistry,
    private readonly inventory: InventoryService,
    private readonly trends: TrendsStore,
  ) {}

  /**
   * @throws AppError BAD_USER_INPUT for a bad filter, grouping, pod shape or period; NOT_FOUND for
   *   a cluster that is not configured; UNAVAILABLE when trends are asked for and the database fails.
   */
  async report(query: CapacityReportQuery, now = new Date()): Promise<CapacityReportView> {
    const groupings = validateGroupings(query.groupBy);
    const matches = compileNodeFilter(query.filter);
    const shape = query.podShape ? compilePodShape(query.podShape) : undefined;
    const period = trendsPeriod(query.trendsSince, query.trendsUntil, now);
    const caches = query.cluster != null ? [this.cluster(query.cluster)] : this.clusters.all();

    const tally = new CapacityTally(groupings, shape);
    const incompleteClusters: string[] = [];
    const covered: string[] = [];
    // Only with a period: which group each node's samples count in.
    const nodeGroups: NodeGroups | undefined = period ? { clusters: [], nodes: [], groups: [] } : undefined;
    const groupNumbers = new Map<string, number>();
    const groupNumber = (id: string) => {
      let n = groupNumbers.get(id);
      if (n === undefined) groupNumbers.set(id, (n = groupNumbers.size));
      return n;
    };

    for (const cache of caches) {
      if (!cache.status().synced) {
        incompleteClusters.push(cache.name);
        continue;
      }
      covered.push(cache.name);
      for (const node of cache.allNodes()) {
        if (!matches(node)) continue;
        const id = tally.add(node, this.amountsOf(node), this.inventory.podTotals(node), cache.usage(node.name));
        if (nodeGroups) {
          nodeGroups.clusters.push(node.cluster);
          nodeGroups.nodes.push(node.name);
          nodeGroups.groups.push(groupNumber(id));
        }
      }
    }

    let trendsByGroup: Map<number | null, GroupTrend> | undefined;
    if (period && nodeGroups) {
      for (const departed of await this.trends.departedNodes(covered, period.since)) {
        if (this.clusters.get(departed.cluster)?.node(departed.name)) continue;
        const node = departedAsNode(departed);
        if (!matches(node)) continue;
        const { key, id } = groupings.length ? groupKey(groupings, node.cluster, node.labels) : { key: [], id: "" };
        tally.ensureGroup(id, key);
        nodeGroups.clusters.push(node.cluster);
        nodeGroups.nodes.push(node.name);
        nodeGroups.groups.push(groupNumber(id));
      }
      trendsByGroup = await this.trends.groupTrends(nodeGroups, period.since, period.until);
    }

    const trendsOf = (group: number | null | undefined): CapacityTrendsView | null => {
      if (!period || !trendsByGroup) return null;
      const trend = (group === undefined ? undefined : trendsByGroup.get(group)) ?? emptyTrend();
      return { from: period.since, to: period.until, samples: trend.samples, cpu: resourceTrend(trend, "cpu"), memory: resourceTrend(trend, "memory") };
    };
    const { groups, total } = tally.result();
    return {
      generatedAt: now,
      groupBy: groupings.map(dimensionName),
      groups: groups
        .map(({ id, ...group }) => ({ ...group, trends: trendsOf(groupNumbers.get(id)) }))
        // A group known only from departed nodes is worth showing only if it has samples.
        .filter((group) => groupings.length === 0 || group.nodeCount > 0 || (group.trends?.samples ?? 0) > 0),
      total: { ...total, trends: trendsOf(null) },
      podShape: shape ? { cpuMillicores: shape.cpuMillicores, memoryBytes: shape.memoryBytes } : null,
      incompleteClusters,
    };
  }

  private amountsOf(node: CachedNode): NodeAmounts {
    let amounts = this.amounts.get(node);
    if (!amounts) this.amounts.set(node, (amounts = nodeAmounts(node)));
    return amounts;
  }

  private cluster(name: string) {
    const cache = this.clusters.get(name);
    if (!cache) throw new AppError(ErrorCode.NOT_FOUND, `cluster "${name}" is not configured (clusters: ${this.clusters.names().join(", ")})`);
    return cache;
  }
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

function resourceTrend(trend: GroupTrend, resource: "cpu" | "memory"): ResourceTrendView {
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
