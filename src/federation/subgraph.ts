import { buildSubgraphSchema } from "@apollo/subgraph";
import { Kind, parse, visit, type ConstDirectiveNode, type DocumentNode, type GraphQLSchema } from "graphql";
import type { IResolvers } from "@graphql-tools/utils";
import type { InventoryService } from "../inventory/inventory-service.js";
import { DateTimeScalar } from "../graphql/date-time.js";
import { SCHEMA_SDL, type Resolvers } from "../graphql/schema.js";
import { AppError } from "../graphql/errors.js";

/** The entity keys other subgraphs join on: a node by its id (`<cluster>/<name>`), a cluster by its name. */
const KEYS: Record<string, string> = { Node: "id", Cluster: "name" };

/**
 * Value types that most graphs define too: shareable, so a supergraph composes with a subgraph
 * that has its own PageInfo or KeyValue (marked @shareable there) instead of failing with
 * INVALID_FIELD_SHARING.
 */
const SHAREABLE = new Set(["PageInfo", "KeyValue"]);

/**
 * schema.graphql as an Apollo Federation 2 subgraph (served at /subgraph): the same types and
 * resolvers, `@key` on Node and Cluster, `@shareable` on the common value types, and `_service` and `_entities` added by
 * @apollo/subgraph. /graphql is untouched, so direct clients see no change.
 */
export function buildSubgraph(resolverSets: Resolvers[], inventory: InventoryService): GraphQLSchema {
  const resolvers: Record<string, Record<string, unknown> | unknown> = { DateTime: DateTimeScalar };
  for (const set of resolverSets as Record<string, Record<string, unknown>>[]) {
    for (const [type, fields] of Object.entries(set)) resolvers[type] = { ...(resolvers[type] as object), ...fields };
  }
  resolvers["Node"] = {
    ...(resolvers["Node"] as object),
    // An entity another subgraph names; null (not an error) when the node is not in the cache.
    __resolveReference: ({ id }: { id: string }) => {
      const at = id.indexOf("/");
      if (at <= 0) return null;
      try {
        // @apollo/subgraph writes __typename onto what this returns; cached nodes are frozen,
        // so it gets an object of its own that reads through to the cached one.
        return Object.create(inventory.node(id.slice(0, at), id.slice(at + 1)));
      } catch (error) {
        if (error instanceof AppError) return null;
        throw error;
      }
    },
  };
  resolvers["Cluster"] = {
    ...(resolvers["Cluster"] as object),
    __resolveReference: ({ name }: { name: string }) => inventory.clusterViews().find((cluster) => cluster.name === name) ?? null,
  };
  return buildSubgraphSchema([{ typeDefs: subgraphTypeDefs(), resolvers: resolvers as IResolvers as never }]);
}

/** schema.graphql with the federation link and the entity keys. */
export function subgraphTypeDefs(): DocumentNode {
  const keyed = visit(parse(SCHEMA_SDL), {
    ObjectTypeDefinition(node) {
      const fields = KEYS[node.name.value];
      if (fields) return { ...node, directives: [...(node.directives ?? []), directive("key", fields)] };
      return SHAREABLE.has(node.name.value) ? { ...node, directives: [...(node.directives ?? []), directive("shareable")] } : undefined;
    },
  });
  const link = parse(`extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key", "@shareable"])`);
  return { kind: Kind.DOCUMENT, definitions: [...link.definitions, ...keyed.definitions] };
}

function directive(name: "key" | "shareable", fields?: string): ConstDirectiveNode {
  return {
    kind: Kind.DIRECTIVE,
    name: { kind: Kind.NAME, value: name },
    arguments: fields === undefined ? [] : [{ kind: Kind.ARGUMENT, name: { kind: Kind.NAME, value: "fields" }, value: { kind: Kind.STRING, value: fields } }],
  };
}
