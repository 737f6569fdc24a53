import type { CachedNode, Taint } from "../cluster/model.js";
import { EXTERNAL_ACTOR, maintenanceActor, readChangeNote, taintItem, taintText, type ChangeNote, type MaintenanceEventKind } from "./history-model.js";

/** What the recorder last wrote about a node (the node_state row): the base of every diff. */
export interface NodeSnapshot {
  uid: string;
  /** Condition type -> status as Kubernetes writes it ("True", "False", "Unknown"). */
  conditions: Record<string, string>;
  unschedulable: boolean;
  kubeletVersion: string;
  containerRuntime: string;
  labels: Record<string, string>;
  taints: Taint[];
  /** status.nodeInfo.bootID; empty when not known. */
  bootId: string;
  /** The id of the last change note seen on the node (history-model.ts), if any. */
  changeNote: string | null;
  firstSeenAt: Date;
  deletedAt: Date | null;
}

export interface TransitionRecord {
  cluster: string;
  node: string;
  type: string;
  from: string | null;
  to: string;
  reason: string | null;
  message: string | null;
  at: Date;
  reconciled: boolean;
}

export type NodeChangeField = "CREATED" | "DELETED" | "KUBELET_VERSION" | "CONTAINER_RUNTIME" | "LABELS" | "TAINTS" | "SCHEDULABILITY" | "REBOOTED";

export interface NodeChangeRecord {
  cluster: string;
  node: string;
  field: NodeChangeField;
  /** The label key (LABELS) or `key:Effect` (TAINTS); empty for the other fields. */
  item: string;
  before: unknown;
  after: unknown;
  at: Date;
  key: string;
  reconciled: boolean;
  /** The subject node-inventory made the change for, or `external`. */
  actor: string;
}

export interface MaintenanceRecord {
  cluster: string;
  node: string;
  kind: Extract<MaintenanceEventKind, "CORDONED" | "UNCORDONED" | "LABELED" | "TAINTED">;
  actor: string;
  reason: string | null;
  at: Date;
  dedupeKey: string;
  /** For LABELED and TAINTED: the change in kubectl's syntax, e.g. `env=prod team-`. */
  detail?: string;
}

/** Everything one observation of a node adds to history, and the node's state afterwards. */
export interface NodeDiff {
  transitions: TransitionRecord[];
  changes: NodeChangeRecord[];
  maintenance: MaintenanceRecord[];
  /** The new recorded state; undefined when nothing about the node needs writing. */
  next: NodeSnapshot | undefined;
}

export interface Observation {
  /** When we saw it: the time of changes Kubernetes gives no timestamp for. */
  at: Date;
  /** The node's resourceVersion for a watch event; a reconcile pass's own key otherwise. */
  key: string;
  /** Found by comparing a relist or restart with the recorded state. */
  reconciled: boolean;
}

/** The fields of a node history cares about; two nodes equal here need no database work. */
export function projection(node: CachedNode): string {
  const conditions = node.conditions.map((c) => `${c.type}=${c.status}`).join(",");
  return [
    node.uid,
    conditions,
    node.unschedulable,
    node.nodeInfo.kubeletVersion,
    node.nodeInfo.containerRuntimeVersion,
    node.nodeInfo.bootID ?? "",
    JSON.stringify(node.labels),
    JSON.stringify(node.taints),
  ].join("|");
}

export function snapshotOf(node: CachedNode, firstSeenAt: Date): NodeSnapshot {
  return {
    uid: node.uid,
    conditions: Object.fromEntries(node.conditions.map((c) => [c.type, c.status])),
    unschedulable: node.unschedulable,
    kubeletVersion: node.nodeInfo.kubeletVersion,
    containerRuntime: node.nodeInfo.containerRuntimeVersion,
    labels: { ...node.labels },
    taints: node.taints.map((t) => ({ key: t.key, ...(t.value !== undefined ? { value: t.value } : {}), effect: t.effect })),
    bootId: node.nodeInfo.bootID ?? "",
    changeNote: readChangeNote(node.annotations)?.id ?? null,
    firstSeenAt,
    deletedAt: null,
  };
}

function parseTime(text: string | undefined, fallback: Date): Date {
  const ms = text ? Date.parse(text) : NaN;
  return Number.isFinite(ms) ? new Date(ms) : fallback;
}

/** Items whose text differs between two maps (absent: null), in item order. */
function changedItems(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): { item: string; from: string | null; to: string | null }[] {
  const items = [...new Set([...before.keys(), ...after.keys()])].sort();
  return items.flatMap((item) => {
    const from = before.get(item) ?? null;
    const to = after.get(item) ?? null;
    return from === to ? [] : [{ item, from, to }];
  });
}

function taintMap(taints: readonly Taint[]): Map<string, string> {
  return new Map(taints.map((t) => [taintItem(t), taintText(t)]));
}

/** kubectl's syntax for one change: `key=value` set, `key-` removed (taints: `key=value:Effect`, `key:Effect-`). */
function changeText(field: "LABELS" | "TAINTS", item: string, to: string | null): string {
  if (field === "LABELS") return to === null ? `${item}-` : `${item}=${to}`;
  const [key, effect] = [item.slice(0, item.indexOf(":")), item.slice(item.indexOf(":") + 1)];
  if (to === null) return `${key}:${effect}-`;
  return to === effect ? `${key}:${effect}` : `${key}=${to}`;
}

/**
 * What history to write for one observation of a node (`observed` undefined: it was deleted),
 * given what was last recorded. Pure: the same inputs always give the same rows, so replays,
 * restarts and replicas that compare against the same recorded state write nothing twice.
 */
export function diffNode(cluster: string, name: string, recorded: NodeSnapshot | undefined, observed: CachedNode | undefined, obs: Observation): NodeDiff {
  const diff: NodeDiff = { transitions: [], changes: [], maintenance: [], next: undefined };
  const change = (field: NodeChangeField, before: unknown, after: unknown, at = obs.at, key = obs.key, item = "", actor = EXTERNAL_ACTOR) =>
    diff.changes.push({ cluster, node: name, field, item, before, after, at, key, reconciled: obs.reconciled, actor });
  const live = recorded && !recorded.deletedAt ? recorded : undefined;

  if (!observed) {
    if (live) {
      change("DELETED", { uid: live.uid }, null, obs.at, `deleted:${live.uid}`);
      diff.next = { ...live, deletedAt: obs.at };
    }
    return diff;
  }

  let base = live;
  if (base && base.uid !== observed.uid) {
    // Same name, new object: the old node went away while we were not looking.
    change("DELETED", { uid: base.uid }, null, obs.at, `deleted:${base.uid}`);
    base = undefined;
  }
  const created = parseTime(observed.creationTimestamp, obs.at);
  if (!base) change("CREATED", null, { uid: observed.uid }, created, `created:${observed.uid}`);

  for (const condition of observed.conditions) {
    const from = base?.conditions[condition.type];
    if (from === condition.status) continue;
    diff.transitions.push({
      cluster,
      node: name,
      type: condition.type,
      from: from ?? null,
      to: condition.status,
      reason: condition.reason ?? null,
      message: condition.message ?? null,
      at: parseTime(condition.lastTransitionTime, obs.at),
      reconciled: obs.reconciled,
    });
  }

  if (base) {
    if (base.unschedulable !== observed.unschedulable) {
      const { actor, reason } = maintenanceActor(observed.annotations, observed.unschedulable);
      change("SCHEDULABILITY", { unschedulable: base.unschedulable }, { unschedulable: observed.unschedulable }, obs.at, obs.key, "", actor);
      const kind = observed.unschedulable ? "CORDONED" : "UNCORDONED";
      diff.maintenance.push({ cluster, node: name, kind, actor, reason, at: obs.at, dedupeKey: `${kind}:${cluster}/${name}@${obs.key}` });
    }
    if (base.kubeletVersion !== observed.nodeInfo.kubeletVersion) change("KUBELET_VERSION", base.kubeletVersion, observed.nodeInfo.kubeletVersion);
    if (base.containerRuntime !== observed.nodeInfo.containerRuntimeVersion) change("CONTAINER_RUNTIME", base.containerRuntime, observed.nodeInfo.containerRuntimeVersion);
    const bootId = observed.nodeInfo.bootID ?? "";
    // An unknown bootID before (older history, a node without one) is no reboot.
    if (base.bootId && bootId && base.bootId !== bootId) change("REBOOTED", base.bootId, bootId);
    // A note is news only once: seen before, it says nothing about a later change.
    const note = readChangeNote(observed.annotations);
    const fresh = note && note.id !== base.changeNote ? note : undefined;
    itemChanges(diff, cluster, name, obs, "LABELS", changedItems(new Map(Object.entries(base.labels)), new Map(Object.entries(observed.labels))), fresh, fresh?.labels);
    itemChanges(diff, cluster, name, obs, "TAINTS", changedItems(taintMap(base.taints), taintMap(observed.taints)), fresh, fresh?.taints);
  }

  const next = snapshotOf(observed, base?.firstSeenAt ?? obs.at);
  if (diff.transitions.length || diff.changes.length || !base || base.bootId !== next.bootId || base.changeNote !== next.changeNote) diff.next = next;
  return diff;
}

/**
 * Taints Kubernetes itself keeps in step with a node's conditions and schedulability (the node
 * lifecycle controller's not-ready, unreachable, unschedulable, pressure taints): node changes
 * like any, but no maintenance of anyone's; the condition or the cordon is recorded already.
 */
const SYSTEM_TAINT_PREFIX = "node.kubernetes.io/";

/**
 * One node change per label or taint that changed, credited to the note's actor when the
 * fresh note says exactly that, else external; and one LABELED / TAINTED event per actor.
 */
function itemChanges(
  diff: NodeDiff,
  cluster: string,
  node: string,
  obs: Observation,
  field: "LABELS" | "TAINTS",
  changed: { item: string; from: string | null; to: string | null }[],
  note: ChangeNote | undefined,
  noted: Record<string, string | null> | undefined,
): void {
  const byActor = new Map<string, string[]>();
  for (const { item, from, to } of changed) {
    const ours = note && noted && item in noted && noted[item] === to;
    const actor = ours ? note.actor : EXTERNAL_ACTOR;
    diff.changes.push({ cluster, node, field, item, before: from, after: to, at: obs.at, key: obs.key, reconciled: obs.reconciled, actor });
    if (field === "TAINTS" && item.startsWith(SYSTEM_TAINT_PREFIX) && !ours) continue;
    let texts = byActor.get(actor);
    if (!texts) byActor.set(actor, (texts = []));
    texts.push(changeText(field, item, to));
  }
  const kind = field === "LABELS" ? "LABELED" : "TAINTED";
  for (const [actor, texts] of byActor) {
    const reason = note && actor === note.actor && actor !== EXTERNAL_ACTOR ? note.reason : null;
    diff.maintenance.push({ cluster, node, kind, actor, reason, at: obs.at, detail: texts.join(" "), dedupeKey: `${kind}:${cluster}/${node}@${obs.key}:${actor}` });
  }
}
