import type { Resolvers } from "../graphql/schema.js";
import type { CapacityReports } from "./capacity-service.js";

/** Query.capacityReport; every other field of the report is plain data. */
export function capacityResolvers(reports: CapacityReports): Resolvers {
  return {
    Query: {
      capacityReport: (_root, args) => reports.report(args),
    },
  };
}
