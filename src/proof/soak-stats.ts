/** The soak's pure parts: its fault schedule and the statistics of its report. */
import { Rng } from "../sim/rng.js";

export const FAULT_KINDS = ["kill", "freeze", "postgres", "cut", "sim-restart", "rv-reset", "skew", "drain"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/**
 * When each fault starts (ms from the start), for a seed: every kind `perKind` times (default:
 * as many as fit one fault per 40 s), in a seeded order, spread over the run with seeded jitter,
 * none in the first 20 s (the replicas settle) or the last 30 s (the run quiets down).
 */
export function faultSchedule(seed: number, kinds: readonly FaultKind[], durationMs: number, perKind?: number): { at: number; kind: FaultKind }[] {
  if (kinds.length === 0) return [];
  const rng = new Rng(seed * 7919 + 1);
  const window = Math.max(0, durationMs - 50_000);
  const each = perKind ?? Math.max(1, Math.floor(window / 40_000 / kinds.length));
  const order = kinds.flatMap((k) => Array.from({ length: each }, () => k));
  for (let i = order.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const slot = window / order.length;
  return order.map((kind, i) => ({ kind, at: Math.round(20_000 + i * slot + rng.next() * slot * 0.3) }));
}

/** Least-squares slope of y over x. */
export function linearSlope(points: readonly (readonly [number, number])[]): number | null {
  if (points.length < 2) return null;
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? null : num / den;
}

/** The nearest-rank percentile (0..1); null for no values. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}
