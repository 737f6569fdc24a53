import {
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
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";

/**
 * The most tokens a document may have before parsing stops: far above any real query, far
 * below what makes parsing and validating a document a way to tie up the server.
 */
export const MAX_DOCUMENT_TOKENS = 10_000;

/** How many items a paged field is assumed to return when its `first` is not given (the API's default page). */
export const DEFAULT_PAGE = 100;
/** How many items a list without `first` (labels, pods, conditions …) is assumed to hold. */
export const DEFAULT_LIST_LENGTH = 10;

/** How deep an operation nests and how many objects it may make the server resolve. */
export interface OperationSize {
  depth: number;
  cost: number;
}

/**
 * Measures an operation before it runs. Depth: levels of fields, a root field being 1.
 * Cost: the objects it may resolve. A field with a `first` argument returns that many (or
 * {@link DEFAULT_PAGE}); on a connection (a non-list type) the count applies to the list
 * directly under it (`edges`). Any other list of objects is counted at
 * {@link DEFAULT_LIST_LENGTH}. Every count multiplies what is nested inside it, so
 * `nodes(first: 5000) { edges { node { pods { name } } } }` costs 1 + 5000 + 5000 + 50000.
 * Scalars cost nothing. Fragments are followed; the document is assumed valid. Below
 * `__schema` and `__type` only cost counts, so tools' standard introspection query passes.
 */
export function measureOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown> = {},
): OperationSize {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
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

  /**
   * Walks a selection set whose parent objects number `count`; `page` is the `first` of the
   * connection field just above, owed to the first list found directly inside it.
   */
  const walk = (set: SelectionSetNode, parent: GraphQLCompositeType, depth: number, count: number, page: number | undefined, path: Set<string>): OperationSize => {
    let deepest = depth - 1;
    let cost = 0;
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const field = fieldOf(parent, selection.name.value);
        deepest = Math.max(deepest, depth);
        if (!field || !selection.selectionSet) continue;
        const type = getNamedType(field.type);
        if (!isCompositeType(type)) continue;
        const list = isListType(getNullableType(field.type));
        const first = field.paged ? (intArgument(selection, "first") ?? DEFAULT_PAGE) : undefined;
        const items = list ? (first ?? page ?? DEFAULT_LIST_LENGTH) : 1;
        const objects = count * items;
        const inner = walk(selection.selectionSet, type, depth + 1, objects, list ? undefined : first, path);
        cost += objects + inner.cost;
        // The standard introspection query nests type references 15 deep; its cost still counts.
        if (!field.introspection) deepest = Math.max(deepest, inner.depth);
      } else {
        let fragmentSet: SelectionSetNode;
        let spread = path;
        let condition = selection.kind === Kind.INLINE_FRAGMENT ? selection.typeCondition : undefined;
        if (selection.kind === Kind.FRAGMENT_SPREAD) {
          const name = selection.name.value;
          const fragment = fragments.get(name);
          if (!fragment || path.has(name)) continue;
          fragmentSet = fragment.selectionSet;
          condition = fragment.typeCondition;
          spread = new Set(path).add(name);
        } else {
          fragmentSet = selection.selectionSet;
        }
        const narrowed = condition ? typeFromAST(schema, condition) : parent;
        const inner = walk(fragmentSet, narrowed && isCompositeType(narrowed) ? narrowed : parent, depth, count, page, spread);
        deepest = Math.max(deepest, inner.depth);
        cost += inner.cost;
      }
    }
    return { depth: deepest, cost };
  };

  const root = schema.getRootType(operation.operation);
  return root ? walk(operation.selectionSet, root, 1, 1, undefined, new Set()) : { depth: 0, cost: 0 };
}
