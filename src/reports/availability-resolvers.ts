import { assertConfiguredCluster } from "../cluster/unknown-cluster.js";
import type { Resolvers } from "../graphql/schema.js";
import type { AvailabilityArgs } from "./availability-report.js";
import type { AvailabilityQueries } from "./availability-queries.js";

/**
 * Query.availabilityReport: a few statements for the whole report, whatever its size. A
 * cluster not among `clusters` (the configured ones; without a service, those with recorded
 * history) is NOT_FOUND, not an empty report.
 */
export function availabilityResolvers(queries: AvailabilityQueries, clusters?: { names(): string[] }): Resolvers {
  return {
    Query: {
      availabilityReport: (_root, args: AvailabilityArgs) => {
        if (clusters) assertConfiguredCluster(clusters, args.cluster);
        return queries.report(args);
      },
    },
  };
}
