import type { Resolvers } from "../graphql/schema.js";
import { nodeHistorySize, type HistoryQueries } from "./history-queries.js";
import { knownClusterConnection, loadForNode } from "./history-connection.js";
import type { HistoryClusterCheck } from "../cluster/unknown-cluster.js";

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
      conditionTransitions: knownClusterConnection(known, queries.conditionTransitions),
      maintenanceEvents: knownClusterConnection(known, queries.maintenanceEvents),
    },
    Node: {
      conditionTransitions: async (node, args, context) => {
        // Validated here, before batching, so a bad `first` fails this field alone.
        const first = nodeHistorySize(args.first);
        if (first === 0) return [];
        const type = args.type ?? null;
        const since = args.since ?? null;
        const name = `history:Node.conditionTransitions:${JSON.stringify([type, since?.getTime() ?? null, first])}`;
        return loadForNode(context, name, node, (refs) => queries.transitionsForNodes(refs.map((ref) => ({ ...ref, type, since, first }))));
      },
      maintenanceEvents: async (node, args, context) => {
        const first = nodeHistorySize(args.first);
        if (first === 0) return [];
        return loadForNode(context, `history:Node.maintenanceEvents:${first}`, node, (refs) => queries.eventsForNodes(refs.map((ref) => ({ ...ref, first }))));
      },
    },
  };
}
