/**
 * The capacity report's arithmetic: node figures summed into groups in one pass. Pure: it is
 * handed each node with its pod totals and usage sample, and never looks anything up, so
 * tables of hand-made nodes test it and 5,000 cached nodes run through it in milliseconds.
 */

import type { CachedNode, NodeUsageSample } from "../cluster/model.js";
import type { CapacityGroup, ResourceCapacity } from "../graphql/generated/resolvers-types.js";
import { readyStatus } from "../inventory/node-filter.js";
import { isExtendedResource, type PodResourceTotals } from "../inventory/resources.js";
import { parseQuantity } from "../k8s/quantity.js";
import { compareKeys, groupKey, type ReportGrouping, type ReportKey } from "./grouping.js";
import { podsThatFit, toleratesNode, type PodShape } from "./pod-fit.js";

/** A node's cpu (millicores), memory and ephemeral storage (bytes) and pod slots, parsed. */
export interface Amounts {
  cpu: number;
  memory: number;
  pods: number;
  ephemeralStorage: number;
  /** Every other resource (nvidia.com/gpu, hugepages-2Mi …) by name, as Value. */
  extended: Readonly<Record<string, number>>;
}

/** A node's capacity and allocatable, parsed once (the report memoises it per cached node). */
export interface NodeAmounts {
  capacity: Amounts;
  allocatable: Amounts;
}

/** The GraphQL `CapacityGroup`, without trends and forecast (the service adds them). */
export type CapacityGroupView = Omit<CapacityGroup, "trends" | "forecast">;

/** Parses a node's capacity and allocatable as Kubernetes values them (cpu as MilliValue, others as Value). */
export function nodeAmounts(node: CachedNode): NodeAmounts {
  return { capacity: amounts(node.capacity), allocatable: amounts(node.allocatable) };
}

function amounts(list: Readonly<Record<string, string>>): Amounts {
  // stripNode keeps only quantities that parse, so these cannot throw.
  const value = (name: string) => (list[name] === undefined ? 0 : parseQuantity(list[name]!).value());
  const extended: Record<string, number> = {};
  for (const name in list) if (isExtendedResource(name)) extended[name] = value(name);
  return {
    cpu: list.cpu === undefined ? 0 : parseQuantity(list.cpu).milliValue(),
    memory: value("memory"),
    pods: value("pods"),
    ephemeralStorage: value("ephemeral-storage"),
    extended,
  };
}

/** Sums of one resource over a group's nodes. */
class ResourceSums {
  capacity = 0;
  allocatable = 0;
  requests = 0;
  limits = 0;
  /** Null until a node with a usage sample is added. */
  usage: number | null = null;

  constructor(private readonly unit: string) {}

  view(): ResourceCapacity {
    const ratio = (amount: number | null) => (amount === null || this.allocatable === 0 ? null : amount / this.allocatable);
    return {
      unit: this.unit,
      capacity: this.capacity,
      allocatable: this.allocatable,
      requests: this.requests,
      limits: this.limits,
      usage: this.usage,
      headroom: this.allocatable - this.requests,
      requestRatio: ratio(this.requests),
      overcommitRatio: ratio(this.limits),
      usageRatio: ratio(this.usage),
    };
  }
}

class GroupSums {
  nodeCount = 0;
  readyNodeCount = 0;
  schedulableNodeCount = 0;
  readonly cpu = new ResourceSums("millicores");
  readonly memory = new ResourceSums("bytes");
  readonly pods = new ResourceSums("pods");
  readonly ephemeralStorage = new ResourceSums("bytes");
  readonly extended = new Map<string, ResourceSums>();
  fitPods = 0;
  nodesWithRoom = 0;
  nodesExcluded = 0;

  constructor(readonly key: ReportKey[]) {}

  add(node: CachedNode, ready: boolean, amounts: NodeAmounts, totals: PodResourceTotals, usage: NodeUsageSample | undefined, fit: number): void {
    const { capacity, allocatable } = amounts;
    const requests = totals.requests;
    const limits = totals.limits;
    this.nodeCount++;
    if (ready) this.readyNodeCount++;
    if (!node.unschedulable) this.schedulableNodeCount++;

    this.cpu.capacity += capacity.cpu;
    this.cpu.allocatable += allocatable.cpu;
    this.cpu.requests += requests.cpu ?? 0;
    this.cpu.limits += limits.cpu ?? 0;
    this.memory.capacity += capacity.memory;
    this.memory.allocatable += allocatable.memory;
    this.memory.requests += requests.memory ?? 0;
    this.memory.limits += limits.memory ?? 0;
    if (usage) {
      this.cpu.usage = (this.cpu.usage ?? 0) + usage.cpuMillicores;
      this.memory.usage = (this.memory.usage ?? 0) + usage.memoryBytes;
    }
    // A pod takes one slot whatever it asks for: its "request" and "limit" of pods is 1.
    this.pods.capacity += capacity.pods;
    this.pods.allocatable += allocatable.pods;
    this.pods.requests += totals.podCount;
    this.pods.limits += totals.podCount;
    this.ephemeralStorage.capacity += capacity.ephemeralStorage;
    this.ephemeralStorage.allocatable += allocatable.ephemeralStorage;
    this.ephemeralStorage.requests += requests["ephemeral-storage"] ?? 0;
    this.ephemeralStorage.limits += limits["ephemeral-storage"] ?? 0;
    this.addExtended(capacity.extended, (sums, amount) => (sums.capacity += amount));
    this.addExtended(allocatable.extended, (sums, amount) => (sums.allocatable += amount));
    this.addExtended(requests, (sums, amount) => (sums.requests += amount));
    this.addExtended(limits, (sums, amount) => (sums.limits += amount));

    if (fit < 0) this.nodesExcluded++;
    else if (fit > 0) {
      this.fitPods += fit;
      this.nodesWithRoom++;
    }
  }

  private addExtended(amounts: Readonly<Record<string, number>>, add: (sums: ResourceSums, amount: number) => void): void {
    for (const name in amounts) {
      if (!isExtendedResource(name)) continue;
      let sums = this.extended.get(name);
      if (!sums) this.extended.set(name, (sums = new ResourceSums(name.startsWith("hugepages-") ? "bytes" : "count")));
      add(sums, amounts[name]!);
    }
  }

  view(withFit: boolean): CapacityGroupView {
    return {
      key: this.key,
      nodeCount: this.nodeCount,
      readyNodeCount: this.readyNodeCount,
      schedulableNodeCount: this.schedulableNodeCount,
      cpu: this.cpu.view(),
      memory: this.memory.view(),
      pods: this.pods.view(),
      ephemeralStorage: this.ephemeralStorage.view(),
      extended: [...this.extended.keys()].sort().map((name) => ({ name, figures: this.extended.get(name)!.view() })),
      fit: withFit ? { pods: this.fitPods, nodesWithRoom: this.nodesWithRoom, nodesExcluded: this.nodesExcluded } : null,
    };
  }
}

/** What the shape would get on one node: pods that fit, or -1 when the node is left out. */
export function nodeFit(node: CachedNode, ready: boolean, allocatable: Amounts, totals: PodResourceTotals, shape: PodShape): number {
  if (!ready || node.unschedulable || !toleratesNode(shape.tolerations, node.taints)) return -1;
  return podsThatFit(
    {
      cpuMillicores: allocatable.cpu - (totals.requests.cpu ?? 0),
      memoryBytes: allocatable.memory - (totals.requests.memory ?? 0),
      pods: allocatable.pods - totals.podCount,
      extended: freeExtended(allocatable.extended, totals.requests, shape),
    },
    shape,
  );
}

/** Allocatable minus requests of each extended resource the shape asks for. */
function freeExtended(allocatable: Readonly<Record<string, number>>, requests: Readonly<Record<string, number>>, shape: PodShape): Record<string, number> | undefined {
  if (!shape.extended) return undefined;
  const free: Record<string, number> = {};
  for (const { name } of shape.extended) free[name] = (allocatable[name] ?? 0) - (requests[name] ?? 0);
  return free;
}

/**
 * Sums nodes into the groups of `groupings` and into one total. Every figure is additive, so
 * one pass over the nodes is enough; the pods-that-fit count is taken per node (bin packing
 * on each node's own free space) and only then summed.
 */
export class CapacityTally {
  private readonly groups = new Map<string, GroupSums>();
  private readonly total = new GroupSums([]);

  constructor(
    private readonly groupings: readonly ReportGrouping[],
    private readonly shape: PodShape | undefined,
  ) {}

  /** Adds one node; returns the id of the group it went into. */
  add(node: CachedNode, amounts: NodeAmounts, totals: PodResourceTotals, usage: NodeUsageSample | undefined): string {
    const ready = readyStatus(node) === "TRUE";
    const fit = this.shape ? nodeFit(node, ready, amounts.allocatable, totals, this.shape) : 0;
    this.total.add(node, ready, amounts, totals, usage, fit);
    if (this.groupings.length === 0) return "";
    const { key, id } = groupKey(this.groupings, node.cluster, node.labels);
    let group = this.groups.get(id);
    if (!group) this.groups.set(id, (group = new GroupSums(key)));
    group.add(node, ready, amounts, totals, usage, fit);
    return id;
  }

  /** Makes sure a group exists even without live nodes (one known only from its trends). */
  ensureGroup(id: string, key: ReportKey[]): void {
    if (this.groupings.length > 0 && !this.groups.has(id)) this.groups.set(id, new GroupSums(key));
  }

  /**
   * The groups sorted by key (values in code-unit order, a missing value last), each with its
   * id, and the total. Without groupings there is one group: the total.
   */
  result(): { groups: (CapacityGroupView & { id: string })[]; total: CapacityGroupView } {
    const withFit = this.shape !== undefined;
    const total = this.total.view(withFit);
    if (this.groupings.length === 0) return { groups: [{ ...total, id: "" }], total };
    const groups = [...this.groups].map(([id, sums]) => ({ ...sums.view(withFit), id }));
    groups.sort((a, b) => compareKeys(a.key, b.key));
    return { groups, total };
  }
}

