// Cordon, uncordon and drain, for an operator (the page shows none of it to a viewer; the
// service refuses a viewer's mutation anyway). Every action takes a reason, recorded with it.
import { useState } from "preact/hooks";
import { gql, type ApiError } from "../api";
import { CORDON, DRAIN, UNCORDON, type DrainData, type NodeData } from "./node-queries";
import { ErrorNote } from "../error-note";

interface Props {
  node: NodeData;
  /** A drain was started (or planned): the page shows its progress. */
  drained: (drain: DrainData) => void;
  changed: () => void;
}

const optionalInt = (text: string) => (text.trim() === "" ? undefined : Number.parseInt(text, 10));

export function MaintenancePanel({ node, drained, changed }: Props) {
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();
  const [options, setOptions] = useState({ ignoreDaemonSets: true, deleteEmptyDirData: false, force: false, disableEviction: false, dryRun: false });
  const [grace, setGrace] = useState("");
  const [timeout, setTimeoutText] = useState("");
  const [podSelector, setPodSelector] = useState("");
  const vars = { cluster: node.cluster, name: node.name, reason: reason.trim() || undefined };

  async function run(action: () => Promise<void>) {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (e) {
      setError(e as ApiError);
    } finally {
      setBusy(false);
    }
  }

  const cordon = () => run(async () => (await gql(node.unschedulable ? UNCORDON : CORDON, vars), changed()));
  const drain = (event: Event) => {
    event.preventDefault();
    return run(async () => {
      const drainOptions = { ...options, gracePeriodSeconds: optionalInt(grace), timeoutSeconds: optionalInt(timeout), podSelector: podSelector.trim() || undefined };
      drained((await gql<{ drainNode: DrainData }>(DRAIN, { ...vars, options: drainOptions })).drainNode);
    });
  };
  const toggle = (key: keyof typeof options) => (event: Event) => setOptions({ ...options, [key]: (event.target as HTMLInputElement).checked });

  return (
    <section class="maintenance" aria-labelledby="maintenance-title">
      <h2 id="maintenance-title">Maintenance</h2>
      <label class="reason">
        Reason <input name="reason" value={reason} placeholder="e.g. kernel upgrade" onInput={(event) => setReason((event.target as HTMLInputElement).value)} />
      </label>
      <div class="actions">
        <button type="button" disabled={busy} onClick={cordon}>
          {node.unschedulable ? "Uncordon" : "Cordon"}
        </button>
      </div>
      <form class="drain-form" onSubmit={drain}>
        <fieldset>
          <legend>Drain options</legend>
          <label>
            <input type="checkbox" name="ignoreDaemonSets" checked={options.ignoreDaemonSets} onChange={toggle("ignoreDaemonSets")} /> ignore DaemonSet pods
          </label>
          <label>
            <input type="checkbox" name="deleteEmptyDirData" checked={options.deleteEmptyDirData} onChange={toggle("deleteEmptyDirData")} /> delete emptyDir data
          </label>
          <label>
            <input type="checkbox" name="force" checked={options.force} onChange={toggle("force")} /> force (pods without a controller)
          </label>
          <label>
            <input type="checkbox" name="disableEviction" checked={options.disableEviction} onChange={toggle("disableEviction")} /> delete instead of evicting (bypasses PodDisruptionBudgets)
          </label>
          <label>
            <input type="checkbox" name="dryRun" checked={options.dryRun} onChange={toggle("dryRun")} /> dry run (plan only)
          </label>
          <label>
            Grace period (s) <input name="gracePeriodSeconds" inputMode="numeric" pattern="-?[0-9]*" size={6} value={grace} placeholder="pod's own" onInput={(event) => setGrace((event.target as HTMLInputElement).value)} />
          </label>
          <label>
            Timeout (s) <input name="timeoutSeconds" inputMode="numeric" pattern="[0-9]*" size={6} value={timeout} placeholder="service's" onInput={(event) => setTimeoutText((event.target as HTMLInputElement).value)} />
          </label>
          <label>
            Pod selector <input name="podSelector" value={podSelector} placeholder="all pods" onInput={(event) => setPodSelector((event.target as HTMLInputElement).value)} />
          </label>
        </fieldset>
        <button type="submit" disabled={busy || (node.activeDrain !== null && !options.dryRun)}>
          {options.dryRun ? "Plan drain" : "Drain"}
        </button>
      </form>
      <ErrorNote error={error} />
    </section>
  );
}
