/**
 * The contract's NodeOrderBy: a total, stable order over nodes of one or many clusters.
 * Pure: usage and pod counts come in through accessors, so the caches stay outside.
 */

import type { CachedNode, NodeUsageSample } from "../cluster/model.js";
import type { NodeOrderBy, NodeOrderField } from "../graphql/generated/resolvers-types.js";
import type { ConnectionArgs } from "../graphql/page-size.js";
import { compareSortKeys, paginate, type OrderSpec, type Page, type SortKey } from "./pagination.js";

/** What ordering needs beyond the node itself. */
export interface NodeOrderMetrics {
  /** The node's latest metrics sample, or undefined when there is none. */
  usage(node: CachedNode): NodeUsageSample | undefined;
  /** Non-terminated pods on the node, as Node.podCount reports it. */
  podCount(node: CachedNode): number;
}

/** The ordering used when the query gives none: by name. */
export const DEFAULT_NODE_ORDER: OrderSpec & { field: NodeOrderField } = Object.freeze({ field: "NAME", direction: "ASC" });

/** orderBy with its defaults filled in: NAME when omitted, ASC when no direction is given. */
export function resolveNodeOrder(orderBy: NodeOrderBy | null | undefined): OrderSpec & { field: NodeOrderField } {
  if (!orderBy) return DEFAULT_NODE_ORDER;
  return { field: orderBy.field, direction: orderBy.direction ?? "ASC" };
}

/**
 * The sort key of a node under an ordering: [primary, cluster, name]. Primary values:
 * NAME the name; CREATED_AT milliseconds since the epoch (null if unparseable); CPU_USAGE
 * millicores and MEMORY_USAGE bytes of the latest sample (null without one, sorting last in
 * both directions); POD_COUNT the pod count. Ties are broken by cluster, then name, ascending.
 */
export function nodeKeyOf(orderBy: NodeOrderBy | null | undefined, metrics: NodeOrderMetrics): (node: CachedNode) => SortKey {
  const { field } = resolveNodeOrder(orderBy);
  switch (field) {
    case "NAME":
      return (n) => [n.name, n.cluster, n.name];
    case "CREATED_AT":
      return (n) => {
        const ms = Date.parse(n.creationTimestamp);
        return [Number.isFinite(ms) ? ms : null, n.cluster, n.name];
      };
    case "CPU_USAGE":
      return (n) => [metrics.usage(n)?.cpuMillicores ?? null, n.cluster, n.name];
    case "MEMORY_USAGE":
      return (n) => [metrics.usage(n)?.memoryBytes ?? null, n.cluster, n.name];
    case "POD_COUNT":
      return (n) => [metrics.podCount(n), n.cluster, n.name];
  }
}

/**
 * Returns a new array of the nodes in the requested order (see {@link nodeKeyOf}); the input is
 * not changed. Keys are computed once per node, not once per comparison.
 */
export function sortNodes(nodes: Iterable<CachedNode>, orderBy: NodeOrderBy | null | undefined, metrics: NodeOrderMetrics): CachedNode[] {
  const { direction } = resolveNodeOrder(orderBy);
  const keyOf = nodeKeyOf(orderBy, metrics);
  const keyed: { key: SortKey; node: CachedNode }[] = [];
  for (const node of nodes) keyed.push({ key: keyOf(node), node });
  keyed.sort((a, b) => compareSortKeys(a.key, b.key, direction));
  return keyed.map((k) => k.node);
}

/**
 * One page of nodes already sorted by {@link sortNodes} with the same `orderBy` and `metrics`:
 * {@link paginate} with this ordering's key and cursor identity filled in.
 * @throws AppError BAD_USER_INPUT for a bad `first`, `last`, `after` or `before`.
 */
export function paginateNodes(sorted: readonly CachedNode[], orderBy: NodeOrderBy | null | undefined, metrics: NodeOrderMetrics, args: ConnectionArgs): Page<CachedNode> {
  return paginate(sorted, nodeKeyOf(orderBy, metrics), args, resolveNodeOrder(orderBy));
}
