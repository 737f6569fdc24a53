import { filterTerms } from "../k8s/selector-limits.js";
import {
  GraphQLError,
  Lexer,
  Source,
  TokenKind,
  getNamedType,
  getNullableType,
  isCompositeType,
  isListType,
  isObjectType,
  isInterfaceType,
  Kind,
  __Schema,
  __Type,
  typeFromAST,
  valueFromASTUntyped,
  visit,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from "graphql";

/**
 * The most tokens a document may have before parsing stops: far above any real query, far
 * below what makes parsing and validating a document a way to tie up the server.
 */
export const MAX_DOCUMENT_TOKENS = 10_000;

/**
 * How deeply brackets may nest in a document ({ } of selections and inline fragments, [ ] and
 * { } of argument values, ( ) of arguments): far beyond any query the depth limit lets run,
 * far below the thousands of levels at which parsing and validating, which recurse, overflow
 * the stack.
 */
export const MAX_DOCUMENT_NESTING = 128;

/**
 * Refuses a document that nests deeper than {@link MAX_DOCUMENT_NESTING} as BAD_USER_INPUT
 * (reason QUERY_TOO_DEEP), before it is parsed. The lexer does not recurse, so this costs one
 * pass over at most {@link MAX_DOCUMENT_TOKENS} tokens; a document that does not lex is left
 * for the parser to refuse with its own message.
 */
export function checkNesting(text: string): void {
  const lexer = new Lexer(new Source(text));
  let depth = 0;
  try {
    for (let tokens = 0; tokens <= MAX_DOCUMENT_TOKENS; tokens++) {
      const token = lexer.advance();
      if (token.kind === TokenKind.EOF) return;
      if (token.kind === TokenKind.BRACE_L || token.kind === TokenKind.BRACKET_L || token.kind === TokenKind.PAREN_L) {
        if (++depth > MAX_DOCUMENT_NESTING) {
          throw new GraphQLError(`The document nests more than ${MAX_DOCUMENT_NESTING} brackets deep (selections, inline fragments, argument values)`, {
            extensions: { code: "BAD_USER_INPUT", reason: "QUERY_TOO_DEEP", maxNesting: MAX_DOCUMENT_NESTING },
          });
        }
      } else if (token.kind === TokenKind.BRACE_R || token.kind === TokenKind.BRACKET_R || token.kind === TokenKind.PAREN_R) {
        depth--;
      }
    }
  } catch (error) {
    if (error instanceof GraphQLError && error.extensions["reason"] === "QUERY_TOO_DEEP") throw error;
    // A syntax error: the parser reports it.
  }
}

/** How many items a paged field is assumed to return when its `first` is not given (the API's default page). */
export const DEFAULT_PAGE = 100;
/** How many items a list without `first` (labels, pods, conditions …) is assumed to hold. */
export const DEFAULT_LIST_LENGTH = 10;

/**
 * The most fragment spreads a document may hold, and the most field selections an operation
 * may amount to once its fragments are written out in place. A document of
 * {@link MAX_DOCUMENT_TOKENS} tokens written without fragments has fewer fields than that, so
 * fragments can save typing but never multiply the work (`...F ...F` in each of 26 fragments
 * means 2^25 selections in 300 bytes).
 */
export const MAX_FRAGMENT_SPREADS = 1_000;
export const MAX_EXPANDED_SELECTIONS = MAX_DOCUMENT_TOKENS;

/**
 * What a field costs beyond the objects it returns, in objects' worth of work, each time it is
 * resolved: fields that read the database or compute over every node cost what that work
 * costs, not the one object they return. Measured against bench/availability-report.ts and
 * bench/capacity-report.ts: an availability report over a month of 5,000 nodes' history
 * takes about as long as serializing 50,000 objects, a capacity report with trends about half
 * that; a history page is one indexed query.
 * So `--max-query-cost` (500,000) admits 20 availability reports in one operation, not 250.
 */
export const FIELD_WEIGHTS: Readonly<Record<string, number>> = {
  "Query.availabilityReport": 25_000,
  "Query.capacityReport": 5_000,
  "Query.conditionTransitions": 1_000,
  "Query.maintenanceEvents": 1_000,
  // A history connection's totalCount counts every row its filter selects.
  "ConditionTransitionConnection.totalCount": 1_000,
  "MaintenanceEventConnection.totalCount": 1_000,
  "NodeEventConnection.totalCount": 1_000,
  "NodeChangeConnection.totalCount": 1_000,
  "DrainOperationConnection.totalCount": 1_000,
};
/** Added to `capacityReport` when it asks for trends (`trendsSince`): a scan of the sampled rows. */
export const TRENDS_WEIGHT = 20_000;

/**
 * Filter terms (a selector's requirements, each other field of a filter) matched against nodes
 * for the work of resolving one object: a term is one lookup in a node's labels or fields.
 */
export const FILTER_TERMS_PER_OBJECT = 10;

/** The input types whose value is matched against every node a field scans. */
const NODE_FILTER_TYPES = new Set(["NodeFilter"]);

/** What a filtered field scans: the nodes in the cache (for a subscription, the one node of each event). */
export interface MeasureScale {
  nodes: number;
}

/** How deep an operation nests, how many objects it may make the server resolve, and its size. */
export interface OperationSize {
  depth: number;
  cost: number;
  /** Field selections once every fragment is written out where it is spread. */
  selections: number;
  /** Fragment spreads in the whole document, as written. */
  spreads: number;
}

/** What a selection set amounts to below the level it sits at, for one parent object. */
interface Measured {
  /** Levels of fields below (and including) the set's own; 0 for an empty set. */
  depth: number;
  /** Objects resolved per parent object: every count inside scales with the parent's count. */
  cost: number;
  selections: number;
}

/**
 * Measures an operation before it runs. Depth: levels of fields, a root field being 1.
 * Cost: the objects it may resolve. A field with a `first` (or `last`) argument returns that many (or
 * {@link DEFAULT_PAGE}); on a connection (a non-list type) the count applies to the list
 * directly under it (`edges`). Any other list of objects is counted at
 * {@link DEFAULT_LIST_LENGTH}. Every count multiplies what is nested inside it, so
 * `nodes(first: 5000) { edges { node { pods { name } } } }` costs 1 + 5000 + 5000 + 50000.
 * Scalars cost nothing. Fragments are followed; the document is assumed valid. Below
 * `__schema` and `__type` only cost counts, so tools' standard introspection query passes.
 * A field filtered by a NodeFilter also costs its filter's terms times `scale.nodes`, over
 * {@link FILTER_TERMS_PER_OBJECT}.
 *
 * Linear in the document's size: cost is proportional to the number of parent objects, so
 * each fragment is measured once per page it is spread under (per unit of parent) and
 * remembered; spreading it again costs a lookup, however many times it is spread.
 */
export function measureOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown> = {},
  scale: MeasureScale = { nodes: 0 },
): OperationSize {
  const fragments = new Map<string, FragmentDefinitionNode>();
  let spreads = 0;
  visit(document, {
    FragmentDefinition: (definition) => void fragments.set(definition.name.value, definition),
    FragmentSpread: () => void spreads++,
  });
  const defaults = new Map<string, unknown>();
  for (const definition of operation.variableDefinitions ?? []) {
    if (definition.defaultValue) defaults.set(definition.variable.name.value, valueFromASTUntyped(definition.defaultValue));
  }

  /** The value of an integer argument, literal or variable. */
  const intArgument = (field: FieldNode, name: string): number | undefined => {
    const node = field.arguments?.find((a) => a.name.value === name)?.value;
    if (!node) return undefined;
    const value =
      node.kind === Kind.VARIABLE
        ? (variables[node.name.value] ?? defaults.get(node.name.value))
        : valueFromASTUntyped(node);
    return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
  };

  /** The field's type, whether it takes `first`, and whether it is an introspection entry point. */
  const fieldOf = (parent: GraphQLCompositeType, name: string): { type: GraphQLOutputType; paged: boolean; introspection: boolean } | undefined => {
    // The introspection entry points are not among the root type's fields.
    if (name === "__schema") return { type: __Schema, paged: false, introspection: true };
    if (name === "__type") return { type: __Type, paged: false, introspection: true };
    const field = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined;
    return field && { type: field.type, paged: field.args.some((a) => a.name === "first"), introspection: false };
  };

  /** The value of an argument, literal or variable, with the variables inside a literal filled in. */
  const argumentValue = (node: ValueNode): unknown => {
    if (node.kind === Kind.VARIABLE) return variables[node.name.value] ?? defaults.get(node.name.value);
    const values: Record<string, unknown> = { ...Object.fromEntries(defaults), ...variables };
    return valueFromASTUntyped(node, values);
  };

  /** Matching a node filter against every node the field scans ({@link FILTER_TERMS_PER_OBJECT}). */
  const filterWork = (parent: GraphQLCompositeType, selection: FieldNode): number => {
    if (!selection.arguments?.length || scale.nodes === 0 || !(isObjectType(parent) || isInterfaceType(parent))) return 0;
    const definition = parent.getFields()[selection.name.value];
    let terms = 0;
    for (const argument of selection.arguments) {
      const type = definition?.args.find((a) => a.name === argument.name.value)?.type;
      if (type && NODE_FILTER_TYPES.has(getNamedType(type).name)) terms += filterTerms(argumentValue(argument.value));
    }
    return Math.ceil((terms * scale.nodes) / FILTER_TERMS_PER_OBJECT);
  };

  /** The work a field costs beyond its objects ({@link FIELD_WEIGHTS}) and its filter. */
  const weightOf = (parent: GraphQLCompositeType, selection: FieldNode): number => {
    const weight = FIELD_WEIGHTS[`${parent.name}.${selection.name.value}`] ?? 0;
    const trends = parent.name === "Query" && selection.name.value === "capacityReport" && selection.arguments?.some((a) => a.name.value === "trendsSince" && a.value.kind !== Kind.NULL);
    return weight + (trends ? TRENDS_WEIGHT : 0) + filterWork(parent, selection);
  };

  /** How many entities a federation `_entities` call names: one object each. */
  const namedEntities = (field: FieldNode): number | undefined => {
    if (field.name.value !== "_entities") return undefined;
    const node = field.arguments?.find((a) => a.name.value === "representations")?.value;
    const value = node && argumentValue(node);
    return Array.isArray(value) ? value.length : undefined;
  };

  /** Each fragment's measure, by name and the page owed to it; `null` while it is being measured (a cycle, which validation refuses). */
  const measuredFragments = new Map<string, Measured | null>();

  const measureFragment = (name: string, parent: GraphQLCompositeType, page: number | undefined): Measured => {
    const key = `${name}\u0000${page ?? ""}`;
    const known = measuredFragments.get(key);
    if (known !== undefined) return known ?? { depth: 0, cost: 0, selections: 0 };
    const fragment = fragments.get(name);
    if (!fragment) return { depth: 0, cost: 0, selections: 0 };
    measuredFragments.set(key, null);
    const narrowed = typeFromAST(schema, fragment.typeCondition);
    const measured = walk(fragment.selectionSet, narrowed && isCompositeType(narrowed) ? narrowed : parent, page);
    measuredFragments.set(key, measured);
    return measured;
  };

  /**
   * Measures a selection set per parent object; `page` is the `first` of the connection
   * field just above, owed to the first list found directly inside it.
   */
  const walk = (set: SelectionSetNode, parent: GraphQLCompositeType, page: number | undefined): Measured => {
    let depth = 0;
    let cost = 0;
    let selections = 0;
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        selections += 1;
        depth = Math.max(depth, 1);
        cost += weightOf(parent, selection);
        const field = fieldOf(parent, selection.name.value);
        if (!field || !selection.selectionSet) continue;
        const type = getNamedType(field.type);
        if (!isCompositeType(type)) continue;
        const list = isListType(getNullableType(field.type));
        const first = field.paged ? (intArgument(selection, "first") ?? intArgument(selection, "last") ?? DEFAULT_PAGE) : undefined;
        const items = list ? (first ?? page ?? namedEntities(selection) ?? DEFAULT_LIST_LENGTH) : 1;
        const inner = walk(selection.selectionSet, type, list ? undefined : first);
        cost += items + items * inner.cost;
        selections += inner.selections;
        // The standard introspection query nests type references 15 deep; its cost still counts.
        if (!field.introspection) depth = Math.max(depth, 1 + inner.depth);
      } else {
        let inner: Measured;
        if (selection.kind === Kind.FRAGMENT_SPREAD) {
          inner = measureFragment(selection.name.value, parent, page);
        } else {
          const narrowed = selection.typeCondition ? typeFromAST(schema, selection.typeCondition) : parent;
          inner = walk(selection.selectionSet, narrowed && isCompositeType(narrowed) ? narrowed : parent, page);
        }
        depth = Math.max(depth, inner.depth);
        cost += inner.cost;
        selections += inner.selections;
      }
    }
    return { depth, cost, selections };
  };

  const root = schema.getRootType(operation.operation);
  if (!root) return { depth: 0, cost: 0, selections: 0, spreads };
  return { ...walk(operation.selectionSet, root, undefined), spreads };
}
