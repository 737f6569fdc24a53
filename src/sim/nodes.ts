/**
 * Builders for Node objects, their kube-node-lease Leases and kubelet events,
 * shaped as a kubelet on a cloud VM registers them.
 */
import type { KObject } from "./store.js";
import type { Rng } from "./rng.js";
import type { SimClock } from "./clock.js";

type Obj = Record<string, any>;

export interface InstanceType {
  name: string;
  cpu: number;
  memoryGi: number;
  arch: "amd64" | "arm64";
  gpu?: number;
}

export interface PoolDef {
  name: string;
  weight: number;
  instanceTypes: InstanceType[];
  controlPlane?: boolean;
  spot?: boolean;
  taints?: { key: string; value?: string; effect: string }[];
}

export const REGION = "eu-west-1";
export const ZONES = ["eu-west-1a", "eu-west-1b", "eu-west-1c"];

export const POOLS: PoolDef[] = [
  {
    name: "general",
    weight: 55,
    instanceTypes: [
      { name: "m6i.xlarge", cpu: 4, memoryGi: 16, arch: "amd64" },
      { name: "m6i.2xlarge", cpu: 8, memoryGi: 32, arch: "amd64" },
    ],
  },
  {
    name: "compute",
    weight: 20,
    instanceTypes: [
      { name: "c6i.4xlarge", cpu: 16, memoryGi: 32, arch: "amd64" },
      { name: "c7g.4xlarge", cpu: 16, memoryGi: 32, arch: "arm64" },
    ],
  },
  { name: "memory", weight: 12, instanceTypes: [{ name: "r6i.2xlarge", cpu: 8, memoryGi: 64, arch: "amd64" }] },
  {
    name: "spot",
    weight: 10,
    spot: true,
    instanceTypes: [
      { name: "m6a.2xlarge", cpu: 8, memoryGi: 32, arch: "amd64" },
      { name: "m7g.2xlarge", cpu: 8, memoryGi: 32, arch: "arm64" },
    ],
  },
  { name: "gpu", weight: 3, instanceTypes: [{ name: "g5.2xlarge", cpu: 8, memoryGi: 32, arch: "amd64", gpu: 1 }], taints: [{ key: "nvidia.com/gpu", value: "present", effect: "NoSchedule" }] },
];

export const CONTROL_PLANE_POOL: PoolDef = {
  name: "control-plane",
  weight: 0,
  controlPlane: true,
  instanceTypes: [{ name: "m6i.xlarge", cpu: 4, memoryGi: 16, arch: "amd64" }],
  taints: [{ key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule" }],
};

const KUBELET_VERSIONS: [string, number][] = [
  ["v1.31.4", 50],
  ["v1.31.2", 25],
  ["v1.30.8", 20],
  ["v1.29.12", 5],
];
const RUNTIMES: [string, number][] = [
  ["containerd://1.7.22", 45],
  ["containerd://1.7.24", 30],
  ["cri-o://1.29.5", 15],
  ["cri-o://1.29.10", 10],
];
const OS_IMAGES: [{ image: string; kernel: (arch: string) => string }, number][] = [
  [{ image: "Ubuntu 22.04.5 LTS", kernel: () => "6.8.0-1019-aws" }, 50],
  [{ image: "Amazon Linux 2023.6.20241212", kernel: (a) => `6.1.119-129.201.amzn2023.${a === "arm64" ? "aarch64" : "x86_64"}` }, 35],
  [{ image: "Bottlerocket OS 1.29.0 (aws-k8s-1.31)", kernel: () => "6.1.119" }, 15],
];

/** The upgrade target churn moves kubelets to. */
export const LATEST_KUBELET = "v1.31.4";

const KI = 1024;

/** Conditions of a healthy node, in the order a kubelet reports them. */
export function healthyConditions(now: string, since: string, networkReason = "RouteCreated"): object[] {
  return [
    { type: "NetworkUnavailable", status: "False", lastHeartbeatTime: since, lastTransitionTime: since, reason: networkReason, message: "RouteController created a route" },
    { type: "MemoryPressure", status: "False", lastHeartbeatTime: now, lastTransitionTime: since, reason: "KubeletHasSufficientMemory", message: "kubelet has sufficient memory available" },
    { type: "DiskPressure", status: "False", lastHeartbeatTime: now, lastTransitionTime: since, reason: "KubeletHasNoDiskPressure", message: "kubelet has no disk pressure" },
    { type: "PIDPressure", status: "False", lastHeartbeatTime: now, lastTransitionTime: since, reason: "KubeletHasSufficientPID", message: "kubelet has sufficient PID available" },
    { type: "Ready", status: "True", lastHeartbeatTime: now, lastTransitionTime: since, reason: "KubeletReady", message: "kubelet is posting ready status" },
  ];
}

/** Reason and message a kubelet gives each condition in a given status. */
export function conditionText(type: string, status: string): { reason: string; message: string } {
  const table: Record<string, Record<string, [string, string]>> = {
    Ready: {
      True: ["KubeletReady", "kubelet is posting ready status"],
      False: ["KubeletNotReady", "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"],
      Unknown: ["NodeStatusUnknown", "Kubelet stopped posting node status."],
    },
    MemoryPressure: {
      True: ["KubeletHasInsufficientMemory", "kubelet has insufficient memory available"],
      False: ["KubeletHasSufficientMemory", "kubelet has sufficient memory available"],
      Unknown: ["NodeStatusUnknown", "Kubelet stopped posting node status."],
    },
    DiskPressure: {
      True: ["KubeletHasDiskPressure", "kubelet has disk pressure"],
      False: ["KubeletHasNoDiskPressure", "kubelet has no disk pressure"],
      Unknown: ["NodeStatusUnknown", "Kubelet stopped posting node status."],
    },
    PIDPressure: {
      True: ["KubeletHasInsufficientPID", "kubelet has insufficient PID available"],
      False: ["KubeletHasSufficientPID", "kubelet has sufficient PID available"],
      Unknown: ["NodeStatusUnknown", "Kubelet stopped posting node status."],
    },
    NetworkUnavailable: {
      True: ["NoRouteCreated", "RouteController failed to create a route"],
      False: ["RouteCreated", "RouteController created a route"],
      Unknown: ["NodeStatusUnknown", "Kubelet stopped posting node status."],
    },
  };
  const [reason, message] = table[type]?.[status] ?? ["Unknown", ""];
  return { reason, message };
}

/** The taint the node lifecycle controller or kubelet sets for a condition, if any. */
export function conditionTaint(type: string, status: string): { key: string; effect: string } | undefined {
  if (type === "Ready" && status === "False") return { key: "node.kubernetes.io/not-ready", effect: "NoSchedule" };
  if (type === "Ready" && status === "Unknown") return { key: "node.kubernetes.io/unreachable", effect: "NoSchedule" };
  if (type === "MemoryPressure" && status === "True") return { key: "node.kubernetes.io/memory-pressure", effect: "NoSchedule" };
  if (type === "DiskPressure" && status === "True") return { key: "node.kubernetes.io/disk-pressure", effect: "NoSchedule" };
  if (type === "PIDPressure" && status === "True") return { key: "node.kubernetes.io/pid-pressure", effect: "NoSchedule" };
  if (type === "NetworkUnavailable" && status === "True") return { key: "node.kubernetes.io/network-unavailable", effect: "NoSchedule" };
  return undefined;
}

export interface NodePlan {
  name: string;
  pool: PoolDef;
  zone: string;
  type: InstanceType;
  index: number;
  createdMs: number;
}

/** Build a registered, Ready node. */
export function buildNode(plan: NodePlan, rng: Rng, clock: SimClock): KObject {
  const { name, pool, zone, type, index } = plan;
  const now = clock.iso();
  const created = clock.iso(plan.createdMs);
  const kubelet = pool.controlPlane ? "v1.31.4" : rng.weighted(KUBELET_VERSIONS);
  const runtime = rng.weighted(RUNTIMES);
  const os = rng.weighted(OS_IMAGES);
  const i = index + 10;
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const memKi = type.memoryGi * 1024 * KI - rng.int(300, 600) * KI; // firmware eats a little
  const cpuReservedM = 100 + 25 * type.cpu;
  const memReservedKi = (type.memoryGi <= 16 ? 1024 : 1536) * KI + 100 * KI;
  const ephemeralKi = 104_845_292;
  const labels: Record<string, string> = {
    "beta.kubernetes.io/arch": type.arch,
    "beta.kubernetes.io/instance-type": type.name,
    "beta.kubernetes.io/os": "linux",
    "failure-domain.beta.kubernetes.io/region": REGION,
    "failure-domain.beta.kubernetes.io/zone": zone,
    "kubernetes.io/arch": type.arch,
    "kubernetes.io/hostname": name,
    "kubernetes.io/os": "linux",
    "node.kubernetes.io/instance-type": type.name,
    "topology.kubernetes.io/region": REGION,
    "topology.kubernetes.io/zone": zone,
    "node-pool": pool.name,
    "node.kubernetes.io/capacity-type": pool.spot ? "spot" : "on-demand",
  };
  if (pool.controlPlane) {
    labels["node-role.kubernetes.io/control-plane"] = "";
    labels["node.kubernetes.io/exclude-from-external-load-balancers"] = "";
  } else {
    labels["node-role.kubernetes.io/worker"] = "";
  }
  const capacity: Record<string, string> = {
    cpu: String(type.cpu),
    "ephemeral-storage": `${ephemeralKi}Ki`,
    "hugepages-1Gi": "0",
    "hugepages-2Mi": "0",
    memory: `${memKi}Ki`,
    pods: "110",
  };
  const allocatable: Record<string, string> = {
    cpu: `${type.cpu * 1000 - cpuReservedM}m`,
    "ephemeral-storage": "96625420948",
    "hugepages-1Gi": "0",
    "hugepages-2Mi": "0",
    memory: `${memKi - memReservedKi}Ki`,
    pods: "110",
  };
  if (type.gpu) {
    capacity["nvidia.com/gpu"] = String(type.gpu);
    allocatable["nvidia.com/gpu"] = String(type.gpu);
  }
  const instanceId = `i-0${rng.hex(16)}`;
  // Every third worker has an EBS volume attached and mounted (derived from the index, not
  // drawn from rng, so seeded clusters keep their names and shapes).
  const volume = !pool.controlPlane && index % 3 === 0 ? `kubernetes.io/csi/ebs.csi.aws.com^vol-0${(0x5eed0000 + index).toString(16).padStart(16, "0")}` : undefined;
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      uid: rng.uid(),
      creationTimestamp: created,
      labels,
      annotations: {
        "node.alpha.kubernetes.io/ttl": "0",
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
        "csi.volume.kubernetes.io/nodeid": `{"ebs.csi.aws.com":"${instanceId}"}`,
      },
    },
    spec: {
      podCIDR: `100.${64 + ((index >> 8) & 63)}.${index & 255}.0/24`,
      podCIDRs: [`100.${64 + ((index >> 8) & 63)}.${index & 255}.0/24`],
      providerID: `aws:///${zone}/${instanceId}`,
      ...(pool.taints ? { taints: pool.taints.map((t) => ({ ...t })) } : {}),
    },
    status: {
      capacity,
      allocatable,
      conditions: healthyConditions(now, created),
      addresses: [
        { type: "InternalIP", address: ip },
        ...(pool.spot || pool.controlPlane ? [] : index % 7 === 0 ? [{ type: "ExternalIP", address: `52.${(index >> 8) & 255}.${index & 255}.${10 + (index % 200)}` }] : []),
        { type: "InternalDNS", address: `ip-${ip.replace(/\./g, "-")}.${REGION}.compute.internal` },
        { type: "Hostname", address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      ...(volume ? { volumesAttached: [{ name: volume, devicePath: "" }], volumesInUse: [volume] } : {}),
      nodeInfo: {
        machineID: rng.hex(32),
        systemUUID: `ec2${rng.hex(5)}-${rng.hex(4)}-${rng.hex(4)}-${rng.hex(4)}-${rng.hex(12)}`,
        bootID: rng.uid(),
        kernelVersion: os.kernel(type.arch),
        osImage: os.image,
        containerRuntimeVersion: runtime,
        kubeletVersion: kubelet,
        kubeProxyVersion: kubelet,
        operatingSystem: "linux",
        architecture: type.arch,
      },
      images: [
        { names: ["registry.k8s.io/kube-proxy@sha256:" + rng.hex(64), `registry.k8s.io/kube-proxy:${kubelet}`], sizeBytes: 30_000_000 + rng.int(0, 999_999) },
        { names: ["quay.io/prometheus/node-exporter@sha256:" + rng.hex(64), "quay.io/prometheus/node-exporter:v1.8.2"], sizeBytes: 12_000_000 + rng.int(0, 999_999) },
        { names: ["registry.k8s.io/pause@sha256:" + rng.hex(64), "registry.k8s.io/pause:3.10"], sizeBytes: 320_368 },
      ],
    },
  };
}

/** The kube-node-lease Lease a kubelet renews every 10 seconds. */
export function buildLease(node: KObject, clock: SimClock): KObject {
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: {
      name: node.metadata.name,
      namespace: "kube-node-lease",
      uid: `${node.metadata.uid!.slice(0, 24)}1ea5e0000000`.slice(0, 36),
      creationTimestamp: node.metadata.creationTimestamp!,
      ownerReferences: [{ apiVersion: "v1", kind: "Node", name: node.metadata.name, uid: node.metadata.uid! }],
    },
    spec: { holderIdentity: node.metadata.name, leaseDurationSeconds: 40, renewTime: clock.microIso() },
  };
}

/** A core/v1 Event about a node, as the kubelet records it (involvedObject.uid is the node name). */
export function nodeEvent(node: string, reason: string, message: string, rng: Rng, clock: SimClock, component = "kubelet", type = "Normal"): KObject {
  const now = clock.iso();
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: `${node}.${rng.hex(16)}`, namespace: "default", uid: rng.uid(), creationTimestamp: now },
    involvedObject: { kind: "Node", name: node, uid: node, apiVersion: "v1" },
    reason,
    message,
    source: component === "kubelet" ? { component, host: node } : { component },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
    type,
    eventTime: null,
    reportingComponent: component,
    reportingInstance: component === "kubelet" ? node : "",
  };
}

/** The taints the kubelet and the node lifecycle controller keep in step with Ready. */
export const READY_TAINT_KEYS = ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"];

/** Replace the taints with these keys by `add` (kept sorted as the controllers add them). */
export function setTaints(node: KObject, add: Obj[], keys: string[]): void {
  const spec = node.spec as Obj;
  const kept = ((spec.taints ?? []) as Obj[]).filter((t) => !keys.includes(t.key));
  const merged = [...kept];
  for (const t of add) {
    const old = ((spec.taints ?? []) as Obj[]).find((o) => o.key === t.key && o.effect === t.effect);
    merged.push(old ?? t);
  }
  if (merged.length) spec.taints = merged;
  else delete spec.taints;
}
