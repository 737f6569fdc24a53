/** A retry schedule, like client-go's wait.Backoff: a first delay, doubled at each retry up to a cap, optionally jittered. */
export interface Backoff {
  initialMs: number;
  maxMs: number;
  /** Spread over the upper half of the delay, so replicas that failed together do not retry together. */
  jitter?: boolean;
}

/** The delay before retry number `attempt` (1 for the first retry after a failure). */
export function backoffDelay(backoff: Backoff, attempt: number): number {
  const delay = Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(attempt - 1, 30));
  return backoff.jitter ? delay / 2 + Math.random() * (delay / 2) : delay;
}
