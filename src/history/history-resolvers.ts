import DataLoader from "dataloader";
import { loaderFor } from "../graphql/context.js";
import type { Resolvers } from "../graphql/schema.js";
import { nodeHistorySize, type ConditionTransitionView, type HistoryQueries, type MaintenanceEventView } from "./history-queries.js";
import type { HistoryClusterCheck } from "../cluster/unknown-cluster.js";

interface NodeRef {
  cluster: string;
  node: string;
}

const nodeRefKey = (ref: NodeRef): string => `${ref.cluster}\u0000${ref.node}`;

/**
 * Query.conditionTransitions, Query.maintenanceEvents, Node.conditionTransitions and
 * Node.maintenanceEvents. The Node fields go through one DataLoader per request and argument
 * set, so every node of a page asking for the same (type, since, first) shares one SQL
 * statement, and nodes asking with other arguments get their own. A filter naming a cluster
 * `known` does not accept is NOT_FOUND (tests of the queries alone leave it out).
 */
export function historyQueryResolvers(queries: HistoryQueries, known: HistoryClusterCheck = async () => {}): Resolvers {
  return {
    Query: {
      conditionTransitions: async (_root, args) => {
        await known(args.filter?.cluster);
        return queries.conditionTransitions(args.filter, args.first, args.after);
      },
      maintenanceEvents: async (_root, args) => {
        await known(args.filter?.cluster);
        return queries.maintenanceEvents(args.filter, args.first, args.after);
      },
    },
    Node: {
      conditionTransitions: async (node, args, context) => {
        // Validated here, before batching, so a bad `first` fails this field alone.
        const first = nodeHistorySize(args.first);
        if (first === 0) return [];
        const type = args.type ?? null;
        const since = args.since ?? null;
        const name = `history:Node.conditionTransitions:${JSON.stringify([type, since?.getTime() ?? null, first])}`;
        const loader = loaderFor(
          context,
          name,
          () =>
            new DataLoader<NodeRef, ConditionTransitionView[], string>(
              (refs) => queries.transitionsForNodes(refs.map((ref) => ({ ...ref, type, since, first }))),
              { cacheKeyFn: nodeRefKey },
            ),
        );
        return loader.load({ cluster: node.cluster, node: node.name });
      },
      maintenanceEvents: async (node, args, context) => {
        const first = nodeHistorySize(args.first);
        if (first === 0) return [];
        const loader = loaderFor(
          context,
          `history:Node.maintenanceEvents:${first}`,
          () =>
            new DataLoader<NodeRef, MaintenanceEventView[], string>(
              (refs) => queries.eventsForNodes(refs.map((ref) => ({ ...ref, first }))),
              { cacheKeyFn: nodeRefKey },
            ),
        );
        return loader.load({ cluster: node.cluster, node: node.name });
      },
    },
  };
}
