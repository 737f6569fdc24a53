/**
 * How the fleet commands print: `nodes` as kubectl get nodes does (plus CLUSTER and usage),
 * and a drain as it goes: a progress bar on a terminal, kubectl drain's lines when piped.
 * Pure: GraphQL data in, text out.
 */

import { formatAge } from "../k8s/node-display.js";
import { terminalText, toCsv } from "./output-escaping.js";

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
function kubectlTable(given: string[][]): string {
  // Escaped before measuring, so a cell with control characters keeps the columns aligned.
  const rows = given.map((row) => row.map(terminalText));
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
  podsByPhase: { notStarted: number; evicting: number; terminating: number; gone: number; notRemoved: number };
  pods: { namespace: string; name: string; status: string; reason: string | null; action: string | null; blockedBy: string | null; unblockedBy?: string | null }[];
}

/** What blocks a drain, by the option that would unblock it, and that option as a flag of this CLI. */
const BLOCKERS: Record<string, { what: string; flag: string; then: string }> = {
  IGNORE_DAEMON_SETS: { what: "managed by a DaemonSet, which would put it back at once", flag: "--ignore-daemonsets", then: "to leave it" },
  DELETE_EMPTY_DIR_DATA: { what: "has emptyDir data, lost when it is evicted", flag: "--delete-emptydir-data", then: "to evict it" },
  FORCE: { what: "nothing would recreate it (no controller, or its DaemonSet is gone)", flag: "--force", then: "to remove it" },
};

/**
 * A dry run as a plan, in this CLI's words: each pod it would evict (or delete), leave, or be
 * stopped by (and the flag that would unblock it), then what the drain would do.
 */
export function planLines(op: DrainState): string[] {
  const verb = (pod: DrainState["pods"][number]) => (pod.action === "DELETE" ? "delete" : "evict");
  const lines = [`Plan for draining node/${op.node} (dry run: nothing was changed)`, `would cordon node/${op.node}`];
  for (const pod of op.pods) if (pod.action) lines.push(`would ${verb(pod)} pod ${pod.namespace}/${pod.name}`);
  for (const pod of op.pods) if (!pod.action && !pod.unblockedBy && pod.status !== "FAILED") lines.push(`would leave pod ${pod.namespace}/${pod.name}: ${pod.reason ?? "not to be removed"}`);
  const blockers = op.pods.filter((pod) => !pod.action && (pod.unblockedBy || pod.status === "FAILED"));
  for (const pod of blockers) {
    const blocker = pod.unblockedBy ? BLOCKERS[pod.unblockedBy] : undefined;
    lines.push(`blocks the drain: pod ${pod.namespace}/${pod.name}: ${blocker ? `${blocker.what} (${blocker.flag} ${blocker.then})` : (pod.reason ?? "refused")}`);
  }
  for (const warning of op.warnings) lines.push(`Note: ${warning}`);
  const removed = op.pods.filter((pod) => pod.action).length;
  if (!blockers.length) {
    lines.push(`plan: node/${op.node} would be drained: ${removed} pod(s) ${op.pods.some((p) => p.action === "DELETE") ? "deleted" : "evicted"}, ${op.pods.length - removed} left`);
    return lines;
  }
  const flags = Object.entries(BLOCKERS).flatMap(([option, { flag }]) => (blockers.some((pod) => pod.unblockedBy === option) ? [flag] : []));
  lines.push(`plan: with these flags the drain would stop before removing any pod: ${blockers.length} pod(s) block it${flags.length ? `; add ${flags.join(" ")} to let it go on` : ""}`);
  return lines;
}

export const isFinal = (status: DrainState["status"]) => status === "SUCCEEDED" || status === "FAILED" || status === "CANCELLED";

const BAR = 30;

/** The bar's marks, one per phase, in the order a pod moves through them. */
const MARKS = [
  ["gone", "#"],
  ["terminating", "="],
  ["evicting", "~"],
  ["notStarted", "-"],
] as const;

/** Shares of `width` in proportion to `counts`, summing to `width` exactly (largest remainders). */
function apportion(counts: readonly number[], width: number): number[] {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return counts.map(() => 0);
  const exact = counts.map((n) => (n / total) * width);
  const cells = exact.map(Math.floor);
  let left = width - cells.reduce((a, b) => a + b, 0);
  const order = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0]);
  for (const [, i] of order) if (left-- > 0) cells[i]!++;
  return cells;
}

/**
 * One terminal line: a bar of the pods to remove by phase (`#` gone, `=` terminating, `~` being
 * evicted, `-` not started), the share gone, the count in each phase and, while one does, the
 * PodDisruptionBudget that blocks.
 */
export function progressLine(op: DrainState): string {
  const phases = op.podsByPhase;
  const cells = apportion(MARKS.map(([phase]) => phases[phase]), BAR);
  const bar = MARKS.map(([, mark], i) => mark.repeat(cells[i]!)).join("") || "-".repeat(BAR);
  const blocked = [...new Set(op.pods.filter((p) => p.status === "BLOCKED").map((p) => p.blockedBy ?? "a PodDisruptionBudget"))];
  const counts = [`${phases.gone} gone`, `${phases.terminating} terminating`, `${phases.evicting} evicting`, `${phases.notStarted} not started`].join(", ");
  const parts = [`[${bar}] ${Math.floor(op.progressPercent).toString().padStart(3)}%`, counts];
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
