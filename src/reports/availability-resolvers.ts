import type { ClusterNames, HistoryClusterCheck } from "../cluster/unknown-cluster.js";
import type { Resolvers } from "../graphql/schema.js";
import type { AvailabilityQueries } from "./availability-queries.js";

/**
 * Query.availabilityReport: a few statements for the whole report, whatever its size. A
 * cluster `known` does not accept (neither configured nor recorded) is NOT_FOUND, not an
 * empty report. `configured` names the clusters this service watches; without it (the CLI
 * reading a database) which of the report's clusters are configured is not known.
 */
export function availabilityResolvers(queries: AvailabilityQueries, known: HistoryClusterCheck = async () => {}, configured?: ClusterNames): Resolvers {
  return {
    Query: {
      availabilityReport: async (_root, args) => {
        await known(args.cluster);
        const report = await queries.report(args);
        const watched = configured ? new Set(configured.names()) : undefined;
        const clustersNotConfigured = watched ? [...new Set(report.nodes.map((n) => n.cluster))].filter((c) => !watched.has(c)).sort() : null;
        return { ...report, clustersNotConfigured };
      },
    },
  };
}
