/**
 * Node.events (live, from the watch cache) and Query.nodeEvents (recorded, from the database).
 */
import type { CachesByName } from "../inventory/heartbeats.js";
import type { HistoryClusterCheck } from "../cluster/unknown-cluster.js";
import { pageSize } from "../graphql/page-size.js";
import type { Resolvers } from "../graphql/schema.js";
import { knownClusterConnection } from "./history-connection.js";
import { liveView, type NodeEventsStore } from "./node-events-store.js";

/** Node.events when `first` is omitted, and the most it may ask for. */
const NODE_EVENTS_DEFAULT = 20;
const NODE_EVENTS_MAX = 500;

export function nodeEventsResolvers(clusters: CachesByName, store: NodeEventsStore, known: HistoryClusterCheck = async () => {}): Resolvers {
  return {
    Query: {
      nodeEvents: knownClusterConnection(known, store.nodeEvents),
    },
    Node: {
      events: (node, { first }) => {
        const size = pageSize(first, NODE_EVENTS_MAX, NODE_EVENTS_DEFAULT);
        return (clusters.get(node.cluster)?.facts.eventsOf(node.name, size) ?? []).map(liveView);
      },
    },
  };
}
