// A node's history, newest first: condition transitions and maintenance events (recorded by
// node-inventory), and node changes and Kubernetes events where the service has them.
import { when } from "../format";
import type { NodeData, NodeFacts } from "./node-queries";

interface Entry {
  id: string;
  at: string;
  kind: "condition" | "maintenance" | "change" | "event";
  title: string;
  detail: string;
  warn: boolean;
}

const KIND_NAMES: Record<Entry["kind"], string> = { condition: "Condition", maintenance: "Maintenance", change: "Change", event: "Event" };

export function timelineEntries(node: NodeData, facts: NodeFacts | undefined): Entry[] {
  const entries: Entry[] = [];
  for (const t of node.conditionTransitions)
    entries.push({
      id: `c${t.id}`,
      at: t.at,
      kind: "condition",
      title: `${t.type}: ${t.from ?? "(first seen)"} → ${t.to}`,
      detail: [t.reason, t.message].filter(Boolean).join(": "),
      warn: t.type === "Ready" ? t.to !== "TRUE" : t.to === "TRUE",
    });
  for (const m of node.maintenanceEvents)
    entries.push({
      id: `m${m.id}`,
      at: m.at,
      kind: "maintenance",
      title: `${m.kind.replace(/_/g, " ").toLowerCase()}${m.pod ? ` ${m.pod}` : ""} by ${m.actor}`,
      detail: [m.reason, m.detail].filter(Boolean).join(": "),
      warn: m.kind === "DRAIN_FAILED" || m.kind === "EVICTION_BLOCKED",
    });
  for (const c of facts?.changes ?? [])
    entries.push({
      id: `n${c.id}`,
      at: c.at,
      kind: "change",
      title: `${c.kind.replace(/_/g, " ").toLowerCase()}${c.key ? ` ${c.key}` : ""}${c.from !== null || c.to !== null ? `: ${c.from ?? "—"} → ${c.to ?? "—"}` : ""}`,
      detail: c.actor ? `by ${c.actor}` : "",
      warn: c.kind === "DELETED" || c.kind === "REBOOTED",
    });
  for (const e of facts?.events ?? [])
    entries.push({
      id: `e${e.id}`,
      at: e.lastSeen ?? e.firstSeen ?? "",
      kind: "event",
      title: `${e.type} ${e.reason}${e.count > 1 ? ` (×${e.count})` : ""}`,
      detail: [e.message, e.source ? `from ${e.source}` : ""].filter(Boolean).join(" "),
      warn: e.type === "Warning",
    });
  return entries.filter((e) => e.at).sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
}

export function Timeline({ node, facts }: { node: NodeData; facts: NodeFacts | undefined }) {
  const entries = timelineEntries(node, facts);
  if (!entries.length) return <p class="muted">Nothing recorded yet.</p>;
  return (
    <ol class="timeline" aria-label="History, newest first">
      {entries.map((entry) => (
        <li key={entry.id} class={`entry ${entry.kind}${entry.warn ? " warn" : ""}`}>
          <time dateTime={entry.at}>{when(entry.at)}</time>
          <span class="entry-kind">{KIND_NAMES[entry.kind]}</span>
          <span class="entry-title">{entry.title}</span>
          {entry.detail && <span class="entry-detail">{entry.detail}</span>}
        </li>
      ))}
    </ol>
  );
}
