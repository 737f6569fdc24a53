/**
 * What a node's kubelet serves through the apiserver's node proxy (GET /api/v1/nodes/NAME/proxy/…):
 * /configz, its running configuration, whose reservations account for the node's allocatable
 * exactly as the kubelet computes it (capacity − kubeReserved − systemReserved − evictionHard,
 * a percentage taken in float32 as the kubelet does); and /logs/?query=kubelet, the node log
 * query over a journal made from what the simulator knows of the node (its registration, its
 * pods, its status posts, its conditions).
 */
import type { KObject } from "./store.js";
import type { SimCluster } from "./cluster.js";
import { R } from "./storage-names.js";
import { bytes, cpuMillicores } from "../k8s/quantity.js";

type Obj = Record<string, any>;

/** The kubelet's eviction thresholds in the simulator (the kubelet's own defaults). */
export const EVICTION_HARD = { "imagefs.available": "15%", "memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%" };
const SYSTEM_RESERVED_CPU_M = 100;

/** Ki, Mi or Gi, whichever writes `n` bytes whole (the kubelet's configuration is written so). */
function binary(n: number): string {
  for (const [unit, size] of [
    ["Gi", 2 ** 30],
    ["Mi", 2 ** 20],
    ["Ki", 2 ** 10],
  ] as const)
    if (n % size === 0 && n >= size) return `${n / size}${unit}`;
  return String(n);
}

/** The node's kubelet configuration as /configz serves it, its reservations read back from capacity and allocatable. */
export function kubeletConfigz(node: KObject): Obj {
  const status = node.status as Obj;
  const cap = status.capacity as Record<string, string>;
  const alloc = status.allocatable as Record<string, string>;
  const kubeCpu = cpuMillicores(cap.cpu!) - cpuMillicores(alloc.cpu!) - SYSTEM_RESERVED_CPU_M;
  const kubeMemory = bytes(cap.memory!) - bytes(alloc.memory!) - bytes(EVICTION_HARD["memory.available"]);
  const storageCap = bytes(cap["ephemeral-storage"]!);
  const nodefs = Math.trunc(storageCap * Math.fround(0.1));
  const kubeStorage = storageCap - bytes(alloc["ephemeral-storage"]!) - nodefs;
  const kubeReserved: Record<string, string> = { cpu: `${kubeCpu}m`, memory: binary(kubeMemory) };
  if (kubeStorage > 0) kubeReserved["ephemeral-storage"] = String(kubeStorage);
  const runtime = String((status.nodeInfo as Obj).containerRuntimeVersion ?? "");
  return {
    kubeletconfig: {
      enableServer: true,
      staticPodPath: "/etc/kubernetes/manifests",
      syncFrequency: "1m0s",
      fileCheckFrequency: "20s",
      httpCheckFrequency: "20s",
      address: "0.0.0.0",
      port: 10250,
      authentication: { x509: { clientCAFile: "/etc/kubernetes/pki/ca.crt" }, webhook: { enabled: true, cacheTTL: "2m0s" }, anonymous: { enabled: false } },
      authorization: { mode: "Webhook", webhook: { cacheAuthorizedTTL: "5m0s", cacheUnauthorizedTTL: "30s" } },
      clusterDomain: "cluster.local",
      clusterDNS: ["10.96.0.10"],
      nodeStatusUpdateFrequency: "10s",
      nodeStatusReportFrequency: "5m0s",
      nodeLeaseDurationSeconds: 40,
      cgroupDriver: runtime.startsWith("docker") ? "cgroupfs" : "systemd",
      cgroupsPerQOS: true,
      maxPods: Number(cap.pods ?? 110),
      podPidsLimit: -1,
      evictionHard: { ...EVICTION_HARD },
      evictionPressureTransitionPeriod: "5m0s",
      kubeReserved,
      systemReserved: { cpu: `${SYSTEM_RESERVED_CPU_M}m` },
      enforceNodeAllocatable: ["pods"],
      shutdownGracePeriod: "0s",
      enableSystemLogHandler: true,
      enableSystemLogQuery: true,
      featureGates: { NodeLogQuery: true },
      containerRuntimeEndpoint: "unix:///run/containerd/containerd.sock",
    },
  };
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** journalctl's short-precise time, in UTC (the kubelet runs journalctl --utc). */
function journalTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${MONTHS[d.getUTCMonth()]} ${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}.${p((ms % 1000) * 1000, 6)}`;
}

/** klog's header: I1204 02:10:01.123456    1234 file.go:123] */
function klog(ms: number, pid: number, where: string, severity = "I"): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${severity}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}.${p((ms % 1000) * 1000, 6)}    ${pid} ${where}]`;
}

/** The node's kubelet journal, oldest first: what `journalctl -u kubelet` would show of it. */
export function kubeletJournal(cluster: SimCluster, node: KObject): string[] {
  const name = node.metadata.name;
  const pid = 1000 + (Array.from(name).reduce((h, ch) => (h * 31 + ch.charCodeAt(0)) >>> 0, 7) % 8000);
  const now = cluster.clock.now();
  const entries: [number, string][] = [];
  const add = (ms: number, where: string, text: string, severity = "I") => entries.push([ms, `${journalTime(ms)} ${name} kubelet[${pid}]: ${klog(ms, pid, where, severity)} ${text}`]);
  const created = Date.parse(node.metadata.creationTimestamp ?? "") || now;
  const kubeletVersion = String(((node.status as Obj).nodeInfo as Obj).kubeletVersion ?? "");
  add(created, "server.go:484", `"Kubelet version" kubeletVersion="${kubeletVersion}"`);
  add(created + 1, "kubelet_node_status.go:76", `"Attempting to register node" node="${name}"`);
  add(created + 2, "kubelet_node_status.go:79", `"Successfully registered node" node="${name}"`);
  for (const pod of cluster.podsOnNode(name)) {
    const at = Date.parse(pod.metadata.creationTimestamp ?? "") || now;
    const ref = `${pod.metadata.namespace}/${pod.metadata.name}`;
    add(at, "kubelet.go:2407", `"SyncLoop ADD" source="api" pods=["${ref}"]`);
    const started = ((pod.status as Obj | undefined)?.startTime as string | undefined) ?? undefined;
    if (started) add(Date.parse(started) + 900, "pod_startup_latency_tracker.go:104", `"Observed pod startup duration" pod="${ref}"`);
    if (pod.metadata.deletionTimestamp)
      add(Date.parse(pod.metadata.deletionTimestamp) - (pod.metadata.deletionGracePeriodSeconds ?? 30) * 1000, "kubelet.go:2423", `"SyncLoop DELETE" source="api" pods=["${ref}"]`);
  }
  for (const c of ((node.status as Obj).conditions ?? []) as Obj[]) {
    if (c.type !== "Ready" || !c.lastTransitionTime) continue;
    const at = Date.parse(c.lastTransitionTime);
    if (c.status === "True") add(at, "kubelet_node_status.go:503", `"Fast updating node status as it just became ready"`);
    else
      add(
        at,
        "kubelet.go:2902",
        `"Container runtime network not ready" networkReady="NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"`,
        "E",
      );
  }
  // Its status posts of the last hour, every five minutes, while its kubelet is running.
  if (!cluster.stoppedKubelets.has(name)) {
    for (let at = Math.max(created, now - 3_600_000); at <= now; at += 300_000) add(at, "kubelet_node_status.go:538", `"Updating node status" node="${name}"`);
  }
  return entries.sort((a, b) => a[0] - b[0]).map((e) => e[1]);
}

/** Bounds of the node log query, as the kubelet checks its options. */
const MAX_TAIL_LINES = 100_000;

/** The node log query (kubelet server /logs/?query=…): the lines, or an error text with its HTTP status. */
export function nodeLogQuery(cluster: SimCluster, nodeName: string, q: URLSearchParams): { code: number; text: string } {
  const node = cluster.store.get(R.nodes, nodeName)?.obj;
  if (!node) return { code: 404, text: `node "${nodeName}" not found` };
  const query = q.getAll("query");
  if (query.length === 0) return { code: 400, text: "query parameter is required" };
  const tailText = q.get("tailLines");
  const tail = tailText === null ? undefined : Number(tailText);
  if (tail !== undefined && (!Number.isInteger(tail) || tail < 0 || tail > MAX_TAIL_LINES))
    return { code: 400, text: `tailLines: Invalid value: ${JSON.stringify(tailText)}: must be between 0 and ${MAX_TAIL_LINES}` };
  let pattern: RegExp | undefined;
  try {
    pattern = q.get("pattern") ? new RegExp(q.get("pattern")!) : undefined;
  } catch {
    return { code: 400, text: `pattern: Invalid value: ${JSON.stringify(q.get("pattern"))}: not a valid regular expression` };
  }
  const lines: string[] = [];
  for (const service of query) {
    if (service !== "kubelet") {
      lines.push(`-- No entries --`);
      continue;
    }
    let journal = kubeletJournal(cluster, node);
    if (pattern) journal = journal.filter((l) => pattern!.test(l));
    if (tail !== undefined) journal = tail === 0 ? [] : journal.slice(-tail);
    lines.push(...journal);
  }
  return { code: 200, text: lines.length ? `${lines.join("\n")}\n` : "" };
}
