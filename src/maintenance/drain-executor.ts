/**
 * Carries out one drain, as kubectl's drain.Helper does: cordon, plan, then remove every
 * planned pod in parallel (evict, or delete with disableEviction), retrying an eviction a
 * PodDisruptionBudget refuses (429) every few seconds, and waiting until each pod is really
 * gone, all under one deadline. Every change goes to `report`; the runner persists it.
 */

import { kubeErrorDetail } from "../cluster/kube-client.js";
import type { Logger } from "../log/logger.js";
import type { ClusterWriter } from "../cluster/cluster-writer.js";
import { maintenanceAnnotations } from "../history/history-model.js";
import { isSettled, type DrainOperation, type DrainPodState } from "./drain-operation.js";
import { planDrain, type DrainOptions } from "./drain-plan.js";
import { drainEvent, type DrainEventRecord } from "./drain-store.js";

export interface DrainTiming {
  /** Between evictions a PodDisruptionBudget refused: kubectl's 5 s. */
  evictionRetryMs: number;
  /** Between checks that an evicted pod is gone: kubectl's 1 s. */
  deletionPollMs: number;
  /** Pods removed at once (kubectl: all of them; bounded here to spare the apiserver). */
  parallelism: number;
}

export const DEFAULT_DRAIN_TIMING: DrainTiming = { evictionRetryMs: 5_000, deletionPollMs: 1_000, parallelism: 64 };

export interface DrainRun {
  operation: DrainOperation;
  writer: ClusterWriter;
  timing: DrainTiming;
  signal: AbortSignal;
  logger: Logger;
  /** The operation changed (a new object each time). */
  report(operation: DrainOperation): void;
  /** Maintenance events to record. */
  record(events: DrainEventRecord[]): void;
  /** Resolves when the plan is known (or the drain ended before it was). */
  planned?: () => void;
}

/** Runs the drain to a final state (or until `signal` aborts it: cancelled, or this replica stops). */
export async function executeDrain(run: DrainRun): Promise<DrainOperation> {
  let operation = run.operation;
  const deadline = operation.startedAt.getTime() + operation.options.timeoutSeconds * 1000;
  const update = (patch: Partial<DrainOperation>) => {
    operation = { ...operation, ...patch };
    run.report(operation);
  };
  const event = (kind: DrainEventRecord["kind"], fields: Parameters<typeof drainEvent>[2] = {}) => drainEvent(operation, kind, fields);
  const finish = (status: "SUCCEEDED" | "FAILED", message: string) => {
    // The event first: whoever sees the final state finds its event already recorded.
    run.record([event(status === "SUCCEEDED" ? "DRAIN_SUCCEEDED" : "DRAIN_FAILED", { detail: message })]);
    update({ status, message, finishedAt: new Date() });
    run.planned?.();
    return operation;
  };

  try {
    if (operation.status === "PENDING") {
      run.record([event("DRAIN_STARTED", { detail: describeOptions(operation) })]);
      update({ status: "RUNNING" });
    }
    // Cordon first, as kubectl does: nothing new lands here while the pods leave.
    // Only when it is not cordoned already (kubectl's cordon helper patches only a change).
    const node = await run.writer.node(operation.node);
    if (!node) return finish("FAILED", `node "${operation.node}" not found`);
    if (!node.unschedulable) {
      const cordoned = await run.writer.setUnschedulable(operation.node, true, maintenanceAnnotations({ actor: operation.requestedBy, reason: operation.reason, operationId: operation.id }, true));
      if (!cordoned) return finish("FAILED", `node "${operation.node}" not found`);
    }

    // Pods planned by an earlier runner: it may have died after an eviction was accepted and before it said so.
    const resumed = operation.pods.length > 0;
    if (operation.pods.length === 0) {
      const plan = await readPlan(run.writer, operation.node, operation.options);
      const states = plan.pods;
      update({ pods: states, warnings: plan.warnings });
      if (plan.errors.length) {
        // kubectl refuses the whole drain and removes nothing; the node stays cordoned.
        update({ pods: states.map((pod) => (pod.status === "PENDING" ? { ...pod, status: "SKIPPED", reason: "not removed: the drain was refused" } : pod)) });
        return finish("FAILED", `cannot drain node "${operation.node}": ${plan.errors.join("; ")}; the node stays cordoned`);
      }
    }
    run.planned?.();

    const podUpdate = (index: number, patch: Partial<DrainPodState>) => {
      const pods = operation.pods.slice();
      pods[index] = { ...pods[index]!, ...patch };
      update({ pods });
    };
    const todo = operation.pods.map((pod, index) => ({ pod, index })).filter(({ pod }) => !isSettled(pod));
    await inParallel(todo, run.timing.parallelism, ({ index }) =>
      removePod(
        () => operation.pods[index]!,
        (patch) => podUpdate(index, patch),
        deadline,
        run,
        resumed,
      ),
    );
    if (run.signal.aborted) return operation;

    const failed = operation.pods.filter((pod) => pod.status === "FAILED");
    if (failed.length) {
      const timedOut = Date.now() >= deadline;
      const first = failed
        .slice(0, 5)
        .map((pod) => `${pod.namespace}/${pod.name} (${pod.reason})`)
        .join(", ");
      return finish(
        "FAILED",
        `${timedOut ? `global timeout reached: ${operation.options.timeoutSeconds}s; ` : ""}${failed.length} pod(s) not removed: ${first}${failed.length > 5 ? ", …" : ""}; the node stays cordoned`,
      );
    }
    return finish("SUCCEEDED", `node "${operation.node}" drained`);
  } catch (error) {
    if (run.signal.aborted) return operation;
    run.logger.warn({ err: error, operation: operation.id }, "drain failed");
    return finish("FAILED", `drain failed: ${kubeErrorDetail(error)}`);
  }
}

/** Lists the node's pods from the API and plans them, as kubectl drain does before it removes anything. */
export async function readPlan(writer: ClusterWriter, node: string, options: DrainOptions): Promise<{ pods: DrainPodState[]; warnings: string[]; errors: string[] }> {
  const pods = await writer.podsOn(node, options.podSelector);
  const owners = new Map<string, boolean>();
  for (const pod of pods) {
    if (pod.ownerKind !== "DaemonSet" || !pod.ownerName) continue;
    const key = `${pod.namespace}/${pod.ownerName}`;
    if (!owners.has(key)) owners.set(key, await writer.daemonSetExists(pod.namespace, pod.ownerName));
  }
  const plan = planDrain(pods, { options, daemonSetExists: (ns, name) => owners.get(`${ns}/${name}`) ?? false });
  return {
    pods: plan.pods.map((pod) => ({
      namespace: pod.namespace,
      name: pod.name,
      uid: pod.uid,
      status: pod.refused ? "FAILED" : pod.action ? "PENDING" : "SKIPPED",
      action: pod.refused ? null : pod.action,
      reason: pod.reason,
      blockedBy: null,
      attempts: 0,
      unblockedBy: pod.unblockedBy,
    })),
    warnings: plan.warnings,
    errors: plan.errors,
  };
}

/** One pod: evict (or delete) until accepted or the deadline, then wait until it is gone. */
async function removePod(current: () => DrainPodState, set: (patch: Partial<DrainPodState>) => void, deadline: number, run: DrainRun, resumed: boolean): Promise<void> {
  const { options } = run.operation;
  const ref = () => `${current().namespace}/${current().name}`;
  const timedOut = (what: string) => set({ status: "FAILED", reason: `global timeout reached: ${options.timeoutSeconds}s ${what}` });
  const gone = () => {
    const deleted = current().action === "DELETE";
    set({ status: deleted ? "DELETED" : "EVICTED", blockedBy: null, reason: null });
    run.record([drainEvent(run.operation, deleted ? "POD_DELETED" : "POD_EVICTED", { pod: ref(), key: `${deleted ? "deleted" : "evicted"}:${current().uid}` })]);
  };

  // A resumed drain may find its pod already asked to leave: go straight to waiting. The state
  // its runner saved can be behind the API (it died between the two), so the pod says itself.
  const terminating = resumed && current().status !== "EVICTING" && (await podStateOrRunning(run, current())) !== "running";
  if (terminating) set({ status: "EVICTING", blockedBy: null, reason: null });
  else if (current().status !== "EVICTING") {
    let lastBudget: string | null | undefined;
    for (;;) {
      if (run.signal.aborted) return;
      if (Date.now() >= deadline) return timedOut(current().status === "BLOCKED" ? `while ${current().reason}` : "before the pod could be evicted");
      const pod = current();
      set({ attempts: pod.attempts + 1 });
      try {
        if (pod.action === "DELETE") {
          if ((await run.writer.deletePod(pod, options.gracePeriodSeconds)) === "gone") return gone();
          break;
        }
        const result = await run.writer.evict(pod, options.gracePeriodSeconds);
        if (result.kind === "gone") return gone();
        if (result.kind === "accepted") break;
        if (result.kind === "namespace-terminating") {
          // No budget blocks it: the namespace controller will delete the pod; ask again until it has.
          set({ status: "BLOCKED", blockedBy: null, reason: result.message });
          await sleep(Math.min(run.timing.evictionRetryMs, Math.max(0, deadline - Date.now())), run.signal);
          continue;
        }
        set({ status: "BLOCKED", blockedBy: result.budget, reason: result.message });
        if (result.budget !== lastBudget) {
          lastBudget = result.budget;
          run.record([drainEvent(run.operation, "EVICTION_BLOCKED", { pod: ref(), detail: result.message, key: `blocked:${pod.uid}:${result.budget ?? "?"}` })]);
        }
        await sleep(Math.min(run.timing.evictionRetryMs, Math.max(0, deadline - Date.now())), run.signal);
      } catch (error) {
        set({ status: "FAILED", reason: kubeErrorDetail(error) });
        return;
      }
    }
    set({ status: "EVICTING", blockedBy: null, reason: null });
  }

  for (;;) {
    if (run.signal.aborted) return;
    try {
      if (await run.writer.podGone(current())) return gone();
    } catch (error) {
      run.logger.debug({ err: error, pod: ref() }, "could not check whether an evicted pod is gone; retrying");
    }
    if (Date.now() >= deadline) return timedOut("while waiting for the pod to terminate");
    await sleep(Math.min(run.timing.deletionPollMs, Math.max(0, deadline - Date.now())), run.signal);
  }
}

/** The pod as the API has it; "running" when the API cannot say, so the eviction is asked for as before. */
async function podStateOrRunning(run: DrainRun, pod: DrainPodState): Promise<"gone" | "terminating" | "running"> {
  try {
    return await run.writer.podState(pod);
  } catch {
    return "running";
  }
}

function describeOptions(operation: DrainOperation): string {
  const o = operation.options;
  const flags = [
    o.ignoreDaemonSets && "ignoreDaemonSets",
    o.deleteEmptyDirData && "deleteEmptyDirData",
    o.force && "force",
    o.disableEviction && "disableEviction",
    o.gracePeriodSeconds >= 0 && `gracePeriodSeconds=${o.gracePeriodSeconds}`,
    o.podSelector && `podSelector=${o.podSelector}`,
    `timeoutSeconds=${o.timeoutSeconds}`,
  ].filter(Boolean);
  return flags.join(" ");
}

/** Runs `work` over `items`, at most `limit` at a time. */
async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
