/**
 * Capacity math for the Node fields capacity, allocatable, requests, limits and usage:
 * pure functions over the cached shapes, matching what `kubectl describe node` and
 * `kubectl top node` print.
 */

import type { CachedPod, NodeUsageSample, ResourceAmounts } from "../cluster/model.js";
import type { NodeUsage, Resources } from "../graphql/generated/resolvers-types.js";
import { formatBytes, formatMillicores, parseQuantity } from "../k8s/quantity.js";

/** Totals over a node's pods, as `kubectl describe node` shows them under "Allocated resources". */
export interface PodResourceTotals {
  requests: ResourceAmounts;
  limits: ResourceAmounts;
  /** The "Non-terminated Pods" count. */
  podCount: number;
}

/** A pod that still holds its resources: kubectl lists pods with phase!=Succeeded,phase!=Failed. */
export function isNonTerminated(pod: CachedPod): boolean {
  return pod.phase !== "Succeeded" && pod.phase !== "Failed";
}

/**
 * Sums the effective requests and limits (already computed per pod by stripPod) of the pods
 * that are not Succeeded or Failed. A resource appears in the result only if some counted pod
 * has it. Pending pods bound to the node count, as in kubectl.
 *
 * Each pod's amounts were rounded up to whole millicores / units when stripped, where kubectl
 * sums exact quantities and rounds once; the two differ only for sub-millicore cpu or
 * fractional-byte amounts, which no real workload uses.
 */
export function sumPodResources(pods: Iterable<CachedPod>): PodResourceTotals {
  const requests: Record<string, number> = {};
  const limits: Record<string, number> = {};
  let podCount = 0;
  for (const pod of pods) {
    if (!isNonTerminated(pod)) continue;
    podCount++;
    for (const name in pod.requests) requests[name] = (requests[name] ?? 0) + pod.requests[name]!;
    for (const name in pod.limits) limits[name] = (limits[name] ?? 0) + pod.limits[name]!;
  }
  return { requests, limits, podCount };
}

/** Resources measured in bytes, which canonical formatting writes with binary suffixes. */
function isByteResource(name: string): boolean {
  return name === "memory" || name === "ephemeral-storage" || name === "storage" || name.startsWith("hugepages-");
}

function canonical(name: string, amount: number): string {
  if (name === "cpu") return formatMillicores(amount);
  if (isByteResource(name)) return formatBytes(amount);
  return String(amount);
}

/**
 * The `Resources` view of either form of amounts:
 *
 * - strings as Kubernetes wrote them (a node's capacity or allocatable): `quantities` keeps the
 *   text verbatim; numbers are Go's MilliValue (cpu) and Value (others), both rounded up;
 * - numbers in base units (sums from {@link sumPodResources}, a pod's requests): `quantities`
 *   holds canonical text, "1500m" / "2" for cpu, "512Mi" / "1000" for byte resources, plain
 *   integers for counts.
 *
 * `quantities` is sorted by key (code-unit order). Missing cpu or memory reads 0; missing pods or
 * ephemeral-storage reads null (pod sums never have a pods entry: containers cannot request it).
 * @throws QuantityParseError for a string that is not a quantity; stripNode keeps only valid ones.
 */
export function resourcesView(amounts: ResourceAmounts | Readonly<Record<string, string>>): Resources {
  const numbers: Record<string, number> = {};
  const quantities: { key: string; value: string }[] = [];
  for (const [key, raw] of Object.entries(amounts)) {
    if (typeof raw === "string") {
      const q = parseQuantity(raw);
      numbers[key] = key === "cpu" ? q.milliValue() : q.value();
      quantities.push({ key, value: raw });
    } else {
      numbers[key] = raw;
      quantities.push({ key, value: canonical(key, raw) });
    }
  }
  quantities.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return {
    cpuMillicores: numbers.cpu ?? 0,
    memoryBytes: numbers.memory ?? 0,
    pods: numbers.pods ?? null,
    ephemeralStorageBytes: numbers["ephemeral-storage"] ?? null,
    quantities,
    extended: quantities.filter((q) => isExtendedResource(q.key)).map((q) => ({ name: q.key, value: numbers[q.key]!, quantity: q.value })),
  };
}

const STANDARD_RESOURCES = new Set(["cpu", "memory", "pods", "ephemeral-storage"]);

/**
 * Every resource beyond cpu, memory, pods and ephemeral-storage: device plugins' (nvidia.com/gpu),
 * hugepages-*, and any other a node or pod names. Sorted by name, as `quantities` is.
 */
export function isExtendedResource(name: string): boolean {
  return !STANDARD_RESOURCES.has(name);
}

/**
 * The `NodeUsage` view of a metrics sample, with percentages of allocatable computed as
 * `kubectl top node` computes them: float64(usage.MilliValue()) / float64(allocatable.MilliValue()) * 100.
 *
 * kubectl then truncates to an integer for display; we return the exact float, not rounded, so
 * `Math.trunc(cpuPercent)` is precisely the number kubectl prints. Memory goes through milli-units
 * too (bytes * 1000), as kubectl does, so even the last bit of the float agrees.
 *
 * Where kubectl prints no percentage (allocatable lacks the resource) or would divide by zero,
 * the contract still needs a Float, so the percentage is 0.
 */
export function usageView(sample: NodeUsageSample, allocatable: Readonly<Record<string, string>>): NodeUsage {
  return {
    cpuMillicores: sample.cpuMillicores,
    memoryBytes: sample.memoryBytes,
    cpuPercent: percentOf(sample.cpuMillicores, allocatable.cpu),
    memoryPercent: percentOf(sample.memoryBytes * 1000, allocatable.memory),
    timestamp: new Date(sample.timestamp),
  };
}

function percentOf(usageMilli: number, allocatableText: string | undefined): number {
  if (allocatableText === undefined) return 0;
  let allocatableMilli: number;
  try {
    allocatableMilli = parseQuantity(allocatableText).milliValue();
  } catch {
    return 0;
  }
  if (allocatableMilli === 0) return 0;
  return (usageMilli / allocatableMilli) * 100;
}
