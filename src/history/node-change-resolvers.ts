import type { HistoryClusterCheck } from "../cluster/unknown-cluster.js";
import type { Resolvers } from "../graphql/schema.js";
import { knownClusterConnection, loadForNode } from "./history-connection.js";
import { nodeHistorySize } from "./history-queries.js";
import type { NodeChangeQueries } from "./node-change-queries.js";

/**
 * Query.nodeChanges and Node.changes. Node.changes goes through one DataLoader per request and
 * `first`, so a page of nodes asking for their changes is one SQL statement. A filter naming a
 * cluster `known` does not accept is NOT_FOUND, as for the rest of history.
 */
export function nodeChangeResolvers(queries: NodeChangeQueries, known: HistoryClusterCheck = async () => {}): Resolvers {
  return {
    Query: {
      nodeChanges: knownClusterConnection(known, queries.nodeChanges),
    },
    Node: {
      changes: async (node, args, context) => {
        const first = nodeHistorySize(args.first);
        if (first === 0) return [];
        return loadForNode(context, `history:Node.changes:${first}`, node, (refs) => queries.changesForNodes(refs.map((ref) => ({ ...ref, first }))));
      },
    },
  };
}
