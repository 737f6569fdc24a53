import {
  extendSchema,
  getNamedType,
  isLeafType,
  isObjectType,
  Kind,
  parse,
  visit,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";
import { compileQuery, isCompiledQuery, type CompiledQuery } from "graphql-jit";
import { PRERENDERED_FIELD, PrerenderedJson } from "./prerendered-json.js";

/**
 * Fields of a cached type whose answer is a function of one input: while `inputOf(object)`
 * returns the same value (by identity) for the same object, their JSON is the same. The object
 * itself is an input of every group: a changed object is a new object.
 */
export interface FieldGroup<T extends object> {
  fields: readonly string[];
  inputOf(object: T): unknown;
}

/**
 * A type whose selections are written as JSON once per object and reused (e.g. Node: 5,000 of
 * them in the fleet's answer, each unchanged from one query to the next unless its node object,
 * its pods or its metrics sample changed). A field in no group is never cached: a selection
 * with one runs as before.
 */
export interface CachedAnswerType<T extends object = object> {
  typeName: string;
  groups: readonly FieldGroup<T>[];
}

export interface AnswerFragmentsOptions {
  types: readonly CachedAnswerType<any>[];
  /**
   * Which callers may share written fragments: the caller's role. The cached fields read no
   * caller, but a cache is never shared where authorisation could differ.
   */
  partitionOf(context: unknown): string;
  /** Fragment stores kept (one per document, position, partition and variables), least recently used dropped first. */
  maxStores?: number;
}

/** One group of one position: the fields asked there that the group answers, and their compiled query. */
interface GroupPlan {
  typeName: string;
  group: FieldGroup<object>;
  query: CompiledQuery;
  /** Response keys answered, each with its index among the position's keys. */
  keys: { key: string; index: number }[];
}

/** A place in the operation where a cached type's selection is answered from fragments. */
interface PositionPlan {
  typeName: string;
  keyCount: number;
  groups: GroupPlan[];
  /** Variables the selection reads (the fragments depend on their values). */
  variables: string[];
}

/** How one operation is answered with fragments: its rewritten form and the positions. */
export interface FragmentPlan {
  outer: CompiledQuery;
  positions: PositionPlan[];
}

interface RequestState {
  stores: FragmentStore[];
  variables: Record<string, unknown>;
  /** Fragments to write before the answer is complete, written in one query per store and group. */
  writes: Map<FragmentStore, PendingWrites>;
  failed: boolean;
}

const RENDER_FIELD = (typeName: string) => `nodeInventoryRender${typeName}`;

/**
 * Answers the cached types' selections from JSON written once per object (the per-node work
 * of a 5,000-node answer, and its share of the serialisation): the operation is rewritten so
 * that each such selection is one hidden field, whose resolver returns the object's fragment,
 * written by a compiled query of just that selection when an input changed. Only plain shapes
 * are rewritten (see {@link AnswerFragments.plan}); anything else runs as before. A fragment
 * that cannot be written without an error, or an error anywhere in the answer, makes the
 * caller run the operation as before, so errors are graphql's own.
 */
export class AnswerFragments {
  private readonly extended: GraphQLSchema;
  private readonly types: Map<string, CachedAnswerType<object>>;
  private readonly states = new WeakMap<object, RequestState>();
  private readonly stores = new Map<string, FragmentStore>();
  private readonly maxStores: number;

  constructor(
    schema: GraphQLSchema,
    private readonly options: AnswerFragmentsOptions,
  ) {
    this.types = new Map(options.types.map((t) => [t.typeName, t]));
    this.maxStores = options.maxStores ?? 8;
    const names = [...this.types.keys()];
    this.extended = extendSchema(
      schema,
      parse(`scalar NodeInventoryPrerendered
        extend type ${schema.getQueryType()!.name} { ${names.map((n) => `${RENDER_FIELD(n)}: [${n}]`).join(" ")} }
        ${names.map((n) => `extend type ${n} { ${PRERENDERED_FIELD}(position: Int!): NodeInventoryPrerendered! }`).join("\n")}`),
      { assumeValidSDL: true },
    );
    const queryFields = this.extended.getQueryType()!.getFields();
    for (const name of names) {
      // A fragment's query starts at the objects it is written for, given as the root value.
      queryFields[RENDER_FIELD(name)]!.resolve = (root: unknown) => root;
      const field = (this.extended.getType(name) as GraphQLObjectType).getFields()[PRERENDERED_FIELD] as GraphQLField<object, unknown, { position: number }>;
      field.resolve = (object, { position }, context) => {
        const state = this.states.get(context as object);
        if (!state) throw new Error("a prerendered field outside a fragment answer");
        try {
          return state.stores[position]!.fragmentOf(object, state.writes);
        } catch (error) {
          state.failed = true;
          throw error;
        }
      };
    }
  }

  /**
   * The fragment plan of an operation, or undefined when it has no cached selection or a shape
   * not rewritten here. Rewritten: fields outside the cached selections with no fragments and
   * each response key once per selection set (so no two selections merge); a cached selection
   * of plain fields (no directives, no fragments at its top; anything below), every one of them
   * in a group.
   */
  plan(document: DocumentNode, operation: OperationDefinitionNode): FragmentPlan | undefined {
    const fragments = document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION);
    const positions: PositionPlan[] = [];
    let shapeOk = true;
    const rewrite = (set: SelectionSetNode, parent: GraphQLObjectType): SelectionSetNode => {
      const seen = new Set<string>();
      const selections = set.selections.map((selection) => {
        if (selection.kind !== Kind.FIELD) {
          shapeOk = false;
          return selection;
        }
        const key = selection.alias?.value ?? selection.name.value;
        if (seen.has(key)) shapeOk = false;
        seen.add(key);
        if (!selection.selectionSet) return selection;
        const type = getNamedType(parent.getFields()[selection.name.value]?.type);
        if (!type || !isObjectType(type)) {
          if (!type || !isLeafType(type)) shapeOk = false;
          return selection;
        }
        const cached = this.types.get(type.name);
        if (!cached) return { ...selection, selectionSet: rewrite(selection.selectionSet, type) };
        const position = this.position(cached, type, selection.selectionSet, operation, fragments);
        if (!position) {
          shapeOk = false;
          return selection;
        }
        positions.push(position);
        return { ...selection, selectionSet: hiddenSelection(positions.length - 1) };
      });
      return { ...set, selections };
    };
    const root = this.extended.getQueryType()!;
    const selectionSet = rewrite(operation.selectionSet, root);
    if (!shapeOk || positions.length === 0) return undefined;
    const outer = compileQuery(this.extended, { kind: Kind.DOCUMENT, definitions: [{ ...operation, selectionSet }] }, operation.name?.value, { disablingCapturingStackErrors: true });
    if (!isCompiledQuery(outer)) return undefined;
    return { outer, positions };
  }

  /**
   * Runs a planned operation: its answer with the cached selections' JSON in place, or
   * undefined when it has to run as before (an error anywhere, or a fragment not written).
   */
  async run(
    plan: FragmentPlan,
    documentKey: string,
    context: unknown,
    variables: Record<string, unknown>,
    coerced: Record<string, unknown>,
  ): Promise<{ data?: unknown; errors?: readonly unknown[] } | undefined> {
    if (typeof context !== "object" || context === null) return undefined;
    const partition = this.options.partitionOf(context);
    const state: RequestState = {
      stores: plan.positions.map((position, index) => this.storeFor(`${documentKey}\n${index}\n${partition}\n${variableKey(position.variables, coerced)}`, position)),
      variables,
      writes: new Map(),
      failed: false,
    };
    this.states.set(context, state);
    let result: { data?: unknown; errors?: readonly unknown[] };
    try {
      result = (await plan.outer.query(undefined, context, variables)) as typeof result;
    } finally {
      this.states.delete(context);
    }
    if (state.failed || result.errors?.length) return undefined;
    for (const [store, pending] of state.writes) if (!store.write(pending, context, variables)) return undefined;
    return result;
  }

  private storeFor(key: string, position: PositionPlan): FragmentStore {
    let store = this.stores.get(key);
    if (store) this.stores.delete(key);
    else store = new FragmentStore(position);
    this.stores.set(key, store);
    if (this.stores.size > this.maxStores) this.stores.delete(this.stores.keys().next().value!);
    return store;
  }

  private position(
    cached: CachedAnswerType<object>,
    type: GraphQLObjectType,
    set: SelectionSetNode,
    operation: OperationDefinitionNode,
    fragments: FragmentDefinitionNode[],
  ): PositionPlan | undefined {
    // Response keys in the order graphql writes them (first occurrence), each with its field nodes.
    const byKey = new Map<string, FieldNode[]>();
    for (const selection of set.selections) {
      if (selection.kind !== Kind.FIELD || selection.directives?.length) return undefined;
      const key = selection.alias?.value ?? selection.name.value;
      byKey.set(key, [...(byKey.get(key) ?? []), selection]);
    }
    const keys = [...byKey.keys()];
    const groups: GroupPlan[] = [];
    for (const [index, key] of keys.entries()) {
      const name = byKey.get(key)![0]!.name.value;
      if (name !== "__typename" && !type.getFields()[name]) return undefined;
      const group = cached.groups.find((g) => g.fields.includes(name));
      if (!group) return undefined;
      let plan = groups.find((g) => g.group === group);
      if (!plan) groups.push((plan = { typeName: type.name, group, query: undefined as unknown as CompiledQuery, keys: [] }));
      plan.keys.push({ key, index });
    }
    for (const plan of groups) {
      const selections = plan.keys.flatMap(({ key }) => byKey.get(key)!);
      const document: DocumentNode = {
        kind: Kind.DOCUMENT,
        definitions: [
          {
            kind: Kind.OPERATION_DEFINITION,
            operation: operation.operation,
            variableDefinitions: operation.variableDefinitions ?? [],
            directives: [],
            selectionSet: {
              kind: Kind.SELECTION_SET,
              selections: [{ kind: Kind.FIELD, name: { kind: Kind.NAME, value: RENDER_FIELD(type.name) }, selectionSet: { kind: Kind.SELECTION_SET, selections } }],
            },
          },
          ...fragments,
        ],
      };
      const query = compileQuery(this.extended, document, undefined, { disablingCapturingStackErrors: true });
      if (!isCompiledQuery(query)) return undefined;
      plan.query = query;
    }
    return { typeName: type.name, keyCount: keys.length, groups, variables: variablesIn(set, fragments) };
  }
}

/** What stands in the rewritten operation for a cached selection. */
function hiddenSelection(position: number): SelectionSetNode {
  return {
    kind: Kind.SELECTION_SET,
    selections: [
      {
        kind: Kind.FIELD,
        name: { kind: Kind.NAME, value: PRERENDERED_FIELD },
        arguments: [{ kind: Kind.ARGUMENT, name: { kind: Kind.NAME, value: "position" }, value: { kind: Kind.INT, value: String(position) } }],
      },
    ],
  };
}

/** The variables a selection reads, with those of the fragments it spreads (sorted). */
function variablesIn(set: SelectionSetNode, fragments: FragmentDefinitionNode[]): string[] {
  const names = new Set<string>();
  const spread = new Set<string>();
  const walk = (node: SelectionSetNode) =>
    visit(node, {
      Variable: (variable) => void names.add(variable.name.value),
      FragmentSpread: (s) => {
        if (spread.has(s.name.value)) return;
        spread.add(s.name.value);
        const fragment = fragments.find((f) => f.name.value === s.name.value);
        if (fragment) walk(fragment.selectionSet);
      },
    });
  walk(set);
  return [...names].sort();
}

/** The values of `names` as one key; a variable not given (its default applies) differs from one given as null. */
function variableKey(names: string[], coerced: Record<string, unknown>): string {
  return names.map((name) => (name in coerced ? JSON.stringify(coerced[name]) : "-")).join("\u0000");
}

interface Entry {
  inputs: unknown[];
  json: PrerenderedJson;
}

/** Per group of a position: the objects whose fragment needs that group written, and where it goes. */
type PendingWrites = { objects: object[]; entries: Entry[] }[];

/**
 * The fragments of one position (document, partition, variables): per object, the inputs each
 * group was written from and the JSON. A fragment whose inputs changed is written for all such
 * objects of an answer at once, one compiled query per group (5,000 nodes' usage after a
 * metrics poll is one query over 5,000 objects, not 5,000 queries), and only kept once written.
 */
class FragmentStore {
  private readonly entries = new WeakMap<object, Entry>();

  constructor(private readonly position: PositionPlan) {}

  /** The object's fragment; when an input changed, one whose parts `write` fills in before the answer is complete. */
  fragmentOf(object: object, writes: Map<FragmentStore, PendingWrites>): PrerenderedJson {
    const { groups, keyCount } = this.position;
    const entry = this.entries.get(object);
    // The common case, every input unchanged since the last answer: nothing allocated.
    if (entry && groups.every((plan, g) => plan.group.inputOf(object) === entry.inputs[g])) return entry.json;
    let pending = writes.get(this);
    if (!pending) writes.set(this, (pending = groups.map(() => ({ objects: [], entries: [] }))));
    const inputs = groups.map((plan) => plan.group.inputOf(object));
    const fresh: Entry = { inputs, json: new PrerenderedJson(entry ? [...entry.json.parts] : new Array<Buffer>(keyCount)) };
    groups.forEach((_, g) => {
      if (entry && entry.inputs[g] === inputs[g]) return;
      pending[g]!.objects.push(object);
      pending[g]!.entries.push(fresh);
    });
    return fresh.json;
  }

  /** Writes what an answer found changed; false when a group could not be written (the answer is then made as before). */
  write(pending: PendingWrites, context: unknown, variables: Record<string, unknown>): boolean {
    const { groups, keyCount } = this.position;
    for (const [g, { objects, entries }] of pending.entries()) {
      if (objects.length === 0) continue;
      const values = writeGroup(groups[g]!, objects, context, variables);
      if (!values) return false;
      for (const [i, entry] of entries.entries()) {
        const parts = entry.json.parts;
        for (const { key, index } of groups[g]!.keys) {
          parts[index] = Buffer.from(`${index === 0 ? "{" : ","}${JSON.stringify(key)}:${JSON.stringify(values[i]![key])}${index === keyCount - 1 ? "}" : ""}`, "utf8");
        }
      }
    }
    // Kept only once every part is written.
    const seen = new Set<Entry>();
    for (const { objects, entries } of pending) {
      for (const [i, entry] of entries.entries()) {
        if (!seen.has(entry)) this.entries.set(objects[i]!, entry);
        seen.add(entry);
      }
    }
    return true;
  }
}

/** One group's values for each of `objects` (in order), or undefined when the query could not answer them all. */
function writeGroup(plan: GroupPlan, objects: object[], context: unknown, variables: Record<string, unknown>): Record<string, unknown>[] | undefined {
  const result = plan.query.query(objects, context, variables) as { data?: Record<string, Record<string, unknown>[] | null>; errors?: readonly unknown[] } | Promise<unknown>;
  // A cached field never waits; should one, or fail, the operation runs as before (and says why).
  if (result instanceof Promise) {
    result.catch(() => {});
    return undefined;
  }
  if (result.errors?.length) return undefined;
  return result.data![RENDER_FIELD(plan.typeName)] ?? undefined;
}
