// The fleet as the wallboard holds it: one record per node with just what a tile and the
// grouping need, and the pure functions that group and count them. No DOM here.

export type Readiness = "true" | "false" | "unknown";

export interface TileNode {
  /** `<cluster>/<name>`, the tile's data-node. */
  id: string;
  cluster: string;
  name: string;
  ready: Readiness;
  cordoned: boolean;
  draining: boolean;
  labels: Record<string, string>;
  roles: string[];
  status: string;
  /** A not-ready or unreachable NoExecute taint: its pods' eviction countdown runs. */
  countdown?: boolean;
}

/** A cluster's liveness, as the fleet query and clusterStatusChanged give it. */
export interface ClusterState {
  name: string;
  /** Null while its watches are established; else since when its last known state is shown. */
  disconnectedSince: string | null;
  lastError: string | null;
}

/** The taints that start an eviction countdown (the node lifecycle controller's). */
const COUNTDOWN_TAINTS = ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"];

/** The fields of Node a tile is made from (the fleet query and the subscription ask for the same). */
export const TILE_FIELDS = `cluster name ready unschedulable status roles labels { key value } activeDrain { id } taints { key effect }`;

export interface NodeFields {
  cluster: string;
  name: string;
  ready: "TRUE" | "FALSE" | "UNKNOWN";
  unschedulable: boolean;
  status: string;
  roles: string[];
  labels: { key: string; value: string }[];
  activeDrain: { id: string } | null;
  taints?: { key: string; effect: string }[];
}

export function toTile(node: NodeFields): TileNode {
  const labels: Record<string, string> = {};
  for (const { key, value } of node.labels) labels[key] = value;
  return {
    id: `${node.cluster}/${node.name}`,
    cluster: node.cluster,
    name: node.name,
    ready: node.ready === "TRUE" ? "true" : node.ready === "FALSE" ? "false" : "unknown",
    cordoned: node.unschedulable,
    draining: node.activeDrain !== null,
    labels,
    roles: node.roles,
    status: node.status,
    countdown: (node.taints ?? []).some((t) => t.effect === "NoExecute" && COUNTDOWN_TAINTS.includes(t.key)),
  };
}

/** A grouping level: the report dimensions the API knows (src/reports/grouping.ts), or a label. */
export type Dimension = "CLUSTER" | "NODE_POOL" | "ZONE" | "INSTANCE_TYPE" | "ROLE" | `label:${string}`;

export const DIMENSION_NAMES: Record<Exclude<Dimension, `label:${string}`>, string> = {
  CLUSTER: "cluster",
  NODE_POOL: "node pool",
  ZONE: "zone",
  INSTANCE_TYPE: "instance type",
  ROLE: "role",
};

/** As the capacity and availability reports read a pool: managed node groups, Karpenter, then `node-pool`. */
export const POOL_LABELS = ["eks.amazonaws.com/nodegroup", "cloud.google.com/gke-nodepool", "kubernetes.azure.com/agentpool", "karpenter.sh/nodepool", "node-pool"];

/** A node's value for a grouping, as the reports compute it; null when it has none. */
export function groupValue(dimension: Dimension, node: TileNode): string | null {
  switch (dimension) {
    case "CLUSTER":
      return node.cluster;
    case "NODE_POOL":
      for (const key of POOL_LABELS) if (node.labels[key]) return node.labels[key]!;
      return null;
    case "ZONE":
      return node.labels["topology.kubernetes.io/zone"] ?? node.labels["failure-domain.beta.kubernetes.io/zone"] ?? null;
    case "INSTANCE_TYPE":
      return node.labels["node.kubernetes.io/instance-type"] ?? node.labels["beta.kubernetes.io/instance-type"] ?? null;
    case "ROLE":
      return node.roles.length ? node.roles.join(",") : null;
    default:
      return node.labels[dimension.slice("label:".length)] ?? null;
  }
}

/** The text a missing value is shown (and keyed) as. */
export const NONE = "(none)";

/** The path of a node's groups, one value per level: `data-group` of each header is that path up to its level, joined by `/`. */
export function groupPath(dimensions: readonly Dimension[], node: TileNode): string[] {
  return dimensions.map((dimension) => groupValue(dimension, node) ?? NONE);
}

export interface Counts {
  total: number;
  ready: number;
  notReady: number;
  unknown: number;
  cordoned: number;
  draining: number;
}

export const emptyCounts = (): Counts => ({ total: 0, ready: 0, notReady: 0, unknown: 0, cordoned: 0, draining: 0 });

/** Adds (sign 1) or takes away (sign -1) a node from counts. */
export function count(counts: Counts, node: TileNode, sign: 1 | -1): void {
  counts.total += sign;
  if (node.ready === "true") counts.ready += sign;
  else if (node.ready === "false") counts.notReady += sign;
  else counts.unknown += sign;
  if (node.cordoned) counts.cordoned += sign;
  if (node.draining) counts.draining += sign;
}

/** A group of the tree: its key path, counts over all its nodes, and either subgroups or nodes. */
export interface Group {
  /** Values from the top level down to this one. */
  path: string[];
  counts: Counts;
  children: Group[];
  nodes: TileNode[];
}

/** Groups nodes level by level; groups sorted by value (a missing value last), nodes by cluster then name. */
export function groupNodes(nodes: Iterable<TileNode>, dimensions: readonly Dimension[]): Group {
  const root: Group = { path: [], counts: emptyCounts(), children: [], nodes: [] };
  const index = new Map<string, Group>();
  for (const node of nodes) {
    count(root.counts, node, 1);
    let group = root;
    const path = groupPath(dimensions, node);
    for (let level = 0; level < path.length; level++) {
      const key = path.slice(0, level + 1).join("\u0000");
      let child = index.get(key);
      if (!child) {
        child = { path: path.slice(0, level + 1), counts: emptyCounts(), children: [], nodes: [] };
        index.set(key, child);
        group.children.push(child);
      }
      count(child.counts, node, 1);
      group = child;
    }
    group.nodes.push(node);
  }
  sortGroup(root);
  return root;
}

const byValue = (a: string, b: string) => (a === NONE ? 1 : b === NONE ? -1 : a < b ? -1 : a > b ? 1 : 0);
const byNode = (a: TileNode, b: TileNode) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function sortGroup(group: Group): void {
  group.children.sort((a, b) => byValue(a.path[a.path.length - 1]!, b.path[b.path.length - 1]!));
  group.nodes.sort(byNode);
  for (const child of group.children) sortGroup(child);
}

/** The name filter: every space-separated word must occur in the node's name (case-insensitive). */
export function nameMatcher(text: string): (node: TileNode) => boolean {
  const words = text.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return () => true;
  return (node) => {
    const name = node.name.toLowerCase();
    return words.every((word) => name.includes(word));
  };
}

/** What a tile says in words (its accessible name and tooltip): state is never told by colour alone. */
export function describeTile(node: TileNode, staleSince?: string): string {
  const state = node.ready === "true" ? "Ready" : node.ready === "false" ? "NotReady" : "Unknown";
  const marks = [node.cordoned ? "cordoned" : "", node.draining ? "draining" : "", node.countdown ? "eviction countdown" : ""].filter(Boolean);
  const stale = staleSince ? `; last known, cluster not live since ${clock(staleSince)}` : "";
  return `${node.name} (${node.cluster}): ${state}${marks.length ? `, ${marks.join(", ")}` : ""}${stale}`;
}

/** A time of day as a wall screen shows it (local time, to the second), with the date when it is not today. */
export function clock(iso: string): string {
  const at = new Date(iso);
  const time = at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
  return at.toDateString() === new Date().toDateString() ? time : `${at.toLocaleDateString()} ${time}`;
}
