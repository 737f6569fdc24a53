import { readFileSync } from "node:fs";
import { join } from "node:path";
import { makeExecutableSchema } from "@graphql-tools/schema";
import type { IResolvers } from "@graphql-tools/utils";
import type { GraphQLSchema } from "graphql";
import { PACKAGE_ROOT } from "../package-info.js";
import { DateTimeScalar } from "./date-time.js";
import type { Resolvers as GeneratedResolvers } from "./generated/resolvers-types.js";

/** One concern's resolvers, typed by graphql-codegen from schema.graphql (see codegen.ts). */
export type Resolvers = Omit<GeneratedResolvers, "DateTime">;

/**
 * The resolvers of a schema type whose parent is a mapped domain object (codegen.ts `mappers`):
 * every field that graphql-js's default resolver cannot read off the parent as it is (no such
 * property, or one of another type) must have a resolver. Codegen types the resolvers it is
 * given; this makes sure none is missing, so renaming a field on either side fails the build.
 *
 * Use as `{ ...fields } satisfies CompleteResolvers<NodeResolvers, CachedNode, Node>`.
 */
export type CompleteResolvers<R, Parent, Schema> = R & {
  [K in keyof Schema as K extends "__typename" ? never : K extends keyof Parent ? (Parent[K] extends Schema[K] ? never : K) : K]-?: K extends keyof R ? NonNullable<R[K]> : never;
};

/** schema.graphql, read once: it is the source of the API. */
export const SCHEMA_SDL = readFileSync(join(PACKAGE_ROOT, "schema.graphql"), "utf8");

/** The executable schema: schema.graphql with every concern's resolvers merged in. */
export function buildSchema(resolverSets: Resolvers[]): GraphQLSchema {
  return makeExecutableSchema({
    typeDefs: SCHEMA_SDL,
    // The generated types are stricter than graphql-tools' own map of anything; the shapes agree.
    resolvers: [{ DateTime: DateTimeScalar }, ...(resolverSets as IResolvers[])],
    // A resolver for a field the schema lacks is a bug, caught at start rather than ignored.
    resolverValidationOptions: { requireResolversToMatchSchema: "error" },
  });
}
