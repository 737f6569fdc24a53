import type { CachedNode, CachedPod, NodeCondition, NodeUsageSample } from "../cluster/model.js";
import type { KeyValue, Node, NodeResolvers, NodeUsage, Pod, PodResolvers } from "../graphql/generated/resolvers-types.js";
import type { CompleteResolvers, Resolvers } from "../graphql/schema.js";
import { nodeRoles, nodeStatusColumn } from "../k8s/node-display.js";
import type { InventoryService } from "./inventory-service.js";
import type { NodeFactsFields } from "./node-facts-resolvers.js";
import type { NodeLifecycleFields } from "../node-lifecycle/node-lifecycle-resolvers.js";
import { conditionStatus, readyStatus } from "./node-filter.js";
import { resourcesView, usageView, type PodResourceTotals } from "./resources.js";

function keyValues(map: Readonly<Record<string, string>>): KeyValue[] {
  return Object.keys(map)
    .sort()
    .map((key) => ({ key, value: map[key]! }));
}

/** An RFC 3339 time as Kubernetes wrote it, as the schema's DateTime. */
function timestamp(text: string | undefined): Date | null {
  return text === undefined ? null : new Date(text);
}

function splitRuntime(version: string): [string, string] {
  const at = version.indexOf("://");
  return at < 0 ? [version, ""] : [version.slice(0, at), version.slice(at + 3)];
}

/**
 * Per-object memo: cached nodes and pod totals are immutable (a change replaces the object),
 * so a view computed once is valid until the object is dropped. A query for 5,000 nodes then
 * mostly reuses what the previous query built.
 */
function memo<K extends object, V>(compute: (key: K) => V): (key: K) => V {
  const views = new WeakMap<K, V>();
  return (key) => {
    let view = views.get(key);
    if (view === undefined) views.set(key, (view = compute(key)));
    return view;
  };
}

/** Node fields resolved by the history and maintenance concerns (history-resolvers.ts, maintenance-resolvers.ts). */
type NodeFieldsOfOtherConcerns = "conditionTransitions" | "maintenanceEvents" | "activeDrain" | "changes" | NodeFactsFields | NodeLifecycleFields;

/** Query.clusters, Query.nodes, Query.node and the Node, Pod and Cluster fields. */
export function inventoryResolvers(inventory: InventoryService): Resolvers {
  const labels = memo((node: CachedNode) => keyValues(node.labels));
  const annotations = memo((node: CachedNode) => keyValues(node.annotations));
  const capacity = memo((node: CachedNode) => resourcesView(node.capacity));
  const allocatable = memo((node: CachedNode) => resourcesView(node.allocatable));
  const requests = memo((totals: PodResourceTotals) => resourcesView(totals.requests));
  // Per metrics sample (replaced at every poll), for the node it was computed against.
  const usageViews = new WeakMap<NodeUsageSample, { node: CachedNode; view: NodeUsage }>();
  const usage = (sample: NodeUsageSample, node: CachedNode): NodeUsage => {
    const known = usageViews.get(sample);
    if (known?.node === node) return known.view;
    const view = usageView(sample, node.allocatable);
    usageViews.set(sample, { node, view });
    return view;
  };
  const limits = memo((totals: PodResourceTotals) => resourcesView(totals.limits));
  const conditions = memo((node: CachedNode) =>
    node.conditions.map((c: NodeCondition) => ({
      type: c.type,
      status: conditionStatus(c.status),
      reason: c.reason ?? null,
      message: c.message ?? null,
      lastHeartbeatTime: timestamp(c.lastHeartbeatTime),
      lastTransitionTime: timestamp(c.lastTransitionTime),
    })),
  );
  const nodeInfo = memo((node: CachedNode) => {
    const [containerRuntime, containerRuntimeRelease] = splitRuntime(node.nodeInfo.containerRuntimeVersion);
    return { ...node.nodeInfo, containerRuntime, containerRuntimeRelease };
  });
  return {
    Query: {
      clusters: () => inventory.clusterViews(),
      nodes: (_root, args) => inventory.nodes(args),
      node: (_root, args) => inventory.node(args.cluster, args.name),
    },
    Node: {
      id: (node) => `${node.cluster}/${node.name}`,
      createdAt: (node) => new Date(node.creationTimestamp),
      labels,
      label: (node, { key }) => node.labels[key] ?? null,
      annotations,
      taints: (node) => node.taints.map((t) => ({ key: t.key, value: t.value ?? null, effect: t.effect })),
      roles: (node) => nodeRoles(node.labels),
      zone: (node) => node.labels["topology.kubernetes.io/zone"] ?? null,
      region: (node) => node.labels["topology.kubernetes.io/region"] ?? null,
      instanceType: (node) => node.labels["node.kubernetes.io/instance-type"] ?? null,
      ready: (node) => readyStatus(node),
      status: (node) => nodeStatusColumn({ spec: { unschedulable: node.unschedulable }, status: { conditions: [...node.conditions] } }),
      conditions,
      nodeInfo,
      capacity,
      allocatable,
      requests: (node) => requests(inventory.podTotals(node)),
      limits: (node) => limits(inventory.podTotals(node)),
      podCount: (node) => inventory.podTotals(node).podCount,
      usage: (node) => {
        const sample = inventory.usage(node);
        return sample ? usage(sample, node) : null;
      },
      pods: (node, { namespace }) => inventory.pods(node, namespace),
    } satisfies Omit<CompleteResolvers<NodeResolvers, CachedNode, Node>, NodeFieldsOfOtherConcerns>,
    Pod: {
      ownerKind: (pod) => pod.ownerKind ?? null,
      requests: (pod) => resourcesView(pod.requests),
      limits: (pod) => resourcesView(pod.limits),
    } satisfies CompleteResolvers<PodResolvers, CachedPod, Pod>,
  };
}
