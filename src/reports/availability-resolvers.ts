import type { Resolvers } from "../graphql/schema.js";
import type { AvailabilityQueries } from "./availability-queries.js";

/** Query.availabilityReport: a few statements for the whole report, whatever its size. */
export function availabilityResolvers(queries: AvailabilityQueries): Resolvers {
  return {
    Query: {
      availabilityReport: (_root, args) => queries.report(args),
    },
  };
}
