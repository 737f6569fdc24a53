/**
 * Pods and their owners: building a pod from a controller's template, binding
 * it to a node, and the status a kubelet reports as it runs and stops it.
 * The scheduler's fit check (resources, taints) lives here too.
 */
import type { KObject, OwnerReference } from "./store.js";
import type { Rng } from "./rng.js";
import type { SimClock } from "./clock.js";
import { cpuMillicores, bytes } from "../k8s/quantity.js";

type Obj = Record<string, any>;

/** Default tolerations the DaemonSet controller adds to every daemon pod. */
export const DAEMON_TOLERATIONS = [
  { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute" },
  { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute" },
  { key: "node.kubernetes.io/disk-pressure", operator: "Exists", effect: "NoSchedule" },
  { key: "node.kubernetes.io/memory-pressure", operator: "Exists", effect: "NoSchedule" },
  { key: "node.kubernetes.io/pid-pressure", operator: "Exists", effect: "NoSchedule" },
  { key: "node.kubernetes.io/unschedulable", operator: "Exists", effect: "NoSchedule" },
];

/** Tolerations the DefaultTolerationSeconds admission plugin adds to other pods. */
export const DEFAULT_TOLERATIONS = [
  { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
  { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
];

/** DefaultTolerationSeconds admits its tolerations only for taints the pod does not tolerate already. */
export function withDefaultTolerationSeconds(tolerations: Obj[] | undefined): Obj[] {
  return DEFAULT_TOLERATIONS.filter((d) => !tolerates(tolerations, { key: d.key, effect: d.effect }));
}

const TERMINATION_DEFAULTS = { terminationMessagePath: "/dev/termination-log", terminationMessagePolicy: "File", imagePullPolicy: "IfNotPresent" };

/** A container spec with the defaults the apiserver fills in. */
export function container(name: string, image: string, resources: Obj, extra: Obj = {}): Obj {
  return { name, image, resources, ...extra, ...TERMINATION_DEFAULTS };
}

const API_ACCESS_SOURCES = [
  { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
  { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
  { downwardAPI: { items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }] } },
];

/** Build a Pending, unscheduled pod from a controller's pod template. */
export function podFromTemplate(
  owner: KObject,
  template: Obj,
  rng: Rng,
  clock: SimClock,
  opts: { name?: string; nodeAffinity?: string; createdMs?: number } = {},
): KObject {
  const ownerRef: OwnerReference = {
    apiVersion: owner.apiVersion!,
    kind: owner.kind!,
    name: owner.metadata.name,
    uid: owner.metadata.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
  const daemon = owner.kind === "DaemonSet";
  const spec: Obj = template.spec;
  const apiVolume = `kube-api-access-${rng.suffix(5)}`;
  const mount = { name: apiVolume, readOnly: true, mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" };
  const tolerations = [...(spec.tolerations ?? []), ...(daemon ? DAEMON_TOLERATIONS : withDefaultTolerationSeconds(spec.tolerations))];
  const name = opts.name ?? `${owner.metadata.name}-${daemon ? rng.suffix(5) : rng.suffix(5)}`;
  const podSpec: Obj = {
    volumes: [...(spec.volumes ?? []), { name: apiVolume, projected: { sources: API_ACCESS_SOURCES, defaultMode: 420 } }],
    containers: (spec.containers as Obj[]).map((c) => ({ ...c, volumeMounts: [...(c.volumeMounts ?? []), mount] })),
    restartPolicy: "Always",
    terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds ?? 30,
    dnsPolicy: "ClusterFirst",
    serviceAccountName: spec.serviceAccountName ?? "default",
    serviceAccount: spec.serviceAccountName ?? "default",
    securityContext: {},
    schedulerName: "default-scheduler",
    tolerations,
    priority: spec.priorityClassName === "system-node-critical" ? 2000001000 : spec.priorityClassName === "system-cluster-critical" ? 2000000000 : 0,
    enableServiceLinks: true,
    preemptionPolicy: "PreemptLowerPriority",
  };
  if (spec.priorityClassName) podSpec.priorityClassName = spec.priorityClassName;
  if (spec.nodeSelector) podSpec.nodeSelector = spec.nodeSelector;
  if (spec.hostNetwork) podSpec.hostNetwork = true;
  if (opts.nodeAffinity) {
    // The DaemonSet controller pins each daemon pod to its node this way.
    podSpec.affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: [opts.nodeAffinity] }] }],
        },
      },
    };
  }
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      generateName: `${owner.metadata.name}-`,
      namespace: owner.metadata.namespace!,
      uid: rng.uid(),
      creationTimestamp: clock.iso(opts.createdMs),
      labels: { ...(template.metadata?.labels ?? {}) },
      ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ownerReferences: [ownerRef],
    },
    spec: podSpec,
    status: { phase: "Pending", qosClass: qosClass(podSpec.containers) },
  };
}

/** Guaranteed, Burstable or BestEffort, from the containers' requests and limits. */
export function qosClass(containers: Obj[]): string {
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const req = c.resources?.requests ?? {};
    const lim = c.resources?.limits ?? {};
    if (Object.keys(req).length || Object.keys(lim).length) any = true;
    for (const r of ["cpu", "memory"]) {
      if (!lim[r] || (req[r] && req[r] !== lim[r])) guaranteed = false;
    }
  }
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

/** Pod with spec.nodeName set and PodScheduled, as after a Binding. */
export function bindPod(pod: KObject, nodeName: string, clock: SimClock): KObject {
  const status = pod.status as Obj;
  return {
    ...pod,
    spec: { ...(pod.spec as Obj), nodeName },
    status: { ...status, conditions: [{ type: "PodScheduled", status: "True", lastProbeTime: null, lastTransitionTime: clock.iso() }] },
  };
}

/** Pod left Pending because no node fits, with the scheduler's condition. */
export function unschedulable(pod: KObject, nodes: number, clock: SimClock, message = `0/${nodes} nodes are available: ${nodes} Insufficient cpu or untolerated taint. preemption: 0/${nodes} nodes are available: ${nodes} No preemption victims found for incoming pod.`): KObject {
  return {
    ...pod,
    status: {
      ...(pod.status as Obj),
      conditions: [{ type: "PodScheduled", status: "False", lastProbeTime: null, lastTransitionTime: clock.iso(), reason: "Unschedulable", message }],
    },
  };
}

/** Running and Ready status, as a kubelet posts it once containers started. */
export function runningPod(pod: KObject, node: KObject, rng: Rng, clock: SimClock, startedMs = clock.now()): KObject {
  const spec = pod.spec as Obj;
  const hostIP = (node.status as Obj).addresses.find((a: Obj) => a.type === "InternalIP")?.address ?? "10.0.0.1";
  const cidr: string = (node.spec as Obj).podCIDR ?? "100.64.0.0/24";
  const podIP = spec.hostNetwork ? hostIP : `${cidr.split(".").slice(0, 3).join(".")}.${rng.int(2, 254)}`;
  const started = clock.iso(startedMs);
  const runtime: string = (node.status as Obj).nodeInfo.containerRuntimeVersion;
  const prefix = runtime.split("://")[0];
  const cond = (type: string) => ({ type, status: "True", lastProbeTime: null, lastTransitionTime: started });
  return {
    ...pod,
    status: {
      phase: "Running",
      conditions: [cond("PodReadyToStartContainers"), cond("Initialized"), cond("Ready"), cond("ContainersReady"), cond("PodScheduled")],
      hostIP,
      hostIPs: [{ ip: hostIP }],
      podIP,
      podIPs: [{ ip: podIP }],
      startTime: started,
      containerStatuses: (spec.containers as Obj[]).map((c) => ({
        name: c.name,
        state: { running: { startedAt: started } },
        lastState: {},
        ready: true,
        restartCount: 0,
        image: c.image,
        imageID: `${c.image.split(":")[0]}@sha256:${rng.hex(64)}`,
        containerID: `${prefix}://${rng.hex(64)}`,
        started: true,
      })),
      qosClass: (pod.status as Obj).qosClass,
    },
  };
}

/** Requests of a pod in millicores and bytes (sum of containers; init containers ignored). */
/** A pod's requests as the scheduler counts them: cpu millicores, memory bytes, and extended resources (nvidia.com/gpu …) by name. */
export interface PodRequests {
  cpu: number;
  memory: number;
  extended: Readonly<Record<string, number>>;
}

const requestCache = new WeakMap<KObject, PodRequests>();

export function podRequests(pod: KObject): PodRequests {
  // Stored objects never change in place, so parsing once per version is enough.
  const cached = requestCache.get(pod);
  if (cached) return cached;
  const r = computeRequests(pod);
  requestCache.set(pod, r);
  return r;
}

function computeRequests(pod: KObject): PodRequests {
  let cpu = 0;
  let memory = 0;
  const extended: Record<string, number> = {};
  for (const c of ((pod.spec as Obj)?.containers ?? []) as Obj[]) {
    const r = c.resources?.requests;
    if (r?.cpu) cpu += cpuMillicores(r.cpu);
    if (r?.memory) memory += bytes(r.memory);
    for (const [name, q] of Object.entries((r ?? {}) as Record<string, string>)) {
      if (name === "cpu" || name === "memory" || name === "ephemeral-storage") continue;
      extended[name] = (extended[name] ?? 0) + bytes(String(q));
    }
  }
  return { cpu, memory, extended };
}

/** Whether a pod's tolerations cover a taint (same rules as the scheduler). */
export function tolerates(tolerations: Obj[] | undefined, taint: Obj): boolean {
  return (tolerations ?? []).some((t) => {
    if (t.effect && t.effect !== taint.effect) return false;
    if (t.operator === "Exists") return !t.key || t.key === taint.key;
    return t.key === taint.key && (t.value ?? "") === (taint.value ?? "");
  });
}

/** Whether every NoSchedule/NoExecute taint of the node is tolerated. */
export function toleratesNode(pod: KObject, node: KObject): boolean {
  const taints = ((node.spec as Obj).taints ?? []) as Obj[];
  const tol = (pod.spec as Obj).tolerations as Obj[] | undefined;
  return taints.every((t) => t.effect === "PreferNoSchedule" || tolerates(tol, t));
}

/** Whether the pod's nodeSelector matches the node's labels. */
export function selectorFits(pod: KObject, node: KObject): boolean {
  const sel = (pod.spec as Obj).nodeSelector as Record<string, string> | undefined;
  if (!sel) return true;
  const labels = node.metadata.labels ?? {};
  return Object.entries(sel).every(([k, v]) => labels[k] === v);
}

/** NodeAffinity's required terms (any term; each of its expressions and fields): In, NotIn, Exists, DoesNotExist, Gt, Lt. */
export function nodeAffinityFits(pod: KObject, node: KObject): boolean {
  const terms = ((pod.spec as Obj).affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []) as Obj[];
  if (terms.length === 0) return true;
  const labels = node.metadata.labels ?? {};
  const matches = (value: string | undefined, r: Obj): boolean => {
    const values = (r.values ?? []) as string[];
    switch (r.operator) {
      case "In":
        return value !== undefined && values.includes(value);
      case "NotIn":
        return value === undefined || !values.includes(value);
      case "Exists":
        return value !== undefined;
      case "DoesNotExist":
        return value === undefined;
      case "Gt":
        return value !== undefined && Number(value) > Number(values[0]);
      case "Lt":
        return value !== undefined && Number(value) < Number(values[0]);
      default:
        return false;
    }
  };
  return terms.some((t) => {
    const exprs = (t.matchExpressions ?? []) as Obj[];
    const fields = (t.matchFields ?? []) as Obj[];
    // A term with no requirements matches nothing.
    if (exprs.length === 0 && fields.length === 0) return false;
    return exprs.every((r) => matches(labels[r.key], r)) && fields.every((r) => matches(r.key === "metadata.name" ? node.metadata.name : undefined, r));
  });
}

/** The ReplicaSet a Deployment controller makes for the Deployment's current template. */
export function replicaSetFor(d: KObject, rng: Rng): KObject {
  const hash = rng.suffix(10);
  const spec = d.spec as Obj;
  const template = { ...spec.template, metadata: { ...spec.template.metadata, labels: { ...spec.template.metadata.labels, "pod-template-hash": hash } } };
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: {
      name: `${d.metadata.name}-${hash}`,
      namespace: d.metadata.namespace!,
      uid: rng.uid(),
      creationTimestamp: d.metadata.creationTimestamp!,
      generation: 1,
      labels: { ...template.metadata.labels },
      annotations: { "deployment.kubernetes.io/desired-replicas": String(spec.replicas), "deployment.kubernetes.io/max-replicas": String(spec.replicas + Math.ceil(spec.replicas / 4)), "deployment.kubernetes.io/revision": "1" },
      ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: d.metadata.name, uid: d.metadata.uid!, controller: true, blockOwnerDeletion: true }],
    },
    spec: { replicas: spec.replicas, selector: { matchLabels: { ...template.metadata.labels } }, template },
  };
}

/** Whether a pod has finished (Succeeded or Failed): it holds no resources and needs no budget. */
export function isTerminal(pod: KObject): boolean {
  const phase = (pod.status as Obj | undefined)?.phase;
  return phase === "Succeeded" || phase === "Failed";
}

/** Whether a pod's Ready condition is True. */
export function isReadyPod(pod: KObject): boolean {
  return ((pod.status as Obj | undefined)?.conditions ?? []).some((c: Obj) => c.type === "Ready" && c.status === "True");
}

/** The owner reference marked controller, if any. */
export function controllerOf(obj: KObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((o) => o.controller);
}

/** The node a daemon pod is pinned to (its nodeName, or its node affinity while pending); "" for other pods. */
export function daemonPodNode(pod: KObject): string {
  const spec = pod.spec as Obj;
  if (spec.nodeName) return spec.nodeName;
  return spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms?.[0]?.matchFields?.[0]?.values?.[0] ?? "";
}
