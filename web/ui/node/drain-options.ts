// The drain options as this page names them: one label per checkbox, used by the form and by
// a plan that says which box would unblock a drain (the service names the option, not a flag).

export type DrainOptionKey = "ignoreDaemonSets" | "deleteEmptyDirData" | "force" | "disableEviction" | "dryRun";

export const OPTION_LABELS: Record<DrainOptionKey, string> = {
  ignoreDaemonSets: "ignore DaemonSet pods",
  deleteEmptyDirData: "delete emptyDir data",
  force: "force (pods without a controller)",
  disableEviction: "delete instead of evicting (bypasses PodDisruptionBudgets)",
  dryRun: "dry run (plan only)",
};

/** A pod that stops a drain, by the option that would unblock it: what is in the way, the box to tick, and what ticking it does. */
export const BLOCKERS: Record<string, { what: string; option: DrainOptionKey; then: string }> = {
  IGNORE_DAEMON_SETS: { what: "managed by a DaemonSet, which would put it back at once", option: "ignoreDaemonSets", then: "leave it on the node" },
  DELETE_EMPTY_DIR_DATA: { what: "has emptyDir data, lost when it is evicted", option: "deleteEmptyDirData", then: "evict it anyway" },
  FORCE: { what: "nothing would recreate it (no controller, or its DaemonSet is gone)", option: "force", then: "remove it anyway" },
};
