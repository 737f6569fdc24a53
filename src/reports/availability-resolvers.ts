import type { HistoryClusterCheck } from "../cluster/unknown-cluster.js";
import type { Resolvers } from "../graphql/schema.js";
import type { AvailabilityQueries } from "./availability-queries.js";

/**
 * Query.availabilityReport: a few statements for the whole report, whatever its size. A
 * cluster `known` does not accept (neither configured nor recorded) is NOT_FOUND, not an
 * empty report.
 */
export function availabilityResolvers(queries: AvailabilityQueries, known: HistoryClusterCheck = async () => {}): Resolvers {
  return {
    Query: {
      availabilityReport: async (_root, args) => {
        await known(args.cluster);
        return queries.report(args);
      },
    },
  };
}
