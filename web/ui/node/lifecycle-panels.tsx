// The node's lifecycle and diagnostics: the eviction countdown of a NotReady or unreachable node
// (ticking each second), the kubelet's configuration with the arithmetic that explains
// allocatable, the kubelet's last journal lines with a filter (operators), and the debugging
// pods on the node.
import { useEffect, useState } from "preact/hooks";
import { ApiError, gql } from "../api";
import { mayMaintain, type Caller } from "../auth";
import { bytes, cores, duration, when } from "../format";
import { ErrorNote } from "../error-note";

const LIFECYCLE = `query NodeLifecycle($cluster: String, $name: String!) { node(cluster: $cluster, name: $name) {
  evictionOutlook { taint { key effect } taintedSince pods { namespace name tolerationSeconds evictAt } }
  capacity { cpuMillicores memoryBytes pods ephemeralStorageBytes }
  allocatable { cpuMillicores memoryBytes pods ephemeralStorageBytes }
  kubeletConfig { maxPods cgroupDriver kubeReserved { cpuMillicores memoryBytes ephemeralStorageBytes } systemReserved { cpuMillicores memoryBytes ephemeralStorageBytes }
    evictionHard { key value } expectedAllocatable { cpuMillicores memoryBytes pods ephemeralStorageBytes } allocatableMismatch }
  kubeletConfigUnavailableReason kubeProxyMode nodeInfo { kubeletVersion }
  debugPods { namespace name image expiresAt attachCommand } } }`;

const LOGS = `query NodeLogs($cluster: String, $name: String!, $pattern: String) { node(cluster: $cluster, name: $name) { logs(tailLines: 200, pattern: $pattern) { lines truncated } } }`;

type Amounts = { cpuMillicores: number; memoryBytes: number; pods?: number | null; ephemeralStorageBytes: number | null };
interface Lifecycle {
  evictionOutlook: { taint: { key: string; effect: string }; taintedSince: string; pods: { namespace: string; name: string; tolerationSeconds: number | null; evictAt: string | null }[] } | null;
  capacity: Amounts;
  allocatable: Amounts;
  kubeletConfig: {
    maxPods: number | null;
    cgroupDriver: string | null;
    kubeReserved: Amounts;
    systemReserved: Amounts;
    evictionHard: { key: string; value: string }[];
    expectedAllocatable: Amounts;
    allocatableMismatch: string[];
  } | null;
  kubeletConfigUnavailableReason: string | null;
  kubeProxyMode: string | null;
  nodeInfo: { kubeletVersion: string };
  debugPods: { namespace: string; name: string; image: string; expiresAt: string; attachCommand: string }[];
}

/** Re-renders every second while `on`. */
function useSecondTick(on: boolean): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!on) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [on]);
  return now;
}

/** `version` changes whenever the node page reloads the node: the panels follow it. */
export function LifecyclePanels({ cluster, name, version, caller }: { cluster: string; name: string; version: string; caller: Caller }) {
  const [data, setData] = useState<Lifecycle | undefined>();
  const [error, setError] = useState<ApiError | undefined>();
  useEffect(() => {
    gql<{ node: Lifecycle | null }>(LIFECYCLE, { cluster, name }).then(
      (d) => (setData(d.node ?? undefined), setError(undefined)),
      (e) => setError(e as ApiError),
    );
  }, [cluster, name, version]);
  if (error) return <ErrorNote error={error} />;
  if (!data) return null;
  return (
    <>
      {data.evictionOutlook && <Countdown outlook={data.evictionOutlook} />}
      <section aria-labelledby="kubelet-title">
        <h2 id="kubelet-title">Kubelet configuration</h2>
        <p class="facts" data-kube-proxy-mode={data.kubeProxyMode ?? "unknown"}>
          kubelet {data.nodeInfo.kubeletVersion} · kube-proxy mode {data.kubeProxyMode ?? "not known"}
        </p>
        <KubeletConfig data={data} />
      </section>
      {mayMaintain(caller) && <Logs cluster={cluster} name={name} />}
      <section aria-labelledby="debug-title">
        <h2 id="debug-title">Debugging pods</h2>
        {data.debugPods.length ? (
          <ul class="plain">
            {data.debugPods.map((p) => (
              <li key={p.name}>
                <code>{p.namespace}/{p.name}</code> ({p.image}), deleted {when(p.expiresAt)}: <code>{p.attachCommand}</code>
              </li>
            ))}
          </ul>
        ) : (
          <p class="muted">None made by node-inventory.</p>
        )}
      </section>
    </>
  );
}

function Countdown({ outlook }: { outlook: NonNullable<Lifecycle["evictionOutlook"]> }) {
  const now = useSecondTick(true);
  const left = (at: string) => (Date.parse(at) - now) / 1000;
  const next = outlook.pods.find((p) => p.evictAt !== null && left(p.evictAt) > 0);
  return (
    <section class="eviction-countdown" aria-labelledby="countdown-title" data-eviction-countdown="running">
      <h2 id="countdown-title">Eviction countdown</h2>
      <p>
        Tainted <code>{outlook.taint.key}:{outlook.taint.effect}</code> since {when(outlook.taintedSince)}.{" "}
        {next ? (
          <strong role="timer">
            Next eviction in {duration(left(next.evictAt!))}: {next.namespace}/{next.name}
          </strong>
        ) : (
          "No eviction is pending."
        )}
      </p>
      <table>
        <thead>
          <tr>
            <th scope="col">Pod</th>
            <th scope="col">Tolerates</th>
            <th scope="col">Evicted</th>
          </tr>
        </thead>
        <tbody>
          {outlook.pods.map((p) => (
            <tr key={`${p.namespace}/${p.name}`}>
              <td>
                {p.namespace}/{p.name}
              </td>
              <td>{p.tolerationSeconds === null ? "forever" : `${p.tolerationSeconds} s`}</td>
              <td>{p.evictAt === null ? "never" : left(p.evictAt) > 0 ? `in ${duration(left(p.evictAt))}` : `due ${when(p.evictAt)}`}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function KubeletConfig({ data }: { data: Lifecycle }) {
  const k = data.kubeletConfig;
  if (!k) return <p class="muted">Not readable: {data.kubeletConfigUnavailableReason ?? "unknown"}.</p>;
  const eviction = (signal: string) => k.evictionHard.find((e) => e.key === signal)?.value ?? "none";
  const row = (title: string, show: (n: number) => string, key: "cpuMillicores" | "memoryBytes" | "ephemeralStorageBytes", resource: string, signal?: string) => (
    <tr data-resource={resource} class={k.allocatableMismatch.includes(resource) ? "mismatch" : ""}>
      <th scope="row">{title}</th>
      <td>{show(data.capacity[key] ?? 0)}</td>
      <td>− {show(k.kubeReserved[key] ?? 0)}</td>
      <td>− {show(k.systemReserved[key] ?? 0)}</td>
      <td>− {signal ? eviction(signal) : "none"}</td>
      <td>= {show(k.expectedAllocatable[key] ?? 0)}</td>
      <td>{show(data.allocatable[key] ?? 0)}{k.allocatableMismatch.includes(resource) ? " (does not add up)" : ""}</td>
    </tr>
  );
  return (
    <>
      <p class="facts">
        maxPods {k.maxPods ?? "unknown"} · cgroup driver {k.cgroupDriver ?? "unknown"} ·{" "}
        {k.allocatableMismatch.length ? <strong>allocatable does not add up for {k.allocatableMismatch.join(", ")}</strong> : "allocatable adds up"}
      </p>
      <table class="arithmetic">
        <thead>
          <tr>
            <th scope="col">Resource</th>
            <th scope="col">Capacity</th>
            <th scope="col">kubeReserved</th>
            <th scope="col">systemReserved</th>
            <th scope="col">evictionHard</th>
            <th scope="col">Expected</th>
            <th scope="col">Allocatable</th>
          </tr>
        </thead>
        <tbody>
          {row("CPU", cores, "cpuMillicores", "cpu")}
          {row("Memory", bytes, "memoryBytes", "memory", "memory.available")}
          {row("Ephemeral storage", bytes, "ephemeralStorageBytes", "ephemeral-storage", "nodefs.available")}
        </tbody>
      </table>
    </>
  );
}

function Logs({ cluster, name }: { cluster: string; name: string }) {
  const [pattern, setPattern] = useState("");
  const [log, setLog] = useState<{ lines: string[]; truncated: boolean } | null | undefined>();
  const [error, setError] = useState<ApiError | undefined>();
  const read = (p: string) =>
    gql<{ node: { logs: { lines: string[]; truncated: boolean } | null } | null }>(LOGS, { cluster, name, pattern: p || null }).then(
      (d) => (setLog(d.node?.logs ?? null), setError(undefined)),
      (e) => setError(e as ApiError),
    );
  useEffect(() => void read(""), [cluster, name]);
  return (
    <section aria-labelledby="logs-title">
      <h2 id="logs-title">Kubelet log</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void read(pattern);
        }}
      >
        <label>
          Filter (regular expression) <input name="pattern" value={pattern} onInput={(e) => setPattern((e.target as HTMLInputElement).value)} maxLength={256} />
        </label>{" "}
        <button type="submit">Filter</button>
      </form>
      {error && <ErrorNote error={error} />}
      {log === null && <p class="muted">The node log query is off on this kubelet.</p>}
      {log && (
        <>
          <pre class="node-log">{log.lines.join("\n")}</pre>
          {log.truncated && <p class="muted">The last 200 matching lines.</p>}
        </>
      )}
    </section>
  );
}
