/**
 * The contract's NodeFilter, compiled once per query into one predicate that runs over every
 * cached node (5,000 per query in the bench), so all parsing and set building happens up front.
 */

import type { CachedNode } from "../cluster/model.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import type { ConditionStatus, NodeFilter } from "../graphql/generated/resolvers-types.js";
import { parseLabelSelector, SelectorParseError } from "../k8s/label-selector.js";
import { MAX_FILTER_LIST, MAX_FILTER_NAMES, QUOTED_TEXT_LENGTH } from "../k8s/selector-limits.js";
import { hasEvictionCountdown } from "../node-lifecycle/eviction-outlook.js";

/** A node predicate. */
export type NodePredicate = (node: CachedNode) => boolean;

/** Kubernetes' "True" / "False" / "Unknown" as the contract's enum; anything else is UNKNOWN. */
export function conditionStatus(status: string): ConditionStatus {
  return status === "True" ? "TRUE" : status === "False" ? "FALSE" : "UNKNOWN";
}

/**
 * The current status of the node's condition of this type, or undefined when it has none.
 * Like kubectl's STATUS column, if a type appears twice the last one wins.
 */
export function currentCondition(node: CachedNode, type: string): ConditionStatus | undefined {
  let found: string | undefined;
  for (const c of node.conditions) if (c.type === type) found = c.status;
  return found === undefined ? undefined : conditionStatus(found);
}

/** The Node.ready field: status of the Ready condition, UNKNOWN when it is missing. */
export function readyStatus(node: CachedNode): ConditionStatus {
  return currentCondition(node, "Ready") ?? "UNKNOWN";
}

const NODE_ROLE_PREFIX = "node-role.kubernetes.io/";
const LEGACY_ROLE_LABEL = "kubernetes.io/role";

/**
 * Compiles a NodeFilter. All given fields must hold (AND):
 *
 * - `labelSelector`: full Kubernetes syntax; "" matches every node, as labels.Parse("") does;
 * - `names`: exact names; an empty list matches no node (membership in an empty set);
 * - `ready`: true ↔ the Ready condition is "True"; False, Unknown or missing are not ready;
 * - `schedulable`: true ↔ not cordoned (spec.unschedulable is not true);
 * - `roles`: the node has ANY of these roles as kubectl shows them (nodeRoles); an empty list
 *   matches no node;
 * - `evictionCountdown`: the node carries a not-ready or unreachable NoExecute taint;
 * - `condition`: the node's condition of that type currently has that status. A node without
 *   that condition matches nothing, not even UNKNOWN: the contract asks about the condition's
 *   current status, and an absent condition has none.
 *
 * @throws AppError BAD_USER_INPUT for a malformed selector, e.g.
 *   "filter.labelSelector: unable to parse requirement: ... at position 4".
 */
/** Refuses lists longer than the filter's limits (selector-limits.ts) before anything is built from them. */
function boundedLists(filter: NodeFilter): void {
  const tooMany = (field: string, count: number, max: number) => {
    if (count > max) throw new AppError(ErrorCode.BAD_USER_INPUT, `filter.${field}: ${count} entries; at most ${max} are allowed`, { field: `filter.${field}`, max });
  };
  tooMany("names", filter.names?.length ?? 0, MAX_FILTER_NAMES);
  tooMany("roles", filter.roles?.length ?? 0, MAX_FILTER_LIST);
  const type = filter.condition?.type;
  if (type !== undefined && type.length > QUOTED_TEXT_LENGTH) {
    throw new AppError(ErrorCode.BAD_USER_INPUT, `filter.condition.type: ${type.length} characters; at most ${QUOTED_TEXT_LENGTH} are allowed (a condition type is a qualified name)`);
  }
}

/** What a filter needs beside the node itself: whether its Lease is overdue (node-facts-cache.ts). */
export interface NodeFilterFacts {
  heartbeatStale: NodePredicate;
}

/**
 * The NodeFilter input as GraphQL hands it over: omitted and null both mean "no constraint".
 * `facts` answers staleHeartbeat; without it (hand-made nodes in tests) no node is stale.
 */
export function compileNodeFilter(filter: NodeFilter | null | undefined, facts?: NodeFilterFacts): NodePredicate {
  if (!filter) return () => true;
  boundedLists(filter);
  const checks: NodePredicate[] = [];

  if (filter.staleHeartbeat != null) {
    const wanted = filter.staleHeartbeat;
    const stale = facts?.heartbeatStale ?? (() => false);
    checks.push((node) => stale(node) === wanted);
  }

  if (filter.evictionCountdown != null) {
    const wanted = filter.evictionCountdown;
    checks.push((node) => hasEvictionCountdown(node) === wanted);
  }

  if (filter.names != null) {
    const names = new Set(filter.names);
    checks.push((node) => names.has(node.name));
  }

  if (filter.labelSelector != null) {
    let selector;
    try {
      selector = parseLabelSelector(filter.labelSelector);
    } catch (error) {
      if (error instanceof SelectorParseError) {
        const where = error.position >= 0 ? ` at position ${error.position}` : "";
        throw new AppError(ErrorCode.BAD_USER_INPUT, `filter.labelSelector: ${error.reason}${where}`);
      }
      throw error;
    }
    // An empty selector matches everything: skip the per-node call.
    if (selector.requirements.length > 0) checks.push((node) => selector.matches(node.labels));
  }

  if (filter.ready != null) {
    const wanted = filter.ready;
    checks.push((node) => (readyStatus(node) === "TRUE") === wanted);
  }

  if (filter.schedulable != null) {
    const wanted = filter.schedulable;
    checks.push((node) => !node.unschedulable === wanted);
  }

  if (filter.roles != null) {
    // Same rule as nodeRoles (node-display.ts), read straight from the labels so no array of
    // roles is built per node: node-role.kubernetes.io/<role> with any value, or the legacy
    // kubernetes.io/role=<role>. nodeRoles never yields "", so "" matches nothing.
    const roles = [...new Set(filter.roles)].filter((r) => r !== "");
    const roleSet = new Set(roles);
    const keys = roles.map((r) => NODE_ROLE_PREFIX + r);
    checks.push((node) => {
      const labels = node.labels;
      for (const key of keys) if (Object.hasOwn(labels, key)) return true;
      const legacy = labels[LEGACY_ROLE_LABEL];
      return legacy !== undefined && roleSet.has(legacy);
    });
  }

  if (filter.condition != null) {
    const { type, status } = filter.condition;
    checks.push((node) => currentCondition(node, type) === status);
  }

  if (checks.length === 0) return () => true;
  if (checks.length === 1) return checks[0]!;
  return (node) => {
    for (const check of checks) if (!check(node)) return false;
    return true;
  };
}
