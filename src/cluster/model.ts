/**
 * What the watch caches keep of each Kubernetes object: only the fields node-inventory
 * serves, stripped on arrival (as client-go's transform does), so 150,000 pods fit in a
 * few hundred megabytes. Plain data, frozen after construction; a change replaces the object.
 */

/** Resource amounts in base units: cpu in millicores, everything else in its unit (bytes, count). */
export type ResourceAmounts = Readonly<Record<string, number>>;

export interface NodeCondition {
  type: string;
  /** "True" | "False" | "Unknown" as Kubernetes writes it. */
  status: string;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

export interface Taint {
  key: string;
  value?: string;
  effect: string;
  /** RFC 3339; set on NoExecute taints, when the taint was added (the eviction countdown starts then). */
  timeAdded?: string;
}

export interface NodeInfo {
  kubeletVersion: string;
  containerRuntimeVersion: string;
  osImage: string;
  kernelVersion: string;
  operatingSystem: string;
  architecture: string;
  /** Changes on every boot: a new one is a reboot. */
  bootID?: string;
}

export interface CachedNode {
  cluster: string;
  name: string;
  uid: string;
  resourceVersion: string;
  /** RFC 3339, as Kubernetes wrote it. */
  creationTimestamp: string;
  labels: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
  taints: readonly Taint[];
  unschedulable: boolean;
  conditions: readonly NodeCondition[];
  addresses: readonly { type: string; address: string }[];
  nodeInfo: NodeInfo;
  /** As Kubernetes wrote them (e.g. cpu "4", memory "16374584Ki"). */
  capacity: Readonly<Record<string, string>>;
  allocatable: Readonly<Record<string, string>>;
  /** The rest of the node that the API serves on request (node-details.ts); hand-made test nodes may lack it. */
  details?: NodeDetails;
}

/** spec.providerID, spec.podCIDRs, status.volumesAttached, status.volumesInUse and status.images. */
export interface NodeDetails {
  providerID: string | undefined;
  podCIDRs: readonly string[];
  volumesAttached: readonly { name: string; devicePath: string | undefined }[];
  volumesInUse: readonly string[];
  /** Largest first, as `kubectl describe node` lists them. */
  images: readonly NodeImage[];
}

export interface NodeImage {
  names: readonly string[];
  sizeBytes: number | undefined;
}

export interface CachedPod {
  cluster: string;
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  /** spec.nodeName; empty while unscheduled. */
  nodeName: string;
  phase: string;
  labels: Readonly<Record<string, string>>;
  /** Kind and name of the controller ownerReference, if any. */
  ownerKind: string | undefined;
  ownerName: string | undefined;
  daemonSet: boolean;
  /** A static pod the kubelet mirrors into the API (kubernetes.io/config.mirror annotation). */
  mirror: boolean;
  /** Uses an emptyDir volume (kubectl drain needs --delete-emptydir-data for it). */
  emptyDir: boolean;
  deletionTimestamp: string | undefined;
  terminationGracePeriodSeconds: number | undefined;
  /**
   * The pod's effective requests and limits as the scheduler and `kubectl describe node`
   * count them: containers summed, init containers as a maximum (sidecars added), plus overhead.
   */
  requests: ResourceAmounts;
  limits: ResourceAmounts;
  creationTimestamp: string;
  /**
   * How long the pod tolerates each NoExecute taint of the eviction countdown
   * (node.kubernetes.io/not-ready, /unreachable), in seconds: absent when it does not tolerate
   * it (evicted at once), {@link TOLERATES_FOREVER} when its toleration has no limit.
   */
  noExecuteTolerations: ResourceAmounts;
}

/** A toleration without tolerationSeconds: the pod stays however long the taint does. */
export const TOLERATES_FOREVER = -1;

/** One sample of metrics.k8s.io NodeMetrics. */
export interface NodeUsageSample {
  cpuMillicores: number;
  memoryBytes: number;
  /** RFC 3339 timestamp of the sample. */
  timestamp: string;
}
