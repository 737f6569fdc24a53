// Cordon, uncordon and drain, for an operator (the page shows none of it to a viewer; the
// service refuses a viewer's mutation anyway). Every action takes a reason, recorded with it.
// A drain, and a cordon of the last Ready node of its group, are confirmed first.
import { useState } from "preact/hooks";
import { gql, type ApiError } from "../api";
import { ConfirmDialog } from "../confirm-dialog";
import { POOL_LABELS } from "../fleet/fleet-model";
import { OPTION_LABELS } from "./drain-options";
import { CORDON, DRAIN, UNCORDON, type DrainData, type NodeData } from "./node-queries";
import { ErrorNote } from "../error-note";

const READY_IN_GROUP = `query ReadyInGroup($cluster: String!, $filter: NodeFilter) { nodes(cluster: $cluster, filter: $filter, first: 1) { totalCount } }`;

/** The node's group as the fleet groups it first below its cluster: its pool when it has one, else the cluster. */
function groupOf(node: NodeData): { name: string; selector?: string } {
  for (const key of POOL_LABELS) {
    const value = node.labels.find((l) => l.key === key)?.value;
    if (value) return { name: `pool ${value} of cluster ${node.cluster}`, selector: `${key}=${value}` };
  }
  return { name: `cluster ${node.cluster}` };
}

/** The group's name when this node is the last Ready, schedulable node in it (so cordoning it leaves none). */
async function lastReadyOfGroup(node: NodeData): Promise<string | undefined> {
  if (node.ready !== "TRUE" || node.unschedulable) return undefined;
  const group = groupOf(node);
  const filter = { ready: true, schedulable: true, ...(group.selector ? { labelSelector: group.selector } : {}) };
  const data = await gql<{ nodes: { totalCount: number } }>(READY_IN_GROUP, { cluster: node.cluster, filter });
  return data.nodes.totalCount <= 1 ? group.name : undefined;
}

/** The node's pods as a drain sees them: those it would remove, and those it leaves (DaemonSet's, mirror pods). */
function podsOf(node: NodeData, options: { ignoreDaemonSets: boolean }) {
  const stays = (p: NodeData["pods"][number]) => p.mirror || (p.daemonSet && options.ignoreDaemonSets);
  return { leaving: node.pods.filter((p) => !stays(p)), staying: node.pods.filter(stays) };
}

function PodList({ pods }: { pods: NodeData["pods"] }) {
  return (
    <ul class="dialog-pods">
      {pods.map((p) => (
        <li key={`${p.namespace}/${p.name}`} data-pod={`${p.namespace}/${p.name}`}>
          <code>
            {p.namespace}/{p.name}
          </code>
        </li>
      ))}
    </ul>
  );
}

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

  // What is being asked before it is done: a drain, or a cordon that leaves its group without a Ready node.
  const [asking, setAsking] = useState<{ kind: "drain" } | { kind: "cordon"; group: string } | undefined>();
  const doCordon = () => run(async () => (await gql(node.unschedulable ? UNCORDON : CORDON, vars), changed()));
  const cordon = () =>
    run(async () => {
      const group = await lastReadyOfGroup(node);
      if (group) return setAsking({ kind: "cordon", group });
      await gql(CORDON, vars);
      changed();
    });
  const doDrain = () =>
    run(async () => {
      const drainOptions = { ...options, gracePeriodSeconds: optionalInt(grace), timeoutSeconds: optionalInt(timeout), podSelector: podSelector.trim() || undefined };
      drained((await gql<{ drainNode: DrainData }>(DRAIN, { ...vars, options: drainOptions })).drainNode);
    });
  const drain = (event: Event) => {
    event.preventDefault();
    // A plan changes nothing: no question asked.
    if (options.dryRun) return doDrain();
    setAsking({ kind: "drain" });
  };
  const confirm = (action: () => Promise<void>) => () => {
    setAsking(undefined);
    void action();
  };
  const reasonText = reason.trim() ? `“${reason.trim()}”` : "none given";
  const { leaving, staying } = podsOf(node, options);
  const toggle = (key: keyof typeof options) => (event: Event) => setOptions({ ...options, [key]: (event.target as HTMLInputElement).checked });

  return (
    <section class="maintenance" aria-labelledby="maintenance-title">
      <h2 id="maintenance-title">Maintenance</h2>
      <label class="reason">
        Reason <input name="reason" value={reason} placeholder="e.g. kernel upgrade" onInput={(event) => setReason((event.target as HTMLInputElement).value)} />
      </label>
      <div class="actions">
        <button type="button" disabled={busy} onClick={node.unschedulable ? doCordon : cordon}>
          {node.unschedulable ? "Uncordon" : "Cordon"}
        </button>
      </div>
      <form class="drain-form" onSubmit={drain}>
        <fieldset>
          <legend>Drain options</legend>
          <label>
            <input type="checkbox" name="ignoreDaemonSets" checked={options.ignoreDaemonSets} onChange={toggle("ignoreDaemonSets")} /> {OPTION_LABELS.ignoreDaemonSets}
          </label>
          <label>
            <input type="checkbox" name="deleteEmptyDirData" checked={options.deleteEmptyDirData} onChange={toggle("deleteEmptyDirData")} /> {OPTION_LABELS.deleteEmptyDirData}
          </label>
          <label>
            <input type="checkbox" name="force" checked={options.force} onChange={toggle("force")} /> {OPTION_LABELS.force}
          </label>
          <label>
            <input type="checkbox" name="disableEviction" checked={options.disableEviction} onChange={toggle("disableEviction")} /> {OPTION_LABELS.disableEviction}
          </label>
          <label>
            <input type="checkbox" name="dryRun" checked={options.dryRun} onChange={toggle("dryRun")} /> {OPTION_LABELS.dryRun}
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
      {asking?.kind === "drain" && (
        <ConfirmDialog kind="drain" title={`Drain ${node.name}?`} confirmLabel={`Drain ${node.name}`} onConfirm={confirm(doDrain)} onCancel={() => setAsking(undefined)}>
          <p>
            Node <strong>{node.name}</strong> of cluster {node.cluster} will be cordoned, then its pods {options.disableEviction ? "deleted" : "evicted"}. Reason: {reasonText}.
          </p>
          <p>
            {podSelector.trim()
              ? `The pods matching ${podSelector.trim()} go, chosen by the service among these ${leaving.length}:`
              : `${leaving.length} ${leaving.length === 1 ? "pod" : "pods"} to go:`}
          </p>
          <PodList pods={leaving} />
          {staying.length > 0 && (
            <p class="muted">
              Left on the node: {staying.length} DaemonSet or mirror {staying.length === 1 ? "pod" : "pods"}.
            </p>
          )}
        </ConfirmDialog>
      )}
      {asking?.kind === "cordon" && (
        <ConfirmDialog kind="cordon" title={`Cordon ${node.name}?`} confirmLabel={`Cordon ${node.name}`} onConfirm={confirm(doCordon)} onCancel={() => setAsking(undefined)}>
          <p>
            <strong>{node.name}</strong> is the last Ready node of {asking.group} that takes new pods: once it is cordoned, nothing new can be scheduled there. Reason: {reasonText}.
          </p>
          <p>
            Its {node.pods.length} {node.pods.length === 1 ? "pod stays" : "pods stay"} where {node.pods.length === 1 ? "it is" : "they are"}:
          </p>
          <PodList pods={node.pods} />
        </ConfirmDialog>
      )}
    </section>
  );
}
