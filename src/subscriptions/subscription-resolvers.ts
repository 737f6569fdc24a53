import { CloseCode } from "../graphql/close-codes.js";
import type { RequestContext } from "../graphql/context.js";
import type { Resolvers } from "../graphql/schema.js";
import { assertConfiguredCluster } from "../cluster/unknown-cluster.js";
import type { MaintenanceEventView } from "../history/history-queries.js";
import { compileNodeFilter } from "../inventory/node-filter.js";
import { nodeFilterFacts, type CachesByName } from "../inventory/heartbeats.js";
import { BoundedQueue } from "./bounded-queue.js";
import type { NodeStatusEvent, SubscriptionHub } from "./subscription-hub.js";
import type { ClusterStatusFeed } from "./cluster-status-feed.js";
import type { Cluster } from "../graphql/generated/resolvers-types.js";

/** Where clusterStatusChanged reads from: the feed of changes and each cluster as Query.clusters has it. */
export interface ClusterStatusSource {
  feed: ClusterStatusFeed;
  view(cluster: string): Cluster | undefined;
}

/** Events one subscription may have undelivered before its connection is closed. */
export const SUBSCRIBER_QUEUE = 1_000;

/**
 * A bounded stream of the hub's events for one subscription. A subscriber that falls
 * SUBSCRIBER_QUEUE events behind is cut off with a clear close code; the others never wait.
 */
function stream<T>(context: RequestContext, capacity: number, listen: (push: (event: T) => void) => () => void): BoundedQueue<T> {
  let stop = () => {};
  const queue = new BoundedQueue<T>(
    capacity,
    () => {
      context.logger.warn({ capacity }, "subscriber too slow: closing its connection");
      context.closeConnection?.(CloseCode.TryAgainLater, `Subscriber too slow: more than ${capacity} events undelivered`);
    },
    () => stop(),
  );
  stop = listen((event) => queue.push(event));
  return queue;
}

/**
 * Subscription.nodeStatusChanged, Subscription.maintenanceEvents and Subscription.clusterStatusChanged.
 * A cluster not among `clusters` is NOT_FOUND at subscribe time, never a stream that waits forever.
 */
export function subscriptionResolvers(hub: SubscriptionHub, queueSize = SUBSCRIBER_QUEUE, clusters?: { names(): string[] } & Partial<CachesByName>, clusterStatus?: ClusterStatusSource): Resolvers {
  const known = (cluster: string | null | undefined) => clusters && assertConfiguredCluster(clusters, cluster);
  return {
    Subscription: {
      nodeStatusChanged: {
        subscribe: (_root, args, context) => {
          // Validated at subscribe time, so a bad selector is an error, not a silent stream.
          known(args.cluster);
          const matches = compileNodeFilter(args.filter, clusters?.get ? nodeFilterFacts(clusters as CachesByName) : undefined);
          const hasFilter = args.filter != null && Object.values(args.filter).some((v) => v != null);
          return stream<NodeStatusEvent>(context, queueSize, (push) =>
            hub.onStatus((event) => {
              if (args.cluster != null && event.cluster !== args.cluster) return;
              // A deleted node matches no filter but the empty one.
              if (hasFilter && (!event.node || !matches(event.node))) return;
              push(event);
            }),
          );
        },
        resolve: (event: NodeStatusEvent) => event,
      },
      maintenanceEvents: {
        subscribe: (_root, args, context) => {
          known(args.cluster);
          return stream<MaintenanceEventView>(context, queueSize, (push) =>
            hub.onMaintenance((event) => {
              if (args.cluster != null && event.cluster !== args.cluster) return;
              if (args.node != null && event.node !== args.node) return;
              push(event);
            }),
          );
        },
        resolve: (event: MaintenanceEventView) => event,
      },
      clusterStatusChanged: {
        subscribe: (_root, args, context) => {
          known(args.cluster);
          if (!clusterStatus) throw new Error("clusterStatusChanged is not wired");
          return stream<Cluster>(context, queueSize, (push) =>
            clusterStatus.feed.onChange((name) => {
              if (args.cluster != null && name !== args.cluster) return;
              const view = clusterStatus.view(name);
              if (view) push(view);
            }),
          );
        },
        resolve: (cluster: Cluster) => cluster,
      },
    },
  };
}
