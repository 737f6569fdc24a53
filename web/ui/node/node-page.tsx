// One node: what it is (labels, taints, conditions, addresses, versions), what it holds
// (capacity, allocatable, requests and usage as bars; its pods), what happened to it (the
// timeline), and for an operator, cordon, uncordon and drain with the drain's live progress.
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, gql, onReconnect, subscribe } from "../api";
import { mayMaintain, type Caller } from "../auth";
import { Bar } from "../bar";
import { bytes, cores, duration, percent, when } from "../format";
import { DrainProgress } from "./drain-progress";
import { MaintenancePanel } from "./maintenance-panel";
import { NODE, NODE_CHANGED, NODE_CLUSTER, NODE_CLUSTER_STATUS, NODE_FACTS, NODE_MAINTENANCE, type DrainData, type NodeData, type NodeFacts, type ResourcesData } from "./node-queries";
import { clock, type ClusterState } from "../fleet/fleet-model";
import { Timeline } from "./timeline";
import { ErrorNote } from "../error-note";
import { LifecyclePanels } from "./lifecycle-panels";

/** Whether this service has Node.events and Node.changes; unknown until first asked. */
let factsServed: boolean | undefined;

export function NodePage({ cluster, name, caller }: { cluster: string; name: string; caller: Caller }) {
  const [node, setNode] = useState<NodeData | null | undefined>();
  const [facts, setFacts] = useState<NodeFacts | undefined>();
  const [error, setError] = useState<ApiError | undefined>();
  const [drain, setDrain] = useState<DrainData | undefined>();
  const [clusterState, setClusterState] = useState<ClusterState | undefined>();
  const loading = useRef<Promise<void> | undefined>(undefined);
  const again = useRef(false);

  // One load at a time; changes during a load ask for one more after it.
  const load = () => {
    if (loading.current) {
      again.current = true;
      return;
    }
    loading.current = (async () => {
      try {
        const data = await gql<{ node: NodeData | null }>(NODE, { cluster, name });
        setNode(data.node);
        if (data.node?.activeDrain) setDrain((current) => (current?.id === data.node!.activeDrain!.id ? current : data.node!.activeDrain!));
        setError(undefined);
        if (factsServed !== false)
          setFacts(
            await gql<{ node: NodeFacts | null }>(NODE_FACTS, { cluster, name }).then(
              (d) => ((factsServed = true), d.node ?? undefined),
              () => {
                // A service from before node events and changes (the query does not validate): not asked again.
                factsServed = false;
                return undefined;
              },
            ),
          );
      } catch (e) {
        setError(e as ApiError);
      } finally {
        loading.current = undefined;
        if (again.current) {
          again.current = false;
          load();
        }
      }
    })();
  };

  // Whether what the page shows of this cluster is live: subscribed first, then read.
  useEffect(() => {
    const read = () =>
      gql<{ clusters: ClusterState[] }>(NODE_CLUSTER).then(
        (data) => setClusterState(data.clusters.find((c) => c.name === cluster)),
        () => {},
      );
    const stops = [subscribe<{ clusterStatusChanged: ClusterState }>(NODE_CLUSTER_STATUS, { cluster }, (data) => setClusterState(data.clusterStatusChanged)), onReconnect(read)];
    void read();
    return () => stops.forEach((stop) => stop());
  }, [cluster]);

  useEffect(() => {
    load();
    const stops = [
      subscribe(NODE_CHANGED, { cluster, filter: { names: [name] } }, load),
      subscribe(NODE_MAINTENANCE, { cluster, node: name }, load),
      onReconnect(load),
    ];
    return () => stops.forEach((stop) => stop());
  }, [cluster, name]);

  if (error && !node)
    return (
      <main id="main">
        <h1 tabIndex={-1}>{name}</h1>
        <ErrorNote error={error} />
      </main>
    );
  if (node === undefined)
    return (
      <main id="main">
        <h1 tabIndex={-1}>{name}</h1>
        <p role="status">Loading…</p>
      </main>
    );
  if (node === null)
    return (
      <main id="main">
        <h1 tabIndex={-1}>{name}</h1>
        <p>
          There is no node {name} in cluster {cluster} now. <a href="/ui/">Back to the fleet</a>.
        </p>
      </main>
    );

  const ready = node.ready === "TRUE" ? "true" : node.ready === "FALSE" ? "false" : "unknown";
  return (
    <main id="main" class="node-page" data-node-page={node.id} data-stale={String(Boolean(clusterState?.disconnectedSince))} data-ready={ready} data-cordoned={String(node.unschedulable)} data-draining={String(node.activeDrain !== null)}>
      <p class="crumbs">
        <a href="/ui/">Fleet</a> / {node.cluster}
      </p>
      {clusterState?.disconnectedSince && (
        <p class="stale-banner" role="alert" data-stale-cluster={cluster}>
          Cluster <strong>{cluster}</strong> is not live since {clock(clusterState.disconnectedSince)}
          {clusterState.lastError ? ` (${clusterState.lastError})` : ""}: this page shows the node's last known state.
        </p>
      )}
      <h1 tabIndex={-1}>
        {node.name} <span class={`badge state-${ready === "true" && node.unschedulable ? "cordoned" : ready}`}>{node.status}</span>
      </h1>
      <p class="facts">
        {[
          node.roles.join(", ") || "no role",
          node.zone,
          node.instanceType,
          `created ${when(node.createdAt)}`,
          `${node.podCount} pods`,
          facts?.heartbeatAgeSeconds != null ? `kubelet heartbeat ${duration(facts.heartbeatAgeSeconds)} ago` : null,
        ]
          .filter(Boolean)
          .join(" · ")}
      </p>

      {mayMaintain(caller) && <MaintenancePanel node={node} drained={setDrain} changed={load} />}
      {drain && <DrainProgress key={drain.id} initial={drain} mayCancel={mayMaintain(caller)} />}
      <LifecyclePanels cluster={node.cluster} name={node.name} version={node.uid + String(node.taints.length) + node.status + String(node.podCount)} caller={caller} />

      <section aria-labelledby="resources-title">
        <h2 id="resources-title">Resources</h2>
        <Resources node={node} />
      </section>

      <div class="columns">
        <section aria-labelledby="conditions-title">
          <h2 id="conditions-title">Conditions</h2>
          <table>
            <thead>
              <tr>
                <th scope="col">Type</th>
                <th scope="col">Status</th>
                <th scope="col">Reason</th>
                <th scope="col">Since</th>
              </tr>
            </thead>
            <tbody>
              {node.conditions.map((c) => (
                <tr key={c.type} title={c.message ?? ""}>
                  <td>{c.type}</td>
                  <td>
                    <span class={`badge cond-${(c.type === "Ready") === (c.status === "TRUE") ? "good" : c.status === "UNKNOWN" ? "unknown" : "bad"}`}>{c.status}</span>
                  </td>
                  <td>{c.reason ?? ""}</td>
                  <td>{when(c.lastTransitionTime)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>Taints</h2>
          {node.taints.length ? (
            <ul class="plain">
              {node.taints.map((t) => (
                <li key={`${t.key}:${t.effect}`}>
                  <code>
                    {t.key}
                    {t.value ? `=${t.value}` : ""}:{t.effect}
                  </code>
                </li>
              ))}
            </ul>
          ) : (
            <p class="muted">None.</p>
          )}
          <h2>Addresses</h2>
          <dl>
            {node.addresses.map((a) => [<dt key={`${a.type}t`}>{a.type}</dt>, <dd key={`${a.type}d${a.address}`}>{a.address}</dd>])}
          </dl>
          <h2>Versions</h2>
          <dl>
            <dt>kubelet</dt>
            <dd>{node.nodeInfo.kubeletVersion}</dd>
            <dt>container runtime</dt>
            <dd>{node.nodeInfo.containerRuntimeVersion}</dd>
            <dt>OS image</dt>
            <dd>{node.nodeInfo.osImage}</dd>
            <dt>kernel</dt>
            <dd>{node.nodeInfo.kernelVersion}</dd>
            <dt>OS / architecture</dt>
            <dd>
              {node.nodeInfo.operatingSystem}/{node.nodeInfo.architecture}
            </dd>
          </dl>
        </section>
        <section aria-labelledby="labels-title">
          <h2 id="labels-title">Labels</h2>
          <ul class="plain labels">
            {node.labels.map((l) => (
              <li key={l.key}>
                <code>
                  {l.key}={l.value}
                </code>
              </li>
            ))}
          </ul>
        </section>
      </div>

      <section aria-labelledby="pods-title">
        <h2 id="pods-title">Pods ({node.pods.length})</h2>
        <table class="pods">
          <thead>
            <tr>
              <th scope="col">Namespace</th>
              <th scope="col">Name</th>
              <th scope="col">Phase</th>
              <th scope="col">Owner</th>
              <th scope="col">CPU request</th>
              <th scope="col">Memory request</th>
            </tr>
          </thead>
          <tbody>
            {node.pods.map((p) => (
              <tr key={`${p.namespace}/${p.name}`}>
                <td>{p.namespace}</td>
                <td>{p.name}</td>
                <td>{p.phase}</td>
                <td>{p.mirror ? "mirror" : p.daemonSet ? "DaemonSet" : (p.ownerKind ?? "none")}</td>
                <td>{cores(p.requests.cpuMillicores)}</td>
                <td>{bytes(p.requests.memoryBytes)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>

      <section aria-labelledby="history-title">
        <h2 id="history-title">History</h2>
        <Timeline node={node} facts={facts} />
      </section>
    </main>
  );
}

function Resources({ node }: { node: NodeData }) {
  const { capacity: cap, allocatable: alloc, requests: req, limits: lim, usage } = node;
  const of = (value: number, whole: number) => (whole > 0 ? ` (${percent(value / whole)})` : "");
  const bar = (title: string, key: keyof ResourcesData, show: (n: number) => string, used?: number) => {
    const whole = (alloc[key] as number | null) ?? 0;
    const parts = [
      { label: "requests", value: (req[key] as number | null) ?? 0, kind: "bar-requests" },
      { label: "limits", value: (lim[key] as number | null) ?? 0, kind: "bar-limits" },
      ...(used !== undefined ? [{ label: "usage", value: used, kind: "bar-usage" }] : []),
    ].map((part) => ({ ...part, text: `${show(part.value)}${of(part.value, whole)}` }));
    return <Bar title={title} whole={whole} wholeText={`allocatable ${show(whole)} of capacity ${show((cap[key] as number | null) ?? 0)}`} parts={parts} />;
  };
  const count = (n: number) => String(n);
  return (
    <div class="bars">
      {bar("CPU", "cpuMillicores", cores, usage?.cpuMillicores)}
      {bar("Memory", "memoryBytes", bytes, usage?.memoryBytes)}
      <Bar
        title="Pods"
        whole={alloc.pods ?? 0}
        wholeText={`allocatable ${alloc.pods ?? 0} of capacity ${cap.pods ?? 0}`}
        parts={[{ label: "running", value: node.podCount, kind: "bar-requests", text: `${count(node.podCount)}${of(node.podCount, alloc.pods ?? 0)}` }]}
      />
      {alloc.ephemeralStorageBytes !== null && (
        <Bar
          title="Ephemeral storage"
          whole={alloc.ephemeralStorageBytes}
          wholeText={`allocatable ${bytes(alloc.ephemeralStorageBytes)} of capacity ${bytes(cap.ephemeralStorageBytes ?? 0)}`}
          parts={[{ label: "requests", value: req.ephemeralStorageBytes ?? 0, kind: "bar-requests", text: `${bytes(req.ephemeralStorageBytes ?? 0)}${of(req.ephemeralStorageBytes ?? 0, alloc.ephemeralStorageBytes)}` }]}
        />
      )}
      {!usage && <p class="muted">No usage sample (metrics.k8s.io has none for this node).</p>}
    </div>
  );
}
