// What the node page asks the service for.

export const DRAIN_FIELDS = `id cluster node status dryRun requestedBy reason startedAt finishedAt message remainingPods progressPercent warnings
  options { ignoreDaemonSets deleteEmptyDirData force gracePeriodSeconds timeoutSeconds podSelector disableEviction }
  podsByPhase { notStarted evicting terminating gone notRemoved }
  pods { namespace name status phase reason attempts action blockedBy unblockedBy }`;

const RESOURCES = `cpuMillicores memoryBytes pods ephemeralStorageBytes`;

export const NODE = `query NodePage($cluster: String!, $name: String!) {
  node(cluster: $cluster, name: $name) {
    id cluster name uid createdAt status ready unschedulable roles zone region instanceType podCount
    labels { key value }
    taints { key value effect }
    conditions { type status reason message lastHeartbeatTime lastTransitionTime }
    addresses { type address }
    nodeInfo { kubeletVersion containerRuntimeVersion osImage kernelVersion operatingSystem architecture }
    capacity { ${RESOURCES} }
    allocatable { ${RESOURCES} }
    requests { ${RESOURCES} }
    limits { ${RESOURCES} }
    usage { cpuMillicores memoryBytes cpuPercent memoryPercent timestamp }
    activeDrain { ${DRAIN_FIELDS} }
    pods { namespace name phase ownerKind daemonSet mirror requests { cpuMillicores memoryBytes } }
    conditionTransitions(first: 200) { id type from to reason message at }
    maintenanceEvents(first: 200) { id kind actor reason at pod detail operationId }
  }
}`;

/**
 * Node events, recorded node changes and the kubelet's heartbeat, asked for apart: they are newer parts of the API,
 * and a service without them answers this query with a validation error the page ignores.
 */
export const NODE_FACTS = `query NodeFacts($cluster: String!, $name: String!) {
  node(cluster: $cluster, name: $name) {
    heartbeatTime heartbeatAgeSeconds
    events(first: 100) { id type reason message count firstSeen lastSeen source }
    changes(first: 200) { id kind key from to at actor }
  }
}`;

export const NODE_CHANGED = `subscription NodeChanged($cluster: String!, $filter: NodeFilter) {
  nodeStatusChanged(cluster: $cluster, filter: $filter) { at }
}`;

export const NODE_MAINTENANCE = `subscription NodeMaintenance($cluster: String!, $node: String!) {
  maintenanceEvents(cluster: $cluster, node: $node) { kind at operationId }
}`;

export const NODE_CLUSTER = `query NodeCluster { clusters { name disconnectedSince lastError } }`;
export const NODE_CLUSTER_STATUS = `subscription NodeClusterStatus($cluster: String!) { clusterStatusChanged(cluster: $cluster) { name disconnectedSince lastError } }`;

export const CORDON = `mutation Cordon($cluster: String!, $name: String!, $reason: String) { cordonNode(cluster: $cluster, name: $name, reason: $reason) { name unschedulable } }`;
export const UNCORDON = `mutation Uncordon($cluster: String!, $name: String!, $reason: String) { uncordonNode(cluster: $cluster, name: $name, reason: $reason) { name unschedulable } }`;
export const DRAIN = `mutation Drain($cluster: String!, $name: String!, $options: DrainOptions, $reason: String) { drainNode(cluster: $cluster, name: $name, options: $options, reason: $reason) { ${DRAIN_FIELDS} } }`;
export const CANCEL_DRAIN = `mutation CancelDrain($id: ID!) { cancelDrain(id: $id) { ${DRAIN_FIELDS} } }`;
export const DRAIN_PROGRESS = `subscription DrainProgress($id: ID!) { drainProgress(id: $id) { ${DRAIN_FIELDS} } }`;

export interface ResourcesData {
  cpuMillicores: number;
  memoryBytes: number;
  pods: number | null;
  ephemeralStorageBytes: number | null;
}

export interface DrainPodData {
  namespace: string;
  name: string;
  status: string;
  phase: DrainPhase;
  reason: string | null;
  attempts: number;
  action: string | null;
  blockedBy: string | null;
  /** For a pod that stops the drain: the option (IGNORE_DAEMON_SETS, DELETE_EMPTY_DIR_DATA, FORCE) that would let it go on. */
  unblockedBy: string | null;
}

export type DrainPhase = "NOT_STARTED" | "EVICTING" | "TERMINATING" | "GONE" | "NOT_REMOVED";

export interface PhaseCounts {
  notStarted: number;
  evicting: number;
  terminating: number;
  gone: number;
  notRemoved: number;
}

export interface DrainData {
  id: string;
  cluster: string;
  node: string;
  status: "PENDING" | "RUNNING" | "SUCCEEDED" | "FAILED" | "CANCELLED";
  dryRun: boolean;
  requestedBy: string;
  reason: string | null;
  startedAt: string;
  finishedAt: string | null;
  message: string | null;
  remainingPods: number;
  progressPercent: number;
  warnings: string[];
  options: Record<string, unknown>;
  podsByPhase: PhaseCounts;
  pods: DrainPodData[];
}

export interface NodeData {
  id: string;
  cluster: string;
  name: string;
  uid: string;
  createdAt: string;
  status: string;
  ready: string;
  unschedulable: boolean;
  roles: string[];
  zone: string | null;
  region: string | null;
  instanceType: string | null;
  podCount: number;
  labels: { key: string; value: string }[];
  taints: { key: string; value: string | null; effect: string }[];
  conditions: { type: string; status: string; reason: string | null; message: string | null; lastHeartbeatTime: string | null; lastTransitionTime: string | null }[];
  addresses: { type: string; address: string }[];
  nodeInfo: Record<string, string>;
  capacity: ResourcesData;
  allocatable: ResourcesData;
  requests: ResourcesData;
  limits: ResourcesData;
  usage: { cpuMillicores: number; memoryBytes: number; cpuPercent: number; memoryPercent: number; timestamp: string } | null;
  activeDrain: DrainData | null;
  pods: { namespace: string; name: string; phase: string; ownerKind: string | null; daemonSet: boolean; mirror: boolean; requests: { cpuMillicores: number; memoryBytes: number } }[];
  conditionTransitions: { id: string; type: string; from: string | null; to: string; reason: string | null; message: string | null; at: string }[];
  maintenanceEvents: { id: string; kind: string; actor: string; reason: string | null; at: string; pod: string | null; detail: string | null; operationId: string | null }[];
}

export interface NodeFacts {
  heartbeatTime: string | null;
  heartbeatAgeSeconds: number | null;
  events: { id: string; type: string; reason: string; message: string | null; count: number; firstSeen: string | null; lastSeen: string | null; source: string | null }[];
  changes: { id: string; kind: string; key: string | null; from: string | null; to: string | null; at: string; actor: string | null }[];
}
