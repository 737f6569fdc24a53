import { readFileSync } from "node:fs";
import { join } from "node:path";
import { makeExecutableSchema } from "@graphql-tools/schema";
import type { IResolvers } from "@graphql-tools/utils";
import type { GraphQLSchema } from "graphql";
import { PACKAGE_ROOT } from "../package-info.js";
import type { RequestContext } from "./context.js";
import { DateTimeScalar } from "./date-time.js";

export type Resolvers = IResolvers<unknown, RequestContext>;

/** schema.graphql, read once: it is the source of the API. */
export const SCHEMA_SDL = readFileSync(join(PACKAGE_ROOT, "schema.graphql"), "utf8");

/** The executable schema: schema.graphql with every concern's resolvers merged in. */
export function buildSchema(resolverSets: Resolvers[]): GraphQLSchema {
  return makeExecutableSchema({
    typeDefs: SCHEMA_SDL,
    resolvers: [{ DateTime: DateTimeScalar }, ...resolverSets],
    // A resolver for a field the schema lacks is a bug, caught at start rather than ignored.
    resolverValidationOptions: { requireResolversToMatchSchema: "error" },
  });
}
