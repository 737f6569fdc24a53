import { setFlagsFromString } from "node:v8";

/**
 * Every V8 flag the service sets, in one place. A flag of the caller's own (`node --flag …`)
 * always wins. Their measurements are in docs/scaling.md.
 *
 * - `--max-semi-space-size=4`: in bin/node-inventory.js's shebang, because V8 reads it only when
 *   node starts. A young generation left to grow while the first sync and large answers allocate
 *   stays resident; small semi-spaces keep the peak lower at the same speed.
 * - `--heap-growing-percent=15` ({@link boundHeapGrowth}, by `serve`): after each full collection
 *   V8 lets the heap grow to a multiple of what survived; large answers are short-lived garbage,
 *   so a fixed growth keeps the resident size bounded for more collections (Go's GOGC trade).
 * - `--liftoff-only` ({@link useLiftoffOnly}, when PGlite opens): PGlite's PostgreSQL is
 *   WebAssembly, and TurboFan's tier-up keeps its background threads' working memory resident;
 *   Liftoff alone uses less memory and CPU at start for somewhat slower steady reads.
 */
export function boundHeapGrowth(): void {
  if (callerSet(/^--heap[-_]growing[-_]percent/)) return;
  setFlagsFromString("--heap-growing-percent=15");
}

/** See the module's comment; once per process (a test run opens hundreds of databases). */
export function useLiftoffOnly(): void {
  if (liftoffDecided) return;
  liftoffDecided = true;
  if (callerSet(/^--(no-)?liftoff[-_]only/)) return;
  setFlagsFromString("--liftoff-only");
}
let liftoffDecided = false;

function callerSet(flag: RegExp): boolean {
  return process.execArgv.some((arg) => flag.test(arg));
}
