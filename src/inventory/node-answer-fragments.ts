import type { CachedNode } from "../cluster/model.js";
import type { CachedAnswerType } from "../performance/answer-fragments.js";
import type { InventoryService } from "./inventory-service.js";

/**
 * What each Node field's answer is computed from, so that a node's JSON can be written once and
 * reused while those inputs are unchanged (performance/answer-fragments.ts). Cached nodes are
 * immutable (a change replaces the object); the pod totals object is replaced whenever a pod
 * of the node changes (InventoryService.podTotals, per pod generation); the metrics sample is
 * replaced at every poll. A Node field missing here (history, drains, events, heartbeats,
 * anything added later) is never cached: a selection asking for one runs as before.
 */
/**
 * The Node fields never cached, because they read something besides the node, its pods and its
 * metrics sample: history and drains (the database), events, heartbeats (their age is as of
 * each answer), the kubelet's configuration and logs (asked of the kubelet), eviction outlook
 * (other nodes), debug pods and kube-proxy's mode (other objects of the cluster). A test checks these and the groups together against the schema's Node type,
 * so a field added to the schema is a decision here, not silently uncached or wrongly cached.
 */
export const UNCACHED_NODE_FIELDS = [
  "activeDrain",
  "conditionTransitions",
  "maintenanceEvents",
  "changes",
  "events",
  "heartbeatTime",
  "heartbeatAgeSeconds",
  "evictionOutlook",
  "kubeletConfig",
  "kubeletConfigUnavailableReason",
  "logs",
  "debugPods",
  "kubeProxyMode",
] as const;

export function nodeAnswerFragments(inventory: InventoryService): CachedAnswerType<CachedNode> {
  return {
    typeName: "Node",
    groups: [
      {
        // Read from the cached node alone (inventory-resolvers.ts, node-facts-resolvers.ts).
        fields: [
          "__typename",
          "id",
          "cluster",
          "name",
          "uid",
          "createdAt",
          "labels",
          "label",
          "annotations",
          "taints",
          "roles",
          "zone",
          "region",
          "instanceType",
          "unschedulable",
          "ready",
          "status",
          "conditions",
          "addresses",
          "nodeInfo",
          "capacity",
          "allocatable",
          "providerID",
          "podCIDRs",
          "volumesAttached",
          "volumesInUse",
          "images",
        ],
        inputOf: (node) => node,
      },
      // The node's pods: their sums and the pods themselves change together with the pod generation.
      { fields: ["requests", "limits", "podCount", "pods"], inputOf: (node) => inventory.podTotals(node) },
      // The node's metrics sample (and the node's allocatable, for the percentages).
      { fields: ["usage"], inputOf: (node) => inventory.usage(node) },
    ],
  };
}
