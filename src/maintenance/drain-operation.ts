/**
 * A drain as it is stored and served: the operation, its options and each pod's progress.
 * Plain data; the executor replaces pod entries as they move on.
 */

import type { DrainOptionName, DrainPhaseCounts, DrainPodPhase, DrainPodStatus, DrainStatus } from "../graphql/generated/resolvers-types.js";
import type { DrainOptions } from "./drain-plan.js";

export type { DrainPodStatus, DrainStatus } from "../graphql/generated/resolvers-types.js";

export const ACTIVE_STATUSES: readonly DrainStatus[] = ["PENDING", "RUNNING"];

export interface DrainPodState {
  namespace: string;
  name: string;
  uid: string;
  status: DrainPodStatus;
  action: "EVICT" | "DELETE" | null;
  reason: string | null;
  /** The PodDisruptionBudget refusing the eviction, while one does. */
  blockedBy: string | null;
  attempts: number;
  /** For a pod that refuses the drain, the option that would let it go on (absent in drains stored before it was kept). */
  unblockedBy?: DrainOptionName | null;
}

export interface DrainOperation {
  id: string;
  cluster: string;
  node: string;
  status: DrainStatus;
  dryRun: boolean;
  requestedBy: string;
  reason: string | null;
  options: DrainOptions;
  pods: DrainPodState[];
  warnings: string[];
  message: string | null;
  startedAt: Date;
  finishedAt: Date | null;
}

export function isActive(status: DrainStatus): boolean {
  return status === "PENDING" || status === "RUNNING";
}

/** A pod the drain is done with, one way or another. */
export function isSettled(pod: DrainPodState): boolean {
  return pod.status === "EVICTED" || pod.status === "DELETED" || pod.status === "SKIPPED" || pod.status === "FAILED";
}

/** Pods still to be removed. */
export function remainingPods(operation: DrainOperation): number {
  return operation.pods.filter((pod) => !isSettled(pod)).length;
}

/** Share of the pods to remove that are gone, 0–100; 100 when there was nothing to remove. */
export function progressPercent(operation: DrainOperation): number {
  const toRemove = operation.pods.filter((pod) => pod.action !== null);
  if (toRemove.length === 0) return operation.status === "SUCCEEDED" || isActive(operation.status) ? 100 : 0;
  const gone = toRemove.filter((pod) => pod.status === "EVICTED" || pod.status === "DELETED").length;
  return Math.round((gone / toRemove.length) * 1000) / 10;
}

/**
 * Where a pod is on its way off the node: not asked yet, being asked (or refused and asked
 * again), accepted and terminating, gone, or left on the node.
 */
export function podPhase(pod: DrainPodState): DrainPodPhase {
  switch (pod.status) {
    case "PENDING":
      return pod.attempts > 0 ? "EVICTING" : "NOT_STARTED";
    case "BLOCKED":
      return "EVICTING";
    case "EVICTING":
      return "TERMINATING";
    case "EVICTED":
    case "DELETED":
      return "GONE";
    case "SKIPPED":
    case "FAILED":
      return "NOT_REMOVED";
  }
}

/** The operation's pods counted by phase. */
export function phaseCounts(operation: DrainOperation): Omit<DrainPhaseCounts, "__typename"> {
  const counts = { notStarted: 0, evicting: 0, terminating: 0, gone: 0, notRemoved: 0 };
  const field = { NOT_STARTED: "notStarted", EVICTING: "evicting", TERMINATING: "terminating", GONE: "gone", NOT_REMOVED: "notRemoved" } as const;
  for (const pod of operation.pods) counts[field[podPhase(pod)]]++;
  return counts;
}
