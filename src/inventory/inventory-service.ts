import { assertConfiguredCluster } from "../cluster/unknown-cluster.js";
import type { ClusterCache } from "../cluster/cluster-cache.js";
import type { ClusterRegistry } from "../cluster/cluster-registry.js";
import type { CachedNode, CachedPod } from "../cluster/model.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import { globalId } from "../graphql/global-id.js";
import type { Cluster, QueryNodesArgs } from "../graphql/generated/resolvers-types.js";
import { compileNodeFilter, readyStatus } from "./node-filter.js";
import { nodeFilterFacts } from "./heartbeats.js";
import { paginateNodes, resolveNodeOrder, sortNodes, type NodeOrderMetrics } from "./node-order.js";
import type { Page } from "./pagination.js";
import { sumPodResources, type PodResourceTotals } from "./resources.js";

/**
 * The live inventory: answers every node question from the watch caches, synchronously.
 * Nothing here calls the Kubernetes API.
 */
export class InventoryService {
  /** Pod sums by cluster and node, each valid while the node's pod generation is unchanged. */
  private readonly sums = new Map<string, Map<string, { generation: number; totals: PodResourceTotals }>>();
  /**
   * Every cluster's nodes in the default order (by name, then cluster), as [cluster, node name]
   * in each direction, kept while no node is added or removed: the fleet's answer across twenty
   * clusters sorted 10,000 keys per query.
   */
  private nameOrders = new Map<string, [ClusterCache, string][]>();

  constructor(private readonly clusters: ClusterRegistry) {
    for (const cache of clusters.all()) {
      cache.on("node", (change) => {
        if (!change.after) this.sums.get(change.cluster)?.delete(change.name);
        if (!change.after || !change.before) this.nameOrders.clear();
      });
    }
  }

  clusterViews(): Cluster[] {
    return this.clusters.all().map((cache) => {
      const status = cache.status();
      return {
        id: globalId("Cluster", cache.name),
        name: cache.name,
        connected: status.connected,
        synced: status.synced,
        nodeCount: cache.nodeCount,
        // Counted only when asked: a status poll ({ clusters { synced } }) need not read 5,000 nodes.
        get readyNodeCount() {
          let ready = 0;
          for (const node of cache.allNodes()) if (readyStatus(node) === "TRUE") ready++;
          return ready;
        },
        lastError: status.lastError ?? null,
        metricsAvailable: status.metricsAvailable,
        simulated: this.clusters.isSimulated(cache.name),
        disconnectedSince: status.disconnectedSince ?? null,
        resets: status.resets,
        lastResetAt: status.lastResetAt ?? null,
      };
    });
  }

  nodes(query: QueryNodesArgs): Page<CachedNode> {
    const caches = query.cluster != null ? [this.cluster(query.cluster)] : this.clusters.all();
    const matches = compileNodeFilter(query.filter ?? undefined, nodeFilterFacts(this.clusters));
    const metrics = { usage: (node: CachedNode) => this.usage(node), podCount: (node: CachedNode) => this.podTotals(node).podCount };
    const order = resolveNodeOrder(query.orderBy);
    const selected: CachedNode[] = [];
    if (caches.length > 1 && order.field === "NAME") {
      // A subset of an ordered list, taken in its order, is ordered.
      for (const [cache, name] of this.nameOrder(caches, query.orderBy, metrics)) {
        const node = cache.node(name);
        if (node && matches(node)) selected.push(node);
      }
      return paginateNodes(selected, query.orderBy, metrics, query);
    }
    for (const cache of caches) for (const node of cache.allNodes()) if (matches(node)) selected.push(node);
    return paginateNodes(sortNodes(selected, query.orderBy, metrics), query.orderBy, metrics, query);
  }

  private nameOrder(caches: readonly ClusterCache[], orderBy: QueryNodesArgs["orderBy"], metrics: NodeOrderMetrics): [ClusterCache, string][] {
    const direction = resolveNodeOrder(orderBy).direction;
    let order = this.nameOrders.get(direction);
    if (!order) {
      const byCluster = new Map(caches.map((cache) => [cache.name, cache]));
      order = sortNodes((function* () {
        for (const cache of caches) yield* cache.allNodes();
      })(), orderBy, metrics).map((node) => [byCluster.get(node.cluster)!, node.name]);
      this.nameOrders.set(direction, order);
    }
    return order;
  }

  /** One node; `cluster` may be omitted when exactly one cluster is configured. */
  node(clusterName: string | null | undefined, name: string): CachedNode {
    const cache = clusterName != null ? this.cluster(clusterName) : this.onlyCluster();
    const node = cache.node(name);
    if (!node) throw new AppError(ErrorCode.NOT_FOUND, `node "${name}" not found in cluster "${cache.name}"`);
    return node;
  }

  /** The pods bound to `node`, optionally of one namespace, sorted by namespace and name. */
  pods(node: CachedNode, namespace?: string | null): CachedPod[] {
    const pods = [...(this.clusters.get(node.cluster)?.podsOn(node.name) ?? [])];
    const chosen = namespace != null ? pods.filter((pod) => pod.namespace === namespace) : pods;
    return chosen.sort((a, b) => (a.namespace === b.namespace ? cmp(a.name, b.name) : cmp(a.namespace, b.namespace)));
  }

  /** Requests, limits and count of the node's non-terminated pods, memoised per pod generation. */
  podTotals(node: CachedNode): PodResourceTotals {
    const cache = this.clusters.get(node.cluster);
    if (!cache) return sumPodResources([]);
    const generation = cache.podGenerationOf(node.name);
    let sums = this.sums.get(node.cluster);
    if (!sums) this.sums.set(node.cluster, (sums = new Map()));
    const memo = sums.get(node.name);
    if (memo && memo.generation === generation) return memo.totals;
    const totals = sumPodResources(cache.podsOn(node.name));
    sums.set(node.name, { generation, totals });
    return totals;
  }

  usage(node: CachedNode) {
    return this.clusters.get(node.cluster)?.usage(node.name);
  }

  /**
   * A cluster asked for by name. One that has never synced cannot answer (its emptiness
   * would be a lie): UNAVAILABLE. One that synced and lost its watch answers from the cache.
   */
  private cluster(name: string): ClusterCache {
    assertConfiguredCluster(this.clusters, name);
    return assertSynced(this.clusters.get(name)!);
  }

  private onlyCluster(): ClusterCache {
    const all = this.clusters.all();
    if (all.length !== 1) {
      throw new AppError(ErrorCode.BAD_USER_INPUT, `cluster is required: ${all.length} clusters are configured (${this.clusters.names().join(", ")})`);
    }
    return assertSynced(all[0]!);
  }
}

function assertSynced(cache: ClusterCache): ClusterCache {
  const status = cache.status();
  if (status.synced) return cache;
  throw new AppError(
    ErrorCode.UNAVAILABLE,
    status.lastError
      ? status.lastErrorReason === "Forbidden"
        ? `cluster "${cache.name}" refuses the service's own account: ${status.lastError}`
        : `cluster "${cache.name}" cannot be reached: ${status.lastError}`
      : `cluster "${cache.name}" is still loading its nodes; try again in a moment`,
  );
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
