import type { Database } from "../db/database.js";
import type { Resolvers } from "../graphql/schema.js";
import { VERSION } from "../package-info.js";

/** `Query.service`: what this instance is and whether its database answers. */
export function serviceResolvers(database: Database, startedAt: Date): Resolvers {
  return {
    Query: {
      service: () => ({
        version: VERSION,
        startedAt,
        database: { kind: database.kind, reachable: () => database.ping() },
      }),
    },
  };
}
