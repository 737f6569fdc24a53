import type { CompileCost } from "../performance/executor.js";

/**
 * What a test (or an embedding program) can watch the app do, so it waits on the event itself
 * instead of sleeping: handed in through AppOverrides.probes and wired by createApp as it starts.
 */
export class AppProbes {
  /** How many subscription listeners the subscription hub holds now (0 before start). */
  subscriberCount: () => number = () => 0;
  /** The ids of the drains this replica's runners are executing now (none before start). */
  drainsRunning: () => readonly string[] = () => [];
  /** The status a drain's runner on this replica last reported, before it is written (undefined when none runs it). */
  drainRunnerStatus: (id: string) => string | undefined = () => undefined;
  /** How many operations graphql-jit has compiled (performance/executor.ts). */
  compiledOperations: () => number = () => 0;
  /** Observations and reconciles the history recorder has not finished writing (the write under way included). */
  historyPending: () => number = () => 0;
  /** Each node in a cluster's cache with the resourceVersion the cache holds (empty for a cluster not watched). */
  cachedNodeVersions: (cluster: string) => Record<string, string> = () => ({});
  /** How many answers were made of prerendered node fragments (performance/answer-fragments.ts). */
  answersFromFragments: () => number = () => 0;
  /** What compiling documents has cost so far (performance/executor.ts). */
  compileCost: () => CompileCost = () => ({ count: 0, totalMs: 0, maxMs: 0 });
}
