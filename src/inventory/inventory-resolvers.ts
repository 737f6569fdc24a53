import type { CachedNode, CachedPod, NodeCondition } from "../cluster/model.js";
import type { Resolvers } from "../graphql/schema.js";
import { nodeRoles, nodeStatusColumn } from "../k8s/node-display.js";
import type { InventoryService, NodesQuery } from "./inventory-service.js";
import { readyStatus } from "./node-filter.js";
import { resourcesView, usageView, type PodResourceTotals } from "./resources.js";

const CONDITION_STATUS: Record<string, "TRUE" | "FALSE" | "UNKNOWN"> = { True: "TRUE", False: "FALSE", Unknown: "UNKNOWN" };

function keyValues(map: Readonly<Record<string, string>>): { key: string; value: string }[] {
  return Object.keys(map)
    .sort()
    .map((key) => ({ key, value: map[key]! }));
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

/** Query.clusters, Query.nodes, Query.node and the Node, Pod and Cluster fields. */
export function inventoryResolvers(inventory: InventoryService): Resolvers {
  const labels = memo((node: CachedNode) => keyValues(node.labels));
  const annotations = memo((node: CachedNode) => keyValues(node.annotations));
  const capacity = memo((node: CachedNode) => resourcesView(node.capacity));
  const allocatable = memo((node: CachedNode) => resourcesView(node.allocatable));
  const requests = memo((totals: PodResourceTotals) => resourcesView(totals.requests));
  const limits = memo((totals: PodResourceTotals) => resourcesView(totals.limits));
  const conditions = memo((node: CachedNode) =>
    node.conditions.map((c: NodeCondition) => ({
      type: c.type,
      status: CONDITION_STATUS[c.status] ?? "UNKNOWN",
      reason: c.reason ?? null,
      message: c.message ?? null,
      lastHeartbeatTime: c.lastHeartbeatTime ?? null,
      lastTransitionTime: c.lastTransitionTime ?? null,
    })),
  );
  const nodeInfo = memo((node: CachedNode) => {
    const [containerRuntime, containerRuntimeRelease] = splitRuntime(node.nodeInfo.containerRuntimeVersion);
    return { ...node.nodeInfo, containerRuntime, containerRuntimeRelease };
  });
  return {
    Query: {
      clusters: () => inventory.clusterViews(),
      nodes: (_root, args: NodesQuery) => inventory.nodes(args),
      node: (_root, args: { cluster?: string | null; name: string }) => inventory.node(args.cluster, args.name),
    },
    Node: {
      id: (node: CachedNode) => `${node.cluster}/${node.name}`,
      createdAt: (node: CachedNode) => node.creationTimestamp,
      labels,
      label: (node: CachedNode, { key }: { key: string }) => node.labels[key] ?? null,
      annotations,
      taints: (node: CachedNode) => node.taints.map((t) => ({ key: t.key, value: t.value ?? null, effect: t.effect })),
      roles: (node: CachedNode) => nodeRoles(node.labels),
      zone: (node: CachedNode) => node.labels["topology.kubernetes.io/zone"] ?? null,
      region: (node: CachedNode) => node.labels["topology.kubernetes.io/region"] ?? null,
      instanceType: (node: CachedNode) => node.labels["node.kubernetes.io/instance-type"] ?? null,
      ready: (node: CachedNode) => readyStatus(node),
      status: (node: CachedNode) => nodeStatusColumn({ spec: { unschedulable: node.unschedulable }, status: { conditions: [...node.conditions] } }),
      conditions,
      nodeInfo,
      capacity,
      allocatable,
      requests: (node: CachedNode) => requests(inventory.podTotals(node)),
      limits: (node: CachedNode) => limits(inventory.podTotals(node)),
      podCount: (node: CachedNode) => inventory.podTotals(node).podCount,
      usage: (node: CachedNode) => {
        const sample = inventory.usage(node);
        return sample ? usageView(sample, node.allocatable) : null;
      },
      pods: (node: CachedNode, { namespace }: { namespace?: string | null }) => inventory.pods(node, namespace),
    },
    Pod: {
      ownerKind: (pod: CachedPod) => pod.ownerKind ?? null,
      requests: (pod: CachedPod) => resourcesView(pod.requests),
      limits: (pod: CachedPod) => resourcesView(pod.limits),
    },
  };
}
