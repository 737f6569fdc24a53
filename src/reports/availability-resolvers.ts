import type { Resolvers } from "../graphql/schema.js";
import type { AvailabilityArgs } from "./availability-report.js";
import type { AvailabilityQueries } from "./availability-queries.js";

/** Query.availabilityReport: a few statements for the whole report, whatever its size. */
export function availabilityResolvers(queries: AvailabilityQueries): Resolvers {
  return {
    Query: {
      availabilityReport: (_root, args: AvailabilityArgs) => queries.report(args),
    },
  };
}
