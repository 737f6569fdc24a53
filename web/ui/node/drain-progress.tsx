// A drain as it happens: its state and progress, and each pod's (evicting, blocked by which
// PodDisruptionBudget, evicted), from the drainProgress subscription.
import { useEffect, useState } from "preact/hooks";
import { gql, subscribe, type ApiError } from "../api";
import { when } from "../format";
import { CANCEL_DRAIN, DRAIN_PROGRESS, type DrainData, type DrainPhase, type PhaseCounts } from "./node-queries";
import { BLOCKERS, OPTION_LABELS } from "./drain-options";
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

/**
 * A dry run as a plan, in this page's words: what would be evicted, what would stay, what stops
 * the drain and which box of the form would unblock it. Never a failure: nothing was tried.
 */
function DrainPlan({ plan }: { plan: DrainData }) {
  const id = (p: { namespace: string; name: string }) => `${p.namespace}/${p.name}`;
  const removed = plan.pods.filter((p) => p.action);
  const blockers = plan.pods.filter((p) => !p.action && (p.unblockedBy || p.status === "FAILED"));
  const staying = plan.pods.filter((p) => !p.action && !blockers.includes(p));
  const boxes = Object.entries(BLOCKERS).flatMap(([option, b]) => (blockers.some((p) => p.unblockedBy === option) ? [`“${OPTION_LABELS[b.option]}”`] : []));
  const verb = plan.options.disableEviction ? "delete" : "evict";
  return (
    <section class="drain plan" aria-labelledby="plan-title" data-drain={plan.id} data-plan={blockers.length ? "blocked" : "drains"}>
      <h3 id="plan-title">
        Drain plan for {plan.node} <span class={`badge ${blockers.length ? "plan-blocked" : "plan-drains"}`}>{blockers.length ? "would stop before removing any pod" : "would drain the node"}</span>
      </h3>
      <p>
        A dry run: nothing was changed. Planned by {plan.requestedBy} at {when(plan.startedAt)}
        {plan.reason ? ` (${plan.reason})` : ""}.
      </p>
      {blockers.length > 0 && (
        <div class="plan-blockers" data-blockers={blockers.length}>
          <h4>
            What stops it: {blockers.length} {blockers.length === 1 ? "pod" : "pods"}
          </h4>
          <ul>
            {blockers.map((p) => {
              const blocker = p.unblockedBy ? BLOCKERS[p.unblockedBy] : undefined;
              return (
                <li key={id(p)} data-pod={id(p)} data-unblocked-by={p.unblockedBy ?? ""}>
                  <code>{id(p)}</code>: {blocker ? `${blocker.what}. Tick “${OPTION_LABELS[blocker.option]}” to ${blocker.then}.` : (p.reason ?? "refused")}
                </li>
              );
            })}
          </ul>
          {boxes.length > 0 && <p class="plan-advice">Tick {boxes.join(" and ")}, then plan again or drain.</p>}
        </div>
      )}
      <h4>
        Would {verb} {removed.length} {removed.length === 1 ? "pod" : "pods"}
        {blockers.length ? " once nothing stops it" : ""}
      </h4>
      <ul class="plan-pods" data-would={verb}>
        {removed.map((p) => (
          <li key={id(p)} data-pod={id(p)}>
            <code>{id(p)}</code>
          </li>
        ))}
      </ul>
      <h4>
        Would leave {staying.length} {staying.length === 1 ? "pod" : "pods"} on the node
      </h4>
      <ul class="plan-pods" data-would="leave">
        {staying.map((p) => (
          <li key={id(p)} data-pod={id(p)}>
            <code>{id(p)}</code>
            {p.reason ? `: ${p.reason}` : ""}
          </li>
        ))}
      </ul>
    </section>
  );
}

export function DrainProgress({ initial, mayCancel }: { initial: DrainData; mayCancel: boolean }) {
  if (initial.dryRun) return <DrainPlan plan={initial} />;
  return <RunningDrain initial={initial} mayCancel={mayCancel} />;
}

function RunningDrain({ initial, mayCancel }: { initial: DrainData; mayCancel: boolean }) {
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
        Drain <span class={`badge drain-${drain.status.toLowerCase()}`}>{drain.status}</span>
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
