import type { GatewayInterface } from "@apollo/server-gateway-interface";
import type { FormattedExecutionResult, GraphQLSchema } from "graphql";
import { compiledExecutorGateway, type CompileCost, type CompiledExecutorOptions } from "./executor.js";
import type { PrerenderedAnswers } from "./prerendered-json.js";

/** What Apollo runs operations with: the compiled executor behind a gateway, or the schema as graphql-js executes it. */
export type ExecutionOptions = { gateway: GatewayInterface; stringifyResult: (result: FormattedExecutionResult) => string } | { schema: GraphQLSchema };

export interface AnswerCache {
  /** Spread into Apollo Server's options. */
  execution: ExecutionOptions;
  /** Whether graphql-ws messages may be written as single frames beside ws's sender (websocket-text-frame.ts). */
  textFrames: boolean;
  /** Operations compiled so far; answers made of prerendered fragments so far (0 when off). */
  compiled(): number;
  answeredFromFragments(): number;
  compileCost(): CompileCost;
}

/**
 * The service's one switch for its performance machinery (`--answer-cache=off`): on, the live
 * inventory's queries run compiled (executor.ts), nodes' JSON is reused (answer-fragments.ts),
 * large answers are written as bytes (prerendered-json.ts) and WebSocket messages as single
 * frames (websocket-text-frame.ts). Off, every operation runs on plain graphql-js and is sent
 * as Apollo and ws send it: the reference the parity tests compare with, and a way out if any
 * of it misbehaves.
 */
export function answerCache(on: boolean, schema: GraphQLSchema, prerendered: PrerenderedAnswers, options: CompiledExecutorOptions): AnswerCache {
  if (!on) return { execution: { schema }, textFrames: false, compiled: () => 0, answeredFromFragments: () => 0, compileCost: () => ({ count: 0, totalMs: 0, maxMs: 0 }) };
  const gateway = compiledExecutorGateway(schema, options);
  return {
    execution: { gateway, stringifyResult: prerendered.stringifyResult },
    textFrames: true,
    compiled: gateway.compiled,
    answeredFromFragments: gateway.answeredFromFragments,
    compileCost: gateway.compileCost,
  };
}
