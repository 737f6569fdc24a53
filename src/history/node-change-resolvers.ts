import DataLoader from "dataloader";
import type { HistoryClusterCheck } from "../cluster/unknown-cluster.js";
import { loaderFor } from "../graphql/context.js";
import type { Resolvers } from "../graphql/schema.js";
import { nodeHistorySize } from "./history-queries.js";
import type { NodeChangeQueries, NodeChangeView } from "./node-change-queries.js";

/**
 * Query.nodeChanges and Node.changes. Node.changes goes through one DataLoader per request and
 * `first`, so a page of nodes asking for their changes is one SQL statement. A filter naming a
 * cluster `known` does not accept is NOT_FOUND, as for the rest of history.
 */
export function nodeChangeResolvers(queries: NodeChangeQueries, known: HistoryClusterCheck = async () => {}): Resolvers {
  return {
    Query: {
      nodeChanges: async (_root, args) => {
        await known(args.filter?.cluster);
        return queries.nodeChanges(args.filter, args.first, args.after);
      },
    },
    Node: {
      changes: async (node, args, context) => {
        const first = nodeHistorySize(args.first);
        if (first === 0) return [];
        const loader = loaderFor(
          context,
          `history:Node.changes:${first}`,
          () =>
            new DataLoader<{ cluster: string; node: string }, NodeChangeView[], string>((refs) => queries.changesForNodes(refs.map((ref) => ({ ...ref, first }))), {
              cacheKeyFn: (ref) => `${ref.cluster}\u0000${ref.node}`,
            }),
        );
        return loader.load({ cluster: node.cluster, node: node.name });
      },
    },
  };
}
