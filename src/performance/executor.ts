import type { GatewayExecutor, GatewayGraphQLRequestContext, GatewayInterface } from "@apollo/server-gateway-interface";
import { execute, getVariableValues, Kind, type DocumentNode, type ExecutionResult, type GraphQLSchema, type OperationDefinitionNode, type SelectionSetNode } from "graphql";
import { compileQuery, isCompiledQuery, type CompiledQuery } from "graphql-jit";
import { AnswerFragments, type AnswerFragmentsOptions, type FragmentPlan } from "./answer-fragments.js";
import { markLargeAnswer, markPrerendered } from "./prerendered-json.js";

/**
 * The root fields whose answers can be large: the live watch cache's and the capacity report's
 * (hundreds of thousands of fields for a large fleet), where graphql-js's per-field work, and the
 * garbage it leaves under the serve command's heap bound, is most of the time (docs/scaling.md). Everything
 * else (history, availability, the service's status, mutations, introspection) is small and
 * keeps graphql-js as it is.
 */
const COMPILED_ROOT_FIELDS = new Set(["clusters", "nodes", "node", "capacityReport", "__typename"]);

export interface CompiledExecutorOptions {
  /**
   * How many times a document is run by graphql-js before it is compiled. Default 0: compiled at
   * its first execution, so a new dashboard's first answer is as fast as its next. Compiling
   * costs time once per document (measured: {@link CompiledExecutor.compileCost}), bounded by
   * the document's size (MAX_DOCUMENT_TOKENS) and the number kept (`maxCompiled`).
   */
  compileAfter?: number;
  /** Compiled documents kept (least recently used dropped first). */
  maxCompiled?: number;
  /**
   * Types whose selections are answered from JSON written once per object and reused while its
   * inputs are unchanged (answer-fragments.ts); the answer then holds PrerenderedJson values,
   * which only PrerenderedAnswers (prerendered-json.ts) writes out. Absent: plain answers.
   */
  answerFragments?: AnswerFragmentsOptions;
  /**
   * The object that stands for the request an operation's context value belongs to, for
   * PrerenderedAnswers to hand the answer's bytes to that request alone. Apollo runs each
   * operation on a copy of the context value, so the copy itself will not do. Default: the context value.
   */
  requestOf?: (contextValue: unknown) => object;
}

/**
 * What executes one operation: the document is valid and `operation` is the one to run, or
 * undefined when the operation name resolves to none (graphql-js then says why, and Apollo
 * answers that as the caller's error).
 */
export interface OperationRequest {
  document: DocumentNode;
  operation: OperationDefinitionNode | undefined;
  operationName: string | null;
  variables: Record<string, unknown> | undefined;
  contextValue: unknown;
  /** Identifies the document text (Apollo's query hash). */
  documentKey: string;
}

interface Compiled {
  seen: number;
  query?: CompiledQuery;
  /** How the operation is answered with fragments; null when it is not. */
  answerPlan?: FragmentPlan | null;
}

/**
 * Runs the queries whose answers can be large (live cache, capacity report) as graphql-jit
 * compiled functions, cached per document, and everything else with graphql-js. The answers are graphql-js's, byte for byte
 * (test/graphql/executor-parity.test.ts): variables are coerced by graphql-js first, so a bad
 * variable gets graphql-js's own error, and jit never sees a document graphql-js would reject.
 */
export function createCompiledExecutor(schema: GraphQLSchema, options: CompiledExecutorOptions = {}): CompiledExecutor {
  const compileAfter = options.compileAfter ?? 0;
  const maxCompiled = options.maxCompiled ?? 200;
  // A Map iterates in insertion order: re-inserting on use makes the first key the least recent.
  const cache = new Map<string, Compiled>();
  const answerFragments = options.answerFragments ? new AnswerFragments(schema, options.answerFragments) : undefined;
  const requestOf = options.requestOf ?? ((contextValue: unknown) => contextValue as object);

  const entryFor = (key: string): Compiled => {
    let entry = cache.get(key);
    if (entry) cache.delete(key);
    else entry = { seen: 0 };
    cache.set(key, entry);
    if (cache.size > maxCompiled) cache.delete(cache.keys().next().value!);
    return entry;
  };

  let compiledCount = 0;
  const compileCost = { count: 0, totalMs: 0, maxMs: 0 };
  let answeredFromFragments = 0;
  const run = async (request: OperationRequest): Promise<ExecutionResult> => {
    const { document, operation, operationName, variables, contextValue } = request;
    const plain = () => execute({ schema, document, operationName, variableValues: variables, contextValue }) as Promise<ExecutionResult> | ExecutionResult;
    if (operation?.operation !== "query" || !compilable(operation.selectionSet)) return plain();
    const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {}, { maxErrors: 50 });
    if (coerced.errors) return plain();
    const entryKey = `${request.documentKey}\n${operationName ?? ""}`;
    const entry = entryFor(entryKey);
    // An answer here can be all 5,000 nodes, or a report group per node: written as bytes at once (prerendered-json.ts).
    const asBytes = async (result: Promise<ExecutionResult> | ExecutionResult) => {
      const answer = await result;
      const request = requestOf(contextValue);
      if (answer.data && typeof request === "object" && request !== null) markLargeAnswer(answer.data, request);
      return answer;
    };
    if (!entry.query) {
      if (++entry.seen <= compileAfter) return asBytes(plain());
      const started = performance.now();
      const compiled = compileOrFail(schema, document, operationName);
      // Compiling fails only on what validation already refused; graphql-js then says why.
      if (!compiled) return asBytes(plain());
      entry.query = compiled;
      entry.answerPlan = planAnswer(answerFragments, document, operation);
      const ms = performance.now() - started;
      compileCost.count++;
      compileCost.totalMs += ms;
      compileCost.maxMs = Math.max(compileCost.maxMs, ms);
      compiledCount++;
    }
    if (entry.answerPlan) {
      const answer = await answerFragments!.run(entry.answerPlan, entryKey, contextValue, variables ?? {}, coerced.coerced);
      if (answer) {
        answeredFromFragments++;
        if (answer.data) markPrerendered(answer.data, requestOf(contextValue));
        return answer as ExecutionResult;
      }
    }
    return asBytes(entry.query.query(undefined, contextValue, variables ?? {}) as Promise<ExecutionResult> | ExecutionResult);
  };
  return Object.assign(run, { compiled: () => compiledCount, answeredFromFragments: () => answeredFromFragments, compileCost: () => ({ ...compileCost }) });
}

/** What compiling (and planning the fragments of) documents has cost so far. */
export interface CompileCost {
  count: number;
  totalMs: number;
  maxMs: number;
}

/** Runs one operation; `compiled()` counts the operations compiled so far, `answeredFromFragments()` the answers made of prerendered fragments. */
export type CompiledExecutor = ((request: OperationRequest) => Promise<ExecutionResult>) & { compiled(): number; answeredFromFragments(): number; compileCost(): CompileCost };

/** The compiled query, or undefined when graphql-jit refuses or throws (the operation then runs on graphql-js). */
function compileOrFail(schema: GraphQLSchema, document: DocumentNode, operationName: string | null): CompiledQuery | undefined {
  try {
    const compiled = compileQuery(schema, document, operationName ?? undefined, { disablingCapturingStackErrors: true });
    return isCompiledQuery(compiled) ? compiled : undefined;
  } catch {
    return undefined;
  }
}

/** The operation's fragment plan; none when planning fails (the operation then runs as it always did). */
function planAnswer(fragments: AnswerFragments | undefined, document: DocumentNode, operation: OperationDefinitionNode): FragmentPlan | null {
  try {
    return fragments?.plan(document, operation) ?? null;
  } catch {
    return null;
  }
}

/** Only the compiled root fields, no fragments at the root (they would hide what is asked). */
function compilable(set: SelectionSetNode): boolean {
  return set.selections.every((s) => s.kind === Kind.FIELD && COMPILED_ROOT_FIELDS.has(s.name.value));
}

/**
 * Apollo Server's gateway interface, used for what it is: a way to put another executor behind
 * Apollo's parsing, validation, plugins and error formatting. The schema never changes.
 */
export function compiledExecutorGateway(schema: GraphQLSchema, options: CompiledExecutorOptions = {}): GatewayInterface & Pick<CompiledExecutor, "compiled" | "answeredFromFragments" | "compileCost"> {
  const run = createCompiledExecutor(schema, options);
  const executor: GatewayExecutor = (context: GatewayGraphQLRequestContext) =>
    run({
      document: context.document,
      // Apollo hands a gateway the request before resolving its operation: it may be none.
      operation: context.operation as OperationDefinitionNode | undefined,
      operationName: context.operationName ?? context.request.operationName ?? null,
      variables: context.request.variables,
      contextValue: context.context,
      documentKey: context.queryHash,
    }) as ReturnType<GatewayExecutor>;
  return {
    async load() {
      return { executor };
    },
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: "" });
      return () => {};
    },
    async stop() {},
    compiled: run.compiled,
    answeredFromFragments: run.answeredFromFragments,
    compileCost: run.compileCost,
  };
}
