import type { Resolvers } from "../graphql/schema.js";
import { requireRole } from "./principal.js";
import type { MutationLimiter } from "./shared-rate-limiter.js";

/**
 * `Query.rateLimit`: the operation's measured cost beside the most one may cost, and the
 * caller's mutation allowance (taking nothing from it).
 */
export function rateLimitResolvers(maxCost: number, mutationsPerMinute: number, limiter: () => MutationLimiter | undefined): Resolvers {
  return {
    Query: {
      rateLimit: async (_parent, _args, context) => {
        const principal = requireRole(context.principal, "viewer");
        const rate = limiter();
        const allowance = rate ? await rate.peek(principal.subject) : undefined;
        return {
          cost: context.operationCost ?? 0,
          maxCost,
          limit: allowance ? mutationsPerMinute : null,
          remaining: allowance?.remaining ?? null,
          resetAt: allowance && allowance.fullInSeconds > 0 ? new Date(Date.now() + Math.ceil(allowance.fullInSeconds * 1000)) : null,
        };
      },
    },
  };
}
