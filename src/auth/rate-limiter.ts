/** What a caller's bucket holds: whole tokens left, and seconds until it is full again. */
export interface Allowance {
  remaining: number;
  fullInSeconds: number;
}

/** A refusal says when to come back. */
export type Take = { ok: true } | { ok: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  at: number;
}

/** Buckets kept before full ones (callers idle for a minute) are forgotten. */
const PRUNE_ABOVE = 10_000;

/**
 * A token bucket per key: `perMinute` tokens, refilled continuously at `perMinute` a minute,
 * so a caller may burst up to the limit and then go on at its rate. Small enough to own:
 * a library would bring stores and policies we do not need for one in-process counter.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {
    this.perMs = perMinute / 60_000;
  }

  /** Takes `n` tokens from `key`'s bucket, or none and says how long until there are `n`. */
  take(key: string, n = 1): Take {
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.perMinute, at: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * this.perMs);
    bucket.at = now;
    if (this.buckets.size >= PRUNE_ABOVE && !this.buckets.has(key)) this.prune(now);
    this.buckets.set(key, bucket);
    if (bucket.tokens >= n) {
      bucket.tokens -= n;
      return { ok: true };
    }
    // More than a full bucket can never pass: a minute is the honest answer to "when".
    const missing = Math.min(n, this.perMinute) - bucket.tokens;
    return { ok: false, retryAfterSeconds: n > this.perMinute ? 60 : Math.max(1, Math.ceil(missing / this.perMs / 1000)) };
  }

  /** What `key`'s bucket holds now and how long until it is full again, taking nothing. */
  peek(key: string): Allowance {
    const bucket = this.buckets.get(key);
    const tokens = bucket ? Math.min(this.perMinute, bucket.tokens + (this.now() - bucket.at) * this.perMs) : this.perMinute;
    return { remaining: Math.floor(tokens), fullInSeconds: (this.perMinute - tokens) / this.perMs / 1000 };
  }

  private prune(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.at) * this.perMs >= this.perMinute) this.buckets.delete(key);
    }
  }
}
