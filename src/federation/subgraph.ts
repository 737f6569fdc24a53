import { buildSubgraphSchema } from "@apollo/subgraph";
import { GraphQLError, Kind, parse, visit, type ConstDirectiveNode, type DocumentNode, type GraphQLFieldResolver, type GraphQLSchema, type ValidationRule } from "graphql";
import type { IResolvers } from "@graphql-tools/utils";
import type { InventoryService } from "../inventory/inventory-service.js";
import { DateTimeScalar } from "../graphql/date-time.js";
import { SCHEMA_SDL, type Resolvers } from "../graphql/schema.js";
import { AppError, ErrorCode } from "../graphql/errors.js";

/**
 * The most representations one `_entities` call may name: a router asks for the entities of one
 * answer at once, and a fleet's all nodes (5,000 in the benches) fit. The cost model counts each
 * (graphql/operation-limits.ts).
 */
export const MAX_REPRESENTATIONS = 5_000;
/** Malformed representations answered each with its own error; past this many the call is refused whole (a router sends none). */
export const MAX_MALFORMED_REPRESENTATIONS = 100;

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
  const schema = buildSubgraphSchema([{ typeDefs: subgraphTypeDefs(), resolvers: resolvers as IResolvers as never }]);
  const entities = schema.getQueryType()!.getFields()["_entities"]!;
  entities.resolve = checkedRepresentations(entities.resolve!);
  return schema;
}

/**
 * `_entities` as @apollo/subgraph resolves it, with its representations checked first: more
 * than {@link MAX_REPRESENTATIONS} is refused, and a malformed one (not an object, a type
 * without a key here, a key that is not a string) is BAD_USER_INPUT for that entity alone,
 * where @apollo/subgraph would fail the whole answer with an internal error; more than
 * {@link MAX_MALFORMED_REPRESENTATIONS} malformed ones refuse the call, one error, not thousands.
 */
function checkedRepresentations(resolve: GraphQLFieldResolver<unknown, unknown>): GraphQLFieldResolver<unknown, unknown> {
  return (source, args: { representations?: unknown }, context, info) => {
    const representations = Array.isArray(args.representations) ? (args.representations as unknown[]) : [];
    if (representations.length > MAX_REPRESENTATIONS) {
      throw new AppError(ErrorCode.BAD_USER_INPUT, `_entities names ${representations.length} representations; at most ${MAX_REPRESENTATIONS} are allowed`);
    }
    const answer: unknown[] = new Array(representations.length);
    const valid: unknown[] = [];
    const at: number[] = [];
    const malformed: [number, string][] = [];
    representations.forEach((representation, index) => {
      const problem = representationProblem(representation);
      if (problem) malformed.push([index, problem]);
      else {
        valid.push(representation);
        at.push(index);
      }
    });
    if (malformed.length > MAX_MALFORMED_REPRESENTATIONS) {
      const [index, problem] = malformed[0]!;
      throw new AppError(ErrorCode.BAD_USER_INPUT, `${malformed.length} representations are malformed (at most ${MAX_MALFORMED_REPRESENTATIONS} are answered one by one); the first, representations[${index}]: ${problem}`);
    }
    for (const [index, problem] of malformed) answer[index] = new AppError(ErrorCode.BAD_USER_INPUT, `representations[${index}]: ${problem}`);
    const resolved = resolve(source, { ...args, representations: valid }, context, info) as unknown[];
    at.forEach((index, k) => (answer[index] = resolved[k]));
    return answer;
  };
}

function representationProblem(representation: unknown): string | undefined {
  if (typeof representation !== "object" || representation === null || Array.isArray(representation)) return "a representation is an object with __typename and its key";
  const { __typename: type } = representation as Record<string, unknown>;
  const key = typeof type === "string" && Object.hasOwn(KEYS, type) ? KEYS[type]! : undefined;
  if (!key) return `__typename must be one of ${Object.keys(KEYS).join(", ")}`;
  if (typeof (representation as Record<string, unknown>)[key] !== "string") return `a ${type} is named by its ${key}, a string`;
  return undefined;
}

/**
 * With introspection off, `_service { sdl }` is refused too: it is the whole schema, as
 * `__schema` is. A router then composes from a supergraph given to it.
 */
export const NoServiceSdl: ValidationRule = (context) => ({
  Field(node) {
    if (node.name.value === "_service" && context.getParentType()?.name === "Query") {
      context.reportError(new GraphQLError("The subgraph's SDL is not served: introspection is disabled on this server", { nodes: node, extensions: { code: ErrorCode.GRAPHQL_VALIDATION_FAILED } }));
    }
  },
});

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
