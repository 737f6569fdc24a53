/**
 * Turns raw Kubernetes JSON (as the API serves it in a list or watch event) into the frozen
 * shapes the watch caches keep, dropping everything node-inventory does not serve. This is our
 * equivalent of client-go's informer transform: it runs once per object on arrival, so the
 * per-query path never touches raw objects.
 *
 * Pod requests and limits are computed here, once, exactly as
 * k8s.io/component-helpers/resource PodRequests / PodLimits with default options compute them
 * (which is what `kubectl describe node` uses since kubernetes#137394; the older
 * kubectl/pkg/util/resource helper gave the same numbers for pods without pod-level resources):
 *
 * - regular containers are summed;
 * - restartable init containers (sidecars, restartPolicy Always) are added to that sum and
 *   accumulate, and every init container competes, as a maximum, with the sidecars started
 *   before it plus itself (a sidecar competes with the running sidecar total including itself);
 * - the result is max(containers + sidecars, that init maximum), per resource;
 * - pod-level resources (spec.resources, cpu / memory / hugepages-*) replace the container
 *   aggregate for the resources they name;
 * - spec.overhead is added to every request, and to every limit that is present and non-zero.
 *
 * Only resources that appear somewhere count: a pod that requests no cpu has no cpu entry.
 * Status-reported resources (in-place resize) are not consulted, as with the default options.
 */

import { Interner } from "./interner.js";
import { TOLERATES_FOREVER, type CachedNode, type CachedPod, type NodeCondition, type NodeInfo, type ResourceAmounts, type Taint } from "./model.js";
import { parseQuantity } from "../k8s/quantity.js";
import { stripNodeDetails } from "./node-details.js";
import { toleratesTaint, type Toleration } from "../reports/pod-fit.js";

type Json = Record<string, unknown>;

const EMPTY: Json = Object.freeze({});

function obj(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : EMPTY;
}

function arr(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/**
 * String-valued entries only; a malformed map entry is dropped rather than served as "[object Object]".
 * Keys and values go through `key` and `value` (an interner's, to share them).
 */
function stringMap(source: unknown, key: (text: string) => string = same, value: (text: string) => string = same): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(obj(source))) if (typeof v === "string") out[key(k)] = value(v);
  return Object.freeze(out);
}

const same = (text: string) => text;

/**
 * Quantities kept verbatim, but only those that parse: the apiserver validates them, so a bad one
 * means a broken source, and one bad node must not make every query over all nodes fail.
 */
function quantityMap(value: unknown): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(obj(value))) {
    if (typeof v !== "string") continue;
    try {
      parseQuantity(v);
      out[k] = v;
    } catch {
      // dropped: see above
    }
  }
  return Object.freeze(out);
}

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
}

/**
 * Strips a v1 Node to a {@link CachedNode}. Missing fields become empty values, never undefined.
 * The texts that nodes repeat (label keys and values, annotation keys, condition types,
 * reasons and messages, versions, quantities) are shared: JSON.parse gives every node its own
 * copies, which made a cached node larger than its JSON.
 */
export function stripNode(cluster: string, raw: unknown, interner: Interner = sharedInterner): CachedNode {
  const intern = <S extends string | undefined>(text: S): S => interner.string(text);
  const node = obj(raw);
  const metadata = obj(node.metadata);
  const spec = obj(node.spec);
  const status = obj(node.status);
  const info = obj(status.nodeInfo);

  const taints: Taint[] = [];
  for (const t of arr(spec.taints)) {
    const taint = obj(t);
    const key = intern(str(taint.key));
    const effect = intern(str(taint.effect));
    if (key === undefined || effect === undefined) continue;
    taints.push(Object.freeze({ key, ...optional("value", intern(str(taint.value))), effect, ...optional("timeAdded", str(taint.timeAdded)) }));
  }

  const conditions: NodeCondition[] = [];
  for (const c of arr(status.conditions)) {
    const condition = obj(c);
    const type = intern(str(condition.type));
    const conditionStatus = intern(str(condition.status));
    if (type === undefined || conditionStatus === undefined) continue;
    conditions.push(
      Object.freeze({
        type,
        status: conditionStatus,
        ...optional("reason", intern(str(condition.reason))),
        ...optional("message", intern(str(condition.message))),
        ...optional("lastHeartbeatTime", str(condition.lastHeartbeatTime)),
        ...optional("lastTransitionTime", str(condition.lastTransitionTime)),
      }),
    );
  }

  const addresses: { type: string; address: string }[] = [];
  for (const a of arr(status.addresses)) {
    const address = obj(a);
    const type = intern(str(address.type));
    const value = str(address.address);
    if (type !== undefined && value !== undefined) addresses.push(Object.freeze({ type, address: value }));
  }

  const nodeInfo: NodeInfo = Object.freeze({
    kubeletVersion: intern(str(info.kubeletVersion)) ?? "",
    containerRuntimeVersion: intern(str(info.containerRuntimeVersion)) ?? "",
    osImage: intern(str(info.osImage)) ?? "",
    kernelVersion: intern(str(info.kernelVersion)) ?? "",
    operatingSystem: intern(str(info.operatingSystem)) ?? "",
    architecture: intern(str(info.architecture)) ?? "",
    ...optional("bootID", str(info.bootID)),
  });

  return Object.freeze({
    cluster,
    name: str(metadata.name) ?? "",
    uid: str(metadata.uid) ?? "",
    resourceVersion: str(metadata.resourceVersion) ?? "",
    creationTimestamp: str(metadata.creationTimestamp) ?? "",
    labels: stringMap(metadata.labels, intern, intern),
    // Keys only: annotations' values are often the node's own (addresses, controllers' JSON).
    annotations: stringMap(metadata.annotations, intern),
    taints: Object.freeze(taints),
    unschedulable: spec.unschedulable === true,
    conditions: Object.freeze(conditions),
    addresses: Object.freeze(addresses),
    nodeInfo,
    capacity: interner.map(quantityMap(status.capacity)),
    allocatable: interner.map(quantityMap(status.allocatable)),
    details: stripNodeDetails(spec, status, interner),
  });
}

/** One interner for every cluster's pods: equal label sets and request shapes are shared. */
export const sharedInterner = new Interner();

/** A cache's key for a raw object: namespace/name, or the name of a cluster-scoped one. */
export function keyOf(raw: Record<string, any>): string {
  const { namespace, name } = raw.metadata ?? {};
  return namespace ? `${namespace}/${name}` : name;
}

const MIRROR_ANNOTATION = "kubernetes.io/config.mirror";

/** Strips a v1 Pod to a {@link CachedPod}, computing its effective requests and limits. */
export function stripPod(cluster: string, raw: unknown, interner: Interner = sharedInterner): CachedPod {
  const pod = obj(raw);
  const metadata = obj(pod.metadata);
  const spec = obj(pod.spec);
  const status = obj(pod.status);

  // metav1.GetControllerOf: the first ownerReference with controller: true.
  const controller = arr(metadata.ownerReferences)
    .map(obj)
    .find((ref) => ref.controller === true);
  const ownerKind = controller ? str(controller.kind) : undefined;
  const ownerName = controller ? str(controller.name) : undefined;

  const annotations = obj(metadata.annotations);
  const grace = spec.terminationGracePeriodSeconds;
  const deletionTimestamp = str(metadata.deletionTimestamp);
  const { requests, limits } = podRequestsAndLimits(spec);

  // Every pod gets the same properties in the same order: one hidden class for 150,000 objects.
  return Object.freeze({
    cluster,
    namespace: interner.string(str(metadata.namespace) ?? ""),
    name: str(metadata.name) ?? "",
    uid: str(metadata.uid) ?? "",
    resourceVersion: str(metadata.resourceVersion) ?? "",
    nodeName: interner.string(str(spec.nodeName) ?? ""),
    phase: interner.string(str(status.phase) ?? ""),
    labels: interner.map(stringMap(metadata.labels)),
    ownerKind: interner.string(ownerKind),
    ownerName: interner.string(ownerName),
    daemonSet: ownerKind === "DaemonSet",
    // kubectl drain checks only that the annotation exists, whatever its value.
    mirror: Object.hasOwn(annotations, MIRROR_ANNOTATION),
    emptyDir: arr(spec.volumes).some((v) => {
      const emptyDir = obj(v).emptyDir;
      return typeof emptyDir === "object" && emptyDir !== null;
    }),
    deletionTimestamp,
    terminationGracePeriodSeconds: typeof grace === "number" && Number.isFinite(grace) ? grace : undefined,
    requests: interner.map(requests),
    limits: interner.map(limits),
    // Not interned: nearly every pod has its own (138,175 distinct among 150,077 simulated pods).
    creationTimestamp: str(metadata.creationTimestamp) ?? "",
    noExecuteTolerations: interner.map(evictionTolerations(spec.tolerations)),
  });
}

/** The taints whose NoExecute effect the node lifecycle controller sets on a node that is not Ready. */
export const EVICTION_TAINT_KEYS = ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"] as const;

/** A toleration as the API stores it: an operator left out is Equal. */
function asToleration(t: Json): Toleration {
  return { key: str(t.key) ?? "", operator: str(t.operator) === "Exists" ? "Exists" : "Equal", value: str(t.value) ?? "", effect: str(t.effect) ?? "" };
}

/**
 * Seconds the pod tolerates each eviction taint, as the taint eviction controller reads them
 * (v1helper.GetMatchingTolerations, then getMinTolerationTime): the first toleration that
 * tolerates the taint is used; no tolerationSeconds is forever, a negative one is zero.
 */
function evictionTolerations(tolerations: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  for (const key of EVICTION_TAINT_KEYS) {
    const taint = { key, effect: "NoExecute" };
    const used = arr(tolerations)
      .map(obj)
      .find((t) => toleratesTaint(asToleration(t), taint));
    if (!used) continue;
    const seconds = used.tolerationSeconds;
    out[key] = typeof seconds === "number" && Number.isFinite(seconds) ? Math.max(0, Math.trunc(seconds)) : TOLERATES_FOREVER;
  }
  return out;
}

// ---- requests and limits (k8s.io/component-helpers/resource) ----

/** Exact amounts in nano-units, so sums and maxima behave like Go's Quantity arithmetic. */
type Nanos = Map<string, bigint>;

/**
 * Pods repeat a few dozen quantity texts ("100m", "128Mi"): each is parsed once, and a text
 * that does not parse is remembered as null. Bounded like the interner: past the limit it
 * starts afresh.
 */
const parsedNanos = new Map<string, bigint | null>();
const PARSED_NANOS_LIMIT = 10_000;

function nanosOfText(text: string): bigint | null {
  let nanos = parsedNanos.get(text);
  if (nanos !== undefined) return nanos;
  try {
    nanos = parseQuantity(text).nanos;
  } catch {
    nanos = null;
  }
  if (parsedNanos.size >= PARSED_NANOS_LIMIT) parsedNanos.clear();
  parsedNanos.set(text, nanos);
  return nanos;
}

function nanosOf(list: unknown): Nanos {
  const out: Nanos = new Map();
  for (const [name, value] of Object.entries(obj(list))) {
    if (typeof value !== "string" && typeof value !== "number") continue;
    const nanos = nanosOfText(String(value));
    // The apiserver rejects malformed quantities; a source that sends one loses only that entry.
    if (nanos !== null) out.set(name, nanos);
  }
  return out;
}

function addInto(list: Nanos, more: Nanos): void {
  for (const [name, q] of more) list.set(name, (list.get(name) ?? 0n) + q);
}

function maxInto(list: Nanos, more: Nanos): void {
  for (const [name, q] of more) {
    const current = list.get(name);
    if (current === undefined || q > current) list.set(name, q);
  }
}

type Kind = "requests" | "limits";

function isRestartable(container: Json): boolean {
  return container.restartPolicy === "Always";
}

/** aggregateContainerResourcesByFn with spec resources only. */
function aggregateContainers(spec: Json, kind: Kind): Nanos {
  const result: Nanos = new Map();
  for (const c of arr(spec.containers)) addInto(result, nanosOf(obj(obj(c).resources)[kind]));

  const sidecars: Nanos = new Map();
  const initMax: Nanos = new Map();
  for (const c of arr(spec.initContainers)) {
    const container = obj(c);
    const own = nanosOf(obj(container.resources)[kind]);
    if (isRestartable(container)) {
      addInto(result, own);
      addInto(sidecars, own);
      maxInto(initMax, sidecars);
    } else {
      const combined: Nanos = new Map(own);
      addInto(combined, sidecars);
      maxInto(initMax, combined);
    }
  }
  maxInto(result, initMax);
  return result;
}

function isPodLevelResource(name: string): boolean {
  return name === "cpu" || name === "memory" || name.startsWith("hugepages-");
}

function hasPodLevel(list: unknown): boolean {
  return Object.keys(obj(list)).some(isPodLevelResource);
}

function podRequestsAndLimits(spec: Json): { requests: ResourceAmounts; limits: ResourceAmounts } {
  const podLevel = obj(spec.resources);
  const overhead = nanosOf(spec.overhead);

  const requests = aggregateContainers(spec, "requests");
  if (hasPodLevel(podLevel.requests)) {
    for (const [name, q] of nanosOf(podLevel.requests)) if (isPodLevelResource(name)) requests.set(name, q);
  }
  addInto(requests, overhead);

  const limits = aggregateContainers(spec, "limits");
  // PodLimits applies pod-level limits when pod-level requests *or* limits are set.
  if (hasPodLevel(podLevel.requests) || hasPodLevel(podLevel.limits)) {
    for (const [name, q] of nanosOf(podLevel.limits)) if (isPodLevelResource(name)) limits.set(name, q);
  }
  for (const [name, q] of overhead) {
    const limit = limits.get(name);
    if (limit !== undefined && limit !== 0n) limits.set(name, limit + q);
  }

  return { requests: toAmounts(requests), limits: toAmounts(limits) };
}

const NANOS_PER_MILLI = 1_000_000n;
const NANOS_PER_UNIT = 1_000_000_000n;

// Go's MilliValue / Value round away from zero.
function divideAwayFromZero(n: bigint, d: bigint): number {
  const q = n / d;
  if (q * d === n) return Number(q);
  return Number(n < 0n ? q - 1n : q + 1n);
}

/** cpu in millicores (MilliValue), everything else in its unit (Value), as model.ts defines. */
function toAmounts(list: Nanos): ResourceAmounts {
  const out: Record<string, number> = {};
  for (const [name, q] of list) {
    out[name] = divideAwayFromZero(q, name === "cpu" ? NANOS_PER_MILLI : NANOS_PER_UNIT);
  }
  return Object.freeze(out);
}
