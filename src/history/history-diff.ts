import type { CachedNode, Taint } from "../cluster/model.js";
import { maintenanceActor, type MaintenanceEventKind } from "./history-model.js";

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

export type NodeChangeField = "CREATED" | "DELETED" | "KUBELET_VERSION" | "CONTAINER_RUNTIME" | "LABELS" | "TAINTS" | "SCHEDULABILITY";

export interface NodeChangeRecord {
  cluster: string;
  node: string;
  field: NodeChangeField;
  before: unknown;
  after: unknown;
  at: Date;
  key: string;
  reconciled: boolean;
}

export interface MaintenanceRecord {
  cluster: string;
  node: string;
  kind: Extract<MaintenanceEventKind, "CORDONED" | "UNCORDONED">;
  actor: string;
  reason: string | null;
  at: Date;
  dedupeKey: string;
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
  return [node.uid, conditions, node.unschedulable, node.nodeInfo.kubeletVersion, node.nodeInfo.containerRuntimeVersion, JSON.stringify(node.labels), JSON.stringify(node.taints)].join("|");
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
    firstSeenAt,
    deletedAt: null,
  };
}

function parseTime(text: string | undefined, fallback: Date): Date {
  const ms = text ? Date.parse(text) : NaN;
  return Number.isFinite(ms) ? new Date(ms) : fallback;
}

function changedKeys(before: Record<string, string>, after: Record<string, string>): [Record<string, string>, Record<string, string>] | undefined {
  const was: Record<string, string> = {};
  const now: Record<string, string> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (before[key] === after[key]) continue;
    if (key in before) was[key] = before[key]!;
    if (key in after) now[key] = after[key]!;
  }
  return Object.keys(was).length || Object.keys(now).length ? [was, now] : undefined;
}

/**
 * What history to write for one observation of a node (`observed` undefined: it was deleted),
 * given what was last recorded. Pure: the same inputs always give the same rows, so replays,
 * restarts and replicas that compare against the same recorded state write nothing twice.
 */
export function diffNode(cluster: string, name: string, recorded: NodeSnapshot | undefined, observed: CachedNode | undefined, obs: Observation): NodeDiff {
  const diff: NodeDiff = { transitions: [], changes: [], maintenance: [], next: undefined };
  const change = (field: NodeChangeField, before: unknown, after: unknown, at = obs.at, key = obs.key) =>
    diff.changes.push({ cluster, node: name, field, before, after, at, key, reconciled: obs.reconciled });
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
      change("SCHEDULABILITY", { unschedulable: base.unschedulable }, { unschedulable: observed.unschedulable });
      const { actor, reason } = maintenanceActor(observed.annotations, observed.unschedulable);
      const kind = observed.unschedulable ? "CORDONED" : "UNCORDONED";
      diff.maintenance.push({ cluster, node: name, kind, actor, reason, at: obs.at, dedupeKey: `${kind}:${cluster}/${name}@${obs.key}` });
    }
    if (base.kubeletVersion !== observed.nodeInfo.kubeletVersion) change("KUBELET_VERSION", base.kubeletVersion, observed.nodeInfo.kubeletVersion);
    if (base.containerRuntime !== observed.nodeInfo.containerRuntimeVersion) change("CONTAINER_RUNTIME", base.containerRuntime, observed.nodeInfo.containerRuntimeVersion);
    const labels = changedKeys(base.labels, observed.labels);
    if (labels) change("LABELS", labels[0], labels[1]);
    const taints = snapshotOf(observed, created).taints;
    if (JSON.stringify(base.taints) !== JSON.stringify(taints)) change("TAINTS", base.taints, taints);
  }

  const next = snapshotOf(observed, base?.firstSeenAt ?? obs.at);
  if (diff.transitions.length || diff.changes.length || !base) diff.next = next;
  return diff;
}
