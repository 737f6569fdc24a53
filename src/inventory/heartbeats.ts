/**
 * Heartbeats: a node's Lease renewals, as the node lifecycle controller judges them. A node
 * whose Lease is older than the grace period while Ready still says True is one the control
 * plane has not noticed yet (or cannot: its node controller is down).
 */
import type { ClusterCache } from "../cluster/cluster-cache.js";
import type { CachedNode } from "../cluster/model.js";
import { NODE_MONITOR_GRACE_SECONDS } from "../cluster/node-facts-cache.js";
import { readyStatus, type NodeFilterFacts } from "./node-filter.js";

/** The caches by cluster name: a ClusterRegistry. */
export interface CachesByName {
  get(name: string): ClusterCache | undefined;
}

/** Ready is True but the Lease is overdue. A node without a Lease is not judged (old clusters, virtual kubelets). */
export function heartbeatStale(clusters: CachesByName, node: CachedNode): boolean {
  if (readyStatus(node) !== "TRUE") return false;
  const heartbeat = clusters.get(node.cluster)?.facts.heartbeat(node.name);
  return heartbeat !== undefined && heartbeat.ageSeconds > NODE_MONITOR_GRACE_SECONDS;
}

/** What compileNodeFilter needs to answer staleHeartbeat over these caches. */
export function nodeFilterFacts(clusters: CachesByName): NodeFilterFacts {
  return { heartbeatStale: (node) => heartbeatStale(clusters, node) };
}
