/**
 * How the fleet commands print: `nodes` as kubectl get nodes does (plus CLUSTER and usage),
 * and a drain as it goes: a progress bar on a terminal, kubectl drain's lines when piped.
 * Pure: GraphQL data in, text out.
 */

import { formatAge } from "../k8s/node-display.js";
import { toCsv } from "./report-format.js";

export interface NodeRow {
  cluster: string;
  name: string;
  status: string;
  roles: string[];
  createdAt: string;
  nodeInfo: { kubeletVersion: string; osImage: string; kernelVersion: string; containerRuntimeVersion: string };
  addresses: { type: string; address: string }[];
  usage: { cpuPercent: number; memoryPercent: number } | null;
}

export type NodesFormat = "table" | "wide" | "json" | "csv";

/** A cluster as `nodes` needs it: whether what it shows of it is live. */
export interface ClusterLiveness {
  name: string;
  disconnectedSince: string | null;
  lastError: string | null;
}

/** Control characters (a terminal's escapes among them) shown as `?`, so text from a cluster cannot drive the terminal. */
export const printable = (text: string) => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");

/** One stderr line per cluster whose nodes are its last known state, with since when and why. */
export function staleWarnings(clusters: readonly ClusterLiveness[]): string[] {
  return clusters
    .filter((c) => c.disconnectedSince)
    .map((c) => `Warning: cluster ${printable(c.name)} is not live since ${c.disconnectedSince}${c.lastError ? ` (${printable(c.lastError)})` : ""}: its nodes are shown as last known`);
}

const NONE = "<none>";

/** kubectl's tabwriter: columns left-aligned, three spaces apart, the last one unpadded. */
function kubectlTable(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]! + 3))).join("").trimEnd()).join("\n") + "\n";
}

const address = (n: NodeRow, type: string) => n.addresses.find((a) => a.type === type)?.address;
const percent = (value: number | undefined) => (value === undefined ? "<unknown>" : `${Math.round(value)}%`);

/** The columns of `kubectl get nodes` (-o wide: and its wide ones), CLUSTER first, CPU% and MEMORY% last (as kubectl top node). */
function columns(wide: boolean, now: number): [string, (n: NodeRow) => string][] {
  return [
    ["CLUSTER", (n) => n.cluster],
    ["NAME", (n) => n.name],
    ["STATUS", (n) => n.status],
    ["ROLES", (n) => (n.roles.length ? n.roles.join(",") : NONE)],
    ["AGE", (n) => formatAge((now - Date.parse(n.createdAt)) / 1000)],
    ["VERSION", (n) => n.nodeInfo.kubeletVersion],
    ...(wide
      ? ([
          ["INTERNAL-IP", (n) => address(n, "InternalIP") ?? NONE],
          ["EXTERNAL-IP", (n) => address(n, "ExternalIP") ?? NONE],
          ["OS-IMAGE", (n) => n.nodeInfo.osImage],
          ["KERNEL-VERSION", (n) => n.nodeInfo.kernelVersion],
          ["CONTAINER-RUNTIME", (n) => n.nodeInfo.containerRuntimeVersion],
        ] as [string, (n: NodeRow) => string][])
      : []),
    ["CPU%", (n) => percent(n.usage?.cpuPercent)],
    ["MEMORY%", (n) => percent(n.usage?.memoryPercent)],
  ];
}

/**
 * `nodes` output: a table (wide: kubectl's wide columns too), CSV with the wide columns, or the
 * GraphQL nodes as JSON. A node of a cluster that is not live says so: STATUS `(stale)` in a
 * table, `stale_since` in CSV, `clusterDisconnectedSince` in JSON.
 */
export function formatNodes(nodes: readonly NodeRow[], format: NodesFormat, now = Date.now(), clusters: readonly ClusterLiveness[] = []): string {
  const staleSince = new Map(clusters.filter((c) => c.disconnectedSince).map((c) => [c.name, c.disconnectedSince!]));
  if (format === "json") return JSON.stringify(nodes.map((n) => ({ ...n, clusterDisconnectedSince: staleSince.get(n.cluster) ?? null })), null, 2) + "\n";
  const cols = columns(format !== "table", now);
  if (format === "csv") cols.push(["STALE_SINCE", (n) => staleSince.get(n.cluster) ?? ""]);
  else cols[2] = ["STATUS", (n) => (staleSince.has(n.cluster) ? `${n.status} (stale)` : n.status)];
  const rows = nodes.map((n) => cols.map(([, value]) => value(n)));
  if (format === "csv") return toCsv([cols.map(([name]) => name.toLowerCase().replace("%", "_percent")), ...rows]);
  return kubectlTable([cols.map(([name]) => name), ...rows]);
}

/** What a drain's progress shows of an operation (the fields `drain` subscribes to). */
export interface DrainState {
  id: string;
  node: string;
  status: "PENDING" | "RUNNING" | "SUCCEEDED" | "FAILED" | "CANCELLED";
  dryRun: boolean;
  message: string | null;
  progressPercent: number;
  remainingPods: number;
  warnings: string[];
  pods: { namespace: string; name: string; status: string; reason: string | null; action: string | null; blockedBy: string | null }[];
}

export const isFinal = (status: DrainState["status"]) => status === "SUCCEEDED" || status === "FAILED" || status === "CANCELLED";

const BAR = 30;

/** One terminal line: a bar, the share done, the pods left and, while one is, the PodDisruptionBudget that blocks. */
export function progressLine(op: DrainState): string {
  const done = Math.round((Math.min(100, Math.max(0, op.progressPercent)) / 100) * BAR);
  const blocked = [...new Set(op.pods.filter((p) => p.status === "BLOCKED").map((p) => p.blockedBy ?? "a PodDisruptionBudget"))];
  const parts = [`[${"#".repeat(done)}${"-".repeat(BAR - done)}] ${Math.floor(op.progressPercent).toString().padStart(3)}%`, `${op.remainingPods} pod(s) left`];
  if (blocked.length) parts.push(`blocked by PodDisruptionBudget ${blocked.join(", ")}`);
  return `node/${op.node} ${parts.join("  ")}`;
}

const dry = (op: DrainState) => (op.dryRun ? " (dry run)" : "");

/** The lines a change from `before` to `after` adds when piped, in kubectl drain's words where it has them. */
export function changeLines(before: DrainState | undefined, after: DrainState): string[] {
  const lines: string[] = [];
  if (!before) {
    lines.push(`node/${after.node} cordoned${dry(after)}`);
    for (const warning of after.warnings) lines.push(`Warning: ${warning}`);
  }
  const was = new Map((before?.pods ?? []).map((p) => [`${p.namespace}/${p.name}`, p]));
  for (const pod of after.pods) {
    const id = `${pod.namespace}/${pod.name}`;
    const old = was.get(id);
    if (old && old.status === pod.status && old.blockedBy === pod.blockedBy) continue;
    if (after.dryRun) {
      if (pod.action) lines.push(`${pod.action === "DELETE" ? "deleting" : "evicting"} pod ${id}${dry(after)}`);
      continue;
    }
    switch (pod.status) {
      case "EVICTING":
        lines.push(`evicting pod ${id}`);
        break;
      case "BLOCKED":
        lines.push(`error when evicting pod ${id} (will retry): blocked by PodDisruptionBudget ${pod.blockedBy ?? "?"}${pod.reason ? `: ${pod.reason}` : ""}`);
        break;
      case "EVICTED":
        lines.push(`pod/${pod.name} evicted`);
        break;
      case "DELETED":
        lines.push(`pod/${pod.name} deleted`);
        break;
      case "FAILED":
        lines.push(`pod ${id} failed: ${pod.reason ?? "unknown"}`);
        break;
    }
  }
  if (isFinal(after.status) && (!before || !isFinal(before.status))) lines.push(finalLine(after));
  return lines;
}

/** The last line of a drain: kubectl's "node/x drained", or why not. */
export function finalLine(op: DrainState): string {
  if (op.status === "SUCCEEDED") return `node/${op.node} drained${dry(op)}`;
  if (op.status === "CANCELLED") return `drain of node/${op.node} cancelled: ${op.message ?? ""}`.trimEnd();
  return `error: ${op.message ?? `drain of node/${op.node} failed`}`;
}
