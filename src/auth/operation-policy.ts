import { Kind, visit, type DocumentNode, type SelectionSetNode } from "graphql";
import type { LimitsConfig } from "../config/config.js";
import type { AuditDone, OperationPolicy } from "../graphql/caller.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import { MAX_EXPANDED_SELECTIONS, MAX_FRAGMENT_SPREADS, measureOperation } from "../graphql/operation-limits.js";
import { outcomeOf, redactSecrets } from "./audit.js";
import { requireRole } from "./principal.js";
import type { MutationLimiter } from "./shared-rate-limiter.js";

/** Why an operation was refused, in `extensions.reason`. */
export const RefusalReason = {
  QUERY_TOO_DEEP: "QUERY_TOO_DEEP",
  QUERY_TOO_COSTLY: "QUERY_TOO_COSTLY",
  /** Too many fragment spreads, or more field selections than a document could spell out. */
  QUERY_TOO_COMPLEX: "QUERY_TOO_COMPLEX",
  RATE_LIMITED: "RATE_LIMITED",
} as const;

export type { AuditDone, OperationPolicy, OperationRequest } from "../graphql/caller.js";

/**
 * The checks every operation passes before it runs, over HTTP and WebSocket alike: its
 * role (mutations need operator, everything else viewer), its depth and cost (a filter
 * charged for the `cachedNodes()` it is matched against; a subscription's cost is that of one
 * event, bounded by its own limit), and for mutations the caller's rate (`limiter()`: the limiter in use, none when unlimited).
 * Resolvers may still ask for more with requireRole.
 */
export function createOperationPolicy(
  limits: LimitsConfig,
  mutationRateLimit: number,
  limiter: () => MutationLimiter | undefined,
  cachedNodes: () => number = () => 0,
): OperationPolicy {
  /**
   * A refused mutation still takes one from its caller's allowance, so refusals (a viewer's
   * mutations, over-deep or over-costly ones) cannot be sent, and audited, without limit;
   * once the allowance is gone the refusal is RATE_LIMITED itself.
   */
  const chargedRefusal = async (error: unknown, subject?: string): Promise<unknown> => {
    const rate = limiter();
    if (!rate || !subject || !(error instanceof AppError) || error.extensions["reason"] === RefusalReason.RATE_LIMITED) return error;
    const taken = await rate.take(subject, 1);
    return taken.ok ? error : rateLimited(taken.retryAfterSeconds);
  };
  const rateLimited = (retryAfterSeconds: number) =>
    new AppError(ErrorCode.RATE_LIMITED, `Too many mutations: at most ${mutationRateLimit} a minute; try again in ${retryAfterSeconds} s`, {
      reason: RefusalReason.RATE_LIMITED,
      retryAfterSeconds,
    });

  return {
    async admit({ context, schema, document, operation, variables, transport }) {
      const mutation = operation.operation === "mutation";
      const fields = mutation ? rootFields(document, operation.selectionSet) : [];
      const audit: AuditDone | undefined = mutation
        ? (errors) =>
            context.logger.info(
              {
                audit: "mutation",
                subject: context.principal?.subject ?? null,
                role: context.principal?.role ?? null,
                via: context.principal?.via ?? null,
                operationName: operation.name?.value ?? null,
                fields,
                variables: redactSecrets(variables ?? {}),
                outcome: outcomeOf(errors),
                transport,
              },
              "mutation",
            )
        : undefined;
      try {
        const principal = requireRole(context.principal, mutation ? "operator" : "viewer");
        const nul = nulIn(document, variables);
        if (nul) throw new AppError(ErrorCode.BAD_USER_INPUT, `Text must not contain the NUL character (U+0000): found in ${nul}`);
        const subscription = operation.operation === "subscription";
        // A subscription's filter is matched against the one node of each event.
        const { depth, cost, selections, spreads } = measureOperation(schema, document, operation, variables, { nodes: subscription ? 1 : cachedNodes() });
        if (spreads > MAX_FRAGMENT_SPREADS) {
          throw new AppError(ErrorCode.BAD_USER_INPUT, `The document has ${spreads} fragment spreads; at most ${MAX_FRAGMENT_SPREADS} are allowed`, {
            reason: RefusalReason.QUERY_TOO_COMPLEX,
            spreads,
            maxSpreads: MAX_FRAGMENT_SPREADS,
          });
        }
        if (selections > MAX_EXPANDED_SELECTIONS) {
          throw new AppError(
            ErrorCode.BAD_USER_INPUT,
            `The operation amounts to ${selections} field selections once its fragments are spread; at most ${MAX_EXPANDED_SELECTIONS} are allowed`,
            { reason: RefusalReason.QUERY_TOO_COMPLEX, selections, maxSelections: MAX_EXPANDED_SELECTIONS },
          );
        }
        if (depth > limits.maxQueryDepth) {
          throw new AppError(ErrorCode.BAD_USER_INPUT, `The operation nests ${depth} levels deep; at most ${limits.maxQueryDepth} are allowed`, {
            reason: RefusalReason.QUERY_TOO_DEEP,
            depth,
            maxDepth: limits.maxQueryDepth,
          });
        }
        if (subscription && cost > limits.maxSubscriptionEventCost) {
          throw new AppError(
            ErrorCode.BAD_USER_INPUT,
            `Each event of the subscription may resolve ${cost} objects; at most ${limits.maxSubscriptionEventCost} are allowed (select less, or use a smaller filter)`,
            { reason: RefusalReason.QUERY_TOO_COSTLY, cost, maxCost: limits.maxSubscriptionEventCost },
          );
        }
        context.operationCost = cost;
        if (cost > limits.maxQueryCost) {
          throw new AppError(
            ErrorCode.BAD_USER_INPUT,
            `The operation may resolve ${cost} objects; at most ${limits.maxQueryCost} are allowed (ask for smaller pages with first)`,
            { reason: RefusalReason.QUERY_TOO_COSTLY, cost, maxCost: limits.maxQueryCost },
          );
        }
        const rate = mutation ? limiter() : undefined;
        if (rate) {
          // Each mutation field is one mutation: aliases cannot multiply the allowance.
          const taken = await rate.take(principal.subject, Math.max(1, fields.length));
          if (!taken.ok) throw rateLimited(taken.retryAfterSeconds);
        }
      } catch (error) {
        const refusal = mutation ? await chargedRefusal(error, context.principal?.subject) : error;
        if (audit && refusal instanceof AppError) audit([refusal]);
        throw refusal;
      }
      return audit;
    },
  };
}

/**
 * Where a string of the operation holds U+0000, if one does: PostgreSQL cannot store it in
 * text, so a name, filter or reason with one is refused before anything runs rather than
 * failing (or worse, wedging a writer) at the database. Variables are walked without
 * recursion: a body of nested arrays must not overflow the stack.
 */
function nulIn(document: DocumentNode, variables: Record<string, unknown> | undefined): string | undefined {
  let found: string | undefined;
  visit(document, {
    StringValue(node) {
      if (!found && node.value.includes("\u0000")) found = `a string at line ${node.loc?.startToken.line ?? "?"}`;
    },
  });
  if (found) return found;
  for (const [name, value] of Object.entries(variables ?? {})) {
    const stack: unknown[] = [value];
    while (stack.length) {
      const item = stack.pop();
      if (typeof item === "string") {
        if (item.includes("\u0000")) return `variable $${name}`;
      } else if (typeof item === "object" && item !== null) {
        for (const inner of Object.values(item)) stack.push(inner);
      }
    }
  }
  return undefined;
}

/** The root fields an operation selects, through fragments, in order; each fragment is followed once (execution merges repeated spreads). */
function rootFields(document: DocumentNode, set: SelectionSetNode, seen = new Set<string>()): string[] {
  return set.selections.flatMap((selection) => {
    if (selection.kind === Kind.FIELD) return [selection.name.value];
    if (selection.kind === Kind.INLINE_FRAGMENT) return rootFields(document, selection.selectionSet, seen);
    const name = selection.name.value;
    const fragment = document.definitions.find((d) => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === name);
    if (!fragment || fragment.kind !== Kind.FRAGMENT_DEFINITION || seen.has(name)) return [];
    seen.add(name);
    return rootFields(document, fragment.selectionSet, seen);
  });
}
