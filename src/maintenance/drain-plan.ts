/**
 * Which pods a drain removes, and how: the pod filters of kubectl's drain package
 * (k8s.io/kubectl/pkg/drain/filters.go), as pure functions. Each filter looks at one pod
 * and either lets it through or stops it with a reason; the first filter that stops a pod
 * decides. A filter that stops a pod with an error refuses the whole drain, as kubectl does.
 */

import type { CachedPod } from "../cluster/model.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import type { DrainOptionName, DrainOptions as DrainOptionsInput, DrainOptionsApplied } from "../graphql/generated/resolvers-types.js";
import { parseLabelSelector, SelectorParseError } from "../k8s/label-selector.js";

/**
 * The options a drain runs with, every default filled in: the schema's `DrainOptionsApplied`
 * (a negative gracePeriodSeconds means each pod's own terminationGracePeriodSeconds).
 */
export type DrainOptions = Omit<DrainOptionsApplied, "__typename">;

/** kubectl waits forever by default; a service must not, so a drain ends after 10 minutes unless told otherwise. */
export const DEFAULT_DRAIN_TIMEOUT_SECONDS = 600;
export const MAX_DRAIN_TIMEOUT_SECONDS = 86_400;

/**
 * The schema's `DrainOptions` input with kubectl's defaults, except the timeout: bounded, `defaultTimeoutSeconds`
 * (the service's setting) when not given. Bad values are BAD_USER_INPUT.
 */
export function drainOptions(input: DrainOptionsInput | null | undefined, defaultTimeoutSeconds = DEFAULT_DRAIN_TIMEOUT_SECONDS): DrainOptions {
  const given = input ?? {};
  const timeoutSeconds = given.timeoutSeconds ?? defaultTimeoutSeconds;
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > MAX_DRAIN_TIMEOUT_SECONDS) {
    throw new AppError(ErrorCode.BAD_USER_INPUT, `options.timeoutSeconds must be between 1 and ${MAX_DRAIN_TIMEOUT_SECONDS}, got ${timeoutSeconds}`);
  }
  const gracePeriodSeconds = given.gracePeriodSeconds ?? -1;
  if (gracePeriodSeconds > MAX_DRAIN_TIMEOUT_SECONDS) {
    throw new AppError(ErrorCode.BAD_USER_INPUT, `options.gracePeriodSeconds must be at most ${MAX_DRAIN_TIMEOUT_SECONDS}, got ${gracePeriodSeconds}`);
  }
  const podSelector = given.podSelector?.trim() || null;
  if (podSelector) {
    try {
      parseLabelSelector(podSelector);
    } catch (error) {
      if (error instanceof SelectorParseError) throw new AppError(ErrorCode.BAD_USER_INPUT, `options.podSelector: ${error.message}`);
      throw error;
    }
  }
  return {
    ignoreDaemonSets: given.ignoreDaemonSets ?? false,
    deleteEmptyDirData: given.deleteEmptyDirData ?? false,
    force: given.force ?? false,
    gracePeriodSeconds: gracePeriodSeconds < 0 ? -1 : gracePeriodSeconds,
    timeoutSeconds,
    podSelector,
    disableEviction: given.disableEviction ?? false,
  };
}

/** What a filter says about one pod. `remove` false with an `error` refuses the drain. */
export interface PodVerdict {
  remove: boolean;
  /** Why it is skipped, or what kubectl would warn about removing it. */
  warning?: string;
  error?: string;
  /** With `error`: the option that would let the drain go on past this pod. */
  unblockedBy?: DrainOptionName;
}

/** What the planner needs to know about the cluster beyond the pod itself. */
export interface PlanContext {
  options: DrainOptions;
  /** Whether the DaemonSet named by a pod's controller reference exists. */
  daemonSetExists(namespace: string, name: string): boolean;
}

// kubectl's own words, so people who know `kubectl drain` recognise them.
export const DAEMONSET_FATAL = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)";
export const DAEMONSET_WARNING = "ignoring DaemonSet-managed Pods";
export const LOCAL_STORAGE_FATAL = "Pods with local storage (use --delete-emptydir-data to override)";
export const LOCAL_STORAGE_WARNING = "deleting Pods with local storage";
// kubectl 1.32 prints this one as "cannot delete cannot delete Pods that …"; we say it once.
export const UNMANAGED_FATAL = "Pods that declare no controller (use --force to override)";
export const UNMANAGED_WARNING = "deleting Pods that declare no controller";
export const MIRROR_SKIP = "mirror pod of a static pod: the kubelet owns it";

type PodFilter = (pod: CachedPod, context: PlanContext) => PodVerdict;

const OKAY: PodVerdict = { remove: true };

const finished = (pod: CachedPod) => pod.phase === "Succeeded" || pod.phase === "Failed";

const daemonSetFilter: PodFilter = (pod, { options, daemonSetExists }) => {
  if (pod.ownerKind !== "DaemonSet" || finished(pod)) return OKAY;
  if (!daemonSetExists(pod.namespace, pod.ownerName ?? "")) {
    // An orphan the DaemonSet controller will never replace: removable only with force.
    const missing = `daemonsets.apps "${pod.ownerName}" not found`;
    return options.force ? { remove: true, warning: missing } : { remove: false, error: missing, unblockedBy: "FORCE" };
  }
  return options.ignoreDaemonSets ? { remove: false, warning: DAEMONSET_WARNING } : { remove: false, error: DAEMONSET_FATAL, unblockedBy: "IGNORE_DAEMON_SETS" };
};

const mirrorPodFilter: PodFilter = (pod) => (pod.mirror ? { remove: false, warning: MIRROR_SKIP } : OKAY);

const localStorageFilter: PodFilter = (pod, { options }) => {
  if (!pod.emptyDir || finished(pod)) return OKAY;
  return options.deleteEmptyDirData ? { remove: true, warning: LOCAL_STORAGE_WARNING } : { remove: false, error: LOCAL_STORAGE_FATAL, unblockedBy: "DELETE_EMPTY_DIR_DATA" };
};

const unreplicatedFilter: PodFilter = (pod, { options }) => {
  if (finished(pod) || pod.ownerKind !== undefined) return OKAY;
  return options.force ? { remove: true, warning: UNMANAGED_WARNING } : { remove: false, error: UNMANAGED_FATAL, unblockedBy: "FORCE" };
};

/** kubectl's order: daemonSet, mirror, localStorage, unreplicated. */
const FILTERS: readonly PodFilter[] = [daemonSetFilter, mirrorPodFilter, localStorageFilter, unreplicatedFilter];

/**
 * One filter chain run: the first filter that stops the pod decides. A warning of a filter
 * that let the pod through is kept (kubectl drops it by a known TODO, so its "deleting Pods
 * with local storage" warning never shows; here it does).
 */
export function verdictFor(pod: CachedPod, context: PlanContext): PodVerdict {
  let warning: string | undefined;
  for (const filter of FILTERS) {
    const verdict = filter(pod, context);
    if (!verdict.remove) return verdict;
    warning ??= verdict.warning;
  }
  return warning ? { remove: true, warning } : OKAY;
}

export interface PlannedPod {
  namespace: string;
  name: string;
  uid: string;
  action: "EVICT" | "DELETE" | null;
  /** Why skipped, or why the drain cannot remove it. */
  reason: string | null;
  refused: boolean;
  /** For a refusing pod, the option that would let the drain go on past it. */
  unblockedBy: DrainOptionName | null;
}

export interface DrainPlan {
  pods: PlannedPod[];
  /** kubectl's "cannot delete …: ns/a, ns/b" lines; any means the drain is refused. */
  errors: string[];
  /** kubectl's "ignoring DaemonSet-managed Pods: …" lines. */
  warnings: string[];
}

/**
 * The plan for the pods on a node (already narrowed to the pod selector): each pod removed,
 * skipped, or refusing the drain. Pods already being deleted are still waited for, as kubectl does.
 */
export function planDrain(pods: readonly CachedPod[], context: PlanContext): DrainPlan {
  const sorted = [...pods].sort((a, b) => (a.namespace === b.namespace ? cmp(a.name, b.name) : cmp(a.namespace, b.namespace)));
  const errors = new Map<string, string[]>();
  const warnings = new Map<string, string[]>();
  const planned = sorted.map((pod): PlannedPod => {
    const verdict = verdictFor(pod, context);
    const id = `${pod.namespace}/${pod.name}`;
    if (verdict.error) push(errors, verdict.error, id);
    else if (verdict.warning && verdict.warning !== MIRROR_SKIP) push(warnings, verdict.warning, id);
    return {
      namespace: pod.namespace,
      name: pod.name,
      uid: pod.uid,
      action: verdict.remove ? (context.options.disableEviction ? "DELETE" : "EVICT") : null,
      reason: verdict.error ?? (verdict.remove ? null : (verdict.warning ?? null)),
      refused: verdict.error !== undefined,
      unblockedBy: verdict.unblockedBy ?? null,
    };
  });
  // kubectl reports refusals in filter order: DaemonSets, local storage, then unmanaged pods.
  const order = [DAEMONSET_FATAL, LOCAL_STORAGE_FATAL, UNMANAGED_FATAL];
  const rank = (message: string) => (order.includes(message) ? order.indexOf(message) : -1);
  return {
    pods: planned,
    errors: [...errors].sort(([a], [b]) => rank(a) - rank(b)).map(([message, ids]) => `cannot delete ${message}: ${ids.join(", ")}`),
    warnings: [...warnings].map(([message, ids]) => `${message}: ${ids.join(", ")}`),
  };
}

function push(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
