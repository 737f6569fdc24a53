/** Every field of a DrainOperation, for tests that compare whole operations. */
export const OP = `fragment Op on DrainOperation {
  id cluster node status dryRun requestedBy reason message startedAt finishedAt remainingPods progressPercent warnings
  options { ignoreDaemonSets deleteEmptyDirData force gracePeriodSeconds timeoutSeconds podSelector disableEviction }
  pods { namespace name status reason attempts action blockedBy }
}`;
