import type { Database } from "../db/database.js";
import { Prisma } from "../db/generated/client.js";
import type { Logger } from "../log/logger.js";
import { RateLimiter, type Allowance, type Take } from "./rate-limiter.js";

/** Takes mutations from a caller's allowance; says when to come back when there is too little. */
export interface MutationLimiter {
  take(key: string, n?: number): Promise<Take>;
  /** What the caller may still take now, taking nothing. */
  peek(key: string): Promise<Allowance>;
}

/** The in-process limiter as a MutationLimiter: one replica, or PGlite (one process by nature). */
export function localLimiter(perMinute: number, now?: () => number): MutationLimiter {
  const limiter = new RateLimiter(perMinute, now);
  return { take: async (key, n) => limiter.take(key, n), peek: async (key) => limiter.peek(key) };
}

/** How often a replica deletes allowances that are full again (callers idle for a minute). */
const PRUNE_EVERY_MS = 60_000;

/**
 * The same token bucket as {@link RateLimiter}, kept in PostgreSQL (mutation_allowance) so that
 * every replica on the database draws from one allowance per caller. A take is one statement:
 * the upsert locks the caller's row, refills it by the time passed (the database's clock, so
 * replicas' clocks do not matter) and takes only if enough is there. When the database fails the
 * replica falls back to its own in-process bucket (a limit per replica rather than none), says so
 * once, and goes back to the shared one when the database answers.
 */
export class SharedRateLimiter implements MutationLimiter {
  private readonly fallback: RateLimiter;
  private failing = false;
  private prunedAt = 0;

  constructor(
    private readonly database: Database,
    private readonly perMinute: number,
    private readonly logger: Logger,
  ) {
    this.fallback = new RateLimiter(perMinute);
  }

  async take(key: string, n = 1): Promise<Take> {
    // More than a full bucket can never pass: a minute is the honest answer to "when".
    if (n > this.perMinute) return { ok: false, retryAfterSeconds: 60 };
    const perSecond = this.perMinute / 60;
    // What the bucket of row `a` holds now: refilled for the time since `at`, up to full.
    const available = Prisma.sql`least(${this.perMinute}::float8, a.tokens + extract(epoch FROM now() - a.at)::float8 * ${perSecond}::float8)`;
    try {
      const taken = await this.database.prisma.$queryRaw<unknown[]>`
        INSERT INTO mutation_allowance AS a (subject, tokens, at) VALUES (${key}, ${this.perMinute - n}::float8, now())
        ON CONFLICT (subject) DO UPDATE SET tokens = ${available} - ${n}::float8, at = now() WHERE ${available} >= ${n}::float8
        RETURNING 1`;
      let result: Take = { ok: true };
      if (taken.length === 0) {
        const [row] = await this.database.prisma.$queryRaw<{ available: number }[]>`
          SELECT ${available} AS available FROM mutation_allowance a WHERE a.subject = ${key}`;
        result = { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((n - (row?.available ?? this.perMinute)) / perSecond)) };
      }
      if (this.failing) this.logger.info("the mutation rate limit is shared through the database again");
      this.failing = false;
      this.prune();
      return result;
    } catch (error) {
      if (!this.failing) {
        this.logger.warn({ err: (error as Error).message }, "the mutation rate limit cannot reach the database; limiting per replica until it can");
      }
      this.failing = true;
      return this.fallback.take(key, n);
    }
  }

  async peek(key: string): Promise<Allowance> {
    if (this.failing) return this.fallback.peek(key);
    try {
      const [row] = await this.database.prisma.$queryRaw<{ available: number }[]>`
        SELECT least(${this.perMinute}::float8, a.tokens + extract(epoch FROM now() - a.at)::float8 * ${this.perMinute / 60}::float8) AS available
        FROM mutation_allowance a WHERE a.subject = ${key}`;
      const tokens = row?.available ?? this.perMinute;
      return { remaining: Math.floor(tokens), fullInSeconds: ((this.perMinute - tokens) * 60) / this.perMinute };
    } catch {
      return this.fallback.peek(key);
    }
  }

  /** Deletes full allowances now and then, so the table holds only callers active in the last minute. */
  private prune(): void {
    if (Date.now() - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = Date.now();
    this.database.prisma.$executeRaw`DELETE FROM mutation_allowance WHERE at < now() - interval '1 minute'`.catch(() => {});
  }
}
