// A drain as it happens: its state and progress, and each pod's (evicting, blocked by which
// PodDisruptionBudget, evicted), from the drainProgress subscription.
import { useEffect, useState } from "preact/hooks";
import { gql, subscribe, type ApiError } from "../api";
import { when } from "../format";
import { CANCEL_DRAIN, DRAIN_PROGRESS, type DrainData, type DrainPhase, type PhaseCounts } from "./node-queries";
import { ErrorNote } from "../error-note";

const isFinal = (drain: DrainData) => drain.status !== "RUNNING" && drain.status !== "PENDING";

/** The phases a pod to remove goes through, in order, with what the page calls them. */
const PHASES: [keyof PhaseCounts, DrainPhase, string][] = [
  ["gone", "GONE", "gone"],
  ["terminating", "TERMINATING", "terminating (eviction accepted, waiting for the pod to go)"],
  ["evicting", "EVICTING", "evicting"],
  ["notStarted", "NOT_STARTED", "not started"],
];
const PHASE_NAMES: Record<DrainPhase, string> = { GONE: "gone", TERMINATING: "terminating", EVICTING: "evicting", NOT_STARTED: "not started", NOT_REMOVED: "left on the node" };

/** The pods to remove as one bar, a segment per phase, and the count of each in words. */
function PhaseBar({ counts, percent }: { counts: PhaseCounts; percent: number }) {
  const toRemove = counts.gone + counts.terminating + counts.evicting + counts.notStarted;
  const words = PHASES.map(([key, , name]) => `${counts[key]} ${name}`).join(", ");
  return (
    <div
      class="phases"
      data-phases
      data-gone={counts.gone}
      data-terminating={counts.terminating}
      data-evicting={counts.evicting}
      data-notstarted={counts.notStarted}
      data-notremoved={counts.notRemoved}
    >
      <div class="phase-track" role="img" aria-label={`${percent.toFixed(0)}% gone: ${words}`}>
        {toRemove > 0 &&
          PHASES.map(([key, phase]) => counts[key] > 0 && <span key={phase} class={`phase phase-${phase.toLowerCase()}`} style={{ width: `${(counts[key] / toRemove) * 100}%` }} />)}
      </div>
      <p class="phase-words">
        {percent.toFixed(0)}% gone of {toRemove} {toRemove === 1 ? "pod" : "pods"} to remove: {words}
        {counts.notRemoved ? `; ${counts.notRemoved} left on the node` : ""}
      </p>
    </div>
  );
}

export function DrainProgress({ initial, mayCancel }: { initial: DrainData; mayCancel: boolean }) {
  const [drain, setState] = useState(initial);
  // A final state (say, from cancelDrain's answer) is never replaced by a running one the
  // subscription sent before it and delivered after.
  const setDrain = (next: DrainData) => setState((current) => (isFinal(current) && !isFinal(next) ? current : next));
  const [error, setError] = useState<ApiError | undefined>();
  useEffect(() => {
    if (isFinal(initial)) return;
    return subscribe<{ drainProgress: DrainData }>(DRAIN_PROGRESS, { id: initial.id }, (data) => setDrain(data.drainProgress), setError);
  }, [initial.id]);
  const running = !isFinal(drain);
  const cancel = async () => {
    try {
      setDrain((await gql<{ cancelDrain: DrainData }>(CANCEL_DRAIN, { id: drain.id })).cancelDrain);
    } catch (e) {
      setError(e as ApiError);
    }
  };
  return (
    <section class="drain" aria-labelledby="drain-title" data-drain={drain.id} data-status={drain.status}>
      <h3 id="drain-title">
        {drain.dryRun ? "Drain plan (dry run)" : "Drain"} <span class={`badge drain-${drain.status.toLowerCase()}`}>{drain.status}</span>
      </h3>
      <p>
        Requested by {drain.requestedBy} at {when(drain.startedAt)}
        {drain.reason ? ` (${drain.reason})` : ""}
        {drain.finishedAt ? `, finished ${when(drain.finishedAt)}` : ""}.
      </p>
      <PhaseBar counts={drain.podsByPhase} percent={drain.progressPercent} />
      {drain.message && <p class={drain.status === "FAILED" ? "error" : "muted"}>{drain.message}</p>}
      {drain.warnings.map((warning) => (
        <p class="warn">{warning}</p>
      ))}
      <ErrorNote error={error} />
      {mayCancel && running && !drain.dryRun && (
        <button type="button" onClick={cancel}>
          Cancel drain
        </button>
      )}
      <table class="pods">
        <caption class="visually-hidden">Pods of the drain</caption>
        <thead>
          <tr>
            <th scope="col">Pod</th>
            <th scope="col">Phase</th>
            <th scope="col">Status</th>
            <th scope="col">Action</th>
            <th scope="col">Attempts</th>
            <th scope="col">Blocked by / reason</th>
          </tr>
        </thead>
        <tbody>
          {drain.pods.map((pod) => (
            <tr key={`${pod.namespace}/${pod.name}`} data-pod={`${pod.namespace}/${pod.name}`} data-status={pod.status} data-phase={pod.phase}>
              <td>
                {pod.namespace}/{pod.name}
              </td>
              <td>{PHASE_NAMES[pod.phase]}</td>
              <td>
                <span class={`badge pod-${pod.status.toLowerCase()}`}>{pod.status}</span>
              </td>
              <td>{pod.action ?? "—"}</td>
              <td>{pod.attempts}</td>
              <td>{pod.blockedBy ? `PodDisruptionBudget ${pod.blockedBy}` : (pod.reason ?? "")}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
