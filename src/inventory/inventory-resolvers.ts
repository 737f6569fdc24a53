import type { CachedNode, CachedPod, NodeCondition } from "../cluster/model.js";
import type { Resolvers } from "../graphql/schema.js";
import { nodeRoles, nodeStatusColumn } from "../k8s/node-display.js";
import type { InventoryService, NodesQuery } from "./inventory-service.js";
import { readyStatus } from "./node-filter.js";
import { resourcesView, usageView } from "./resources.js";

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

/** Query.clusters, Query.nodes, Query.node and the Node, Pod and Cluster fields. */
export function inventoryResolvers(inventory: InventoryService): Resolvers {
  return {
    Query: {
      clusters: () => inventory.clusterViews(),
      nodes: (_root, args: NodesQuery) => inventory.nodes(args),
      node: (_root, args: { cluster?: string | null; name: string }) => inventory.node(args.cluster, args.name),
    },
    Node: {
      id: (node: CachedNode) => `${node.cluster}/${node.name}`,
      createdAt: (node: CachedNode) => node.creationTimestamp,
      labels: (node: CachedNode) => keyValues(node.labels),
      label: (node: CachedNode, { key }: { key: string }) => node.labels[key] ?? null,
      annotations: (node: CachedNode) => keyValues(node.annotations),
      taints: (node: CachedNode) => node.taints.map((t) => ({ key: t.key, value: t.value ?? null, effect: t.effect })),
      roles: (node: CachedNode) => nodeRoles(node.labels),
      zone: (node: CachedNode) => node.labels["topology.kubernetes.io/zone"] ?? null,
      region: (node: CachedNode) => node.labels["topology.kubernetes.io/region"] ?? null,
      instanceType: (node: CachedNode) => node.labels["node.kubernetes.io/instance-type"] ?? null,
      ready: (node: CachedNode) => readyStatus(node),
      status: (node: CachedNode) => nodeStatusColumn({ spec: { unschedulable: node.unschedulable }, status: { conditions: [...node.conditions] } }),
      conditions: (node: CachedNode) =>
        node.conditions.map((c: NodeCondition) => ({
          type: c.type,
          status: CONDITION_STATUS[c.status] ?? "UNKNOWN",
          reason: c.reason ?? null,
          message: c.message ?? null,
          lastHeartbeatTime: c.lastHeartbeatTime ?? null,
          lastTransitionTime: c.lastTransitionTime ?? null,
        })),
      nodeInfo: (node: CachedNode) => {
        const [containerRuntime, containerRuntimeRelease] = splitRuntime(node.nodeInfo.containerRuntimeVersion);
        return { ...node.nodeInfo, containerRuntime, containerRuntimeRelease };
      },
      capacity: (node: CachedNode) => resourcesView(node.capacity),
      allocatable: (node: CachedNode) => resourcesView(node.allocatable),
      requests: (node: CachedNode) => resourcesView(inventory.podTotals(node).requests),
      limits: (node: CachedNode) => resourcesView(inventory.podTotals(node).limits),
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
