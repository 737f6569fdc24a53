/**
 * "How many more pods of this shape fit on this node": the scheduler's resource fit
 * (NodeResourcesFit) and taint filter (TaintToleration) applied to the node's real free space,
 * without calling the scheduler. Pure functions; the capacity report sums them node by node.
 */

import type { Taint } from "../cluster/model.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import type { PodShapeInput } from "../graphql/generated/resolvers-types.js";
import { labelKeyErrors } from "../k8s/label-validation.js";
import { parseQuantity, QuantityParseError } from "../k8s/quantity.js";

export type { PodShapeInput, TolerationInput } from "../graphql/generated/resolvers-types.js";

/** A toleration as Kubernetes stores it: empty strings where nothing was given. */
export interface Toleration {
  key: string;
  operator: "Equal" | "Exists";
  value: string;
  effect: string;
}

/** A pod shape, checked and in base units. */
export interface PodShape {
  cpuMillicores: number;
  memoryBytes: number;
  tolerations: readonly Toleration[];
  /** Extended resources requested, by name, in base units (a count, bytes for hugepages), as written. */
  extended?: readonly { name: string; value: number; quantity: string }[];
}

/** A node's room for pods: allocatable minus the requests (and count) of its non-terminated pods. */
export interface FreeSpace {
  cpuMillicores: number;
  memoryBytes: number;
  pods: number;
  /** Free amount of each extended resource the node has; one it lacks has none free. */
  extended?: Readonly<Record<string, number>>;
}

const STANDARD_RESOURCES = new Set(["cpu", "memory", "pods", "ephemeral-storage"]);
/** A resource name as apimachinery's IsQualifiedName sees it: [prefix/]name, the name at most 63 characters. */
const QUALIFIED_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

const EFFECTS = new Set(["NoSchedule", "PreferNoSchedule", "NoExecute"]);

/**
 * Checks a PodShapeInput as the apiserver checks a pod's requests and tolerations
 * (ValidateTolerations): quantities must parse and not be negative; a toleration's operator is
 * Equal (the default) or Exists, an empty key needs Exists, Exists takes no value, and the
 * effect is one of the three taint effects or empty (all effects).
 * @throws AppError BAD_USER_INPUT naming the field at fault.
 */
export function compilePodShape(input: PodShapeInput): PodShape {
  const cpuMillicores = quantity("podShape.cpu", input.cpu, (q) => q.milliValue());
  const memoryBytes = quantity("podShape.memory", input.memory, (q) => q.value());
  const tolerations = (input.tolerations ?? []).map((t, i): Toleration => {
    const where = `podShape.tolerations[${i}]`;
    const key = t.key ?? "";
    const operator = t.operator == null || t.operator === "" ? "Equal" : t.operator;
    const value = t.value ?? "";
    const effect = t.effect ?? "";
    if (operator !== "Equal" && operator !== "Exists") bad(`${where}.operator: "${operator}" is not Equal or Exists`);
    if (key !== "") {
      const errors = labelKeyErrors(key);
      if (errors.length) bad(`${where}.key "${key}": ${errors.join("; ")}`);
    } else if (operator !== "Exists") {
      bad(`${where}: an empty key needs operator Exists`);
    }
    if (operator === "Exists" && value !== "") bad(`${where}: operator Exists takes no value`);
    if (effect !== "" && !EFFECTS.has(effect)) bad(`${where}.effect: "${effect}" is not NoSchedule, PreferNoSchedule or NoExecute`);
    return { key, operator, value, effect };
  });
  const extended = compileExtended(input.extended ?? []);
  return { cpuMillicores, memoryBytes, tolerations, ...(extended.length ? { extended } : {}) };
}

/**
 * Extended resources as ValidatePodSpec checks a container's requests: a qualified name that is
 * not a standard resource, named once, a quantity that is not negative and, but for hugepages,
 * whole (the apiserver refuses fractional extended resources).
 */
function compileExtended(list: readonly { name: string; quantity: string }[]): NonNullable<PodShape["extended"]> {
  const seen = new Set<string>();
  return list.map(({ name, quantity: text }, i) => {
    const where = `podShape.extended[${i}]`;
    if (STANDARD_RESOURCES.has(name)) bad(`${where}.name: "${name}" is not an extended resource (cpu and memory have fields of their own)`);
    if (name.length > 253 || !QUALIFIED_NAME.test(name)) bad(`${where}.name: "${name}" is not a resource name (e.g. nvidia.com/gpu)`);
    if (seen.has(name)) bad(`${where}.name: "${name}" is named twice`);
    seen.add(name);
    const value = quantity(`${where}.quantity`, text, (q) => q.value());
    if (!name.startsWith("hugepages-") && parseQuantity(text).milliValue() % 1000 !== 0) bad(`${where}.quantity: "${text}" must be a whole number for ${name}`);
    return { name, value, quantity: text };
  });
}

function quantity(field: string, text: string, unit: (q: ReturnType<typeof parseQuantity>) => number): number {
  let amount: number;
  try {
    amount = unit(parseQuantity(text));
  } catch (error) {
    if (error instanceof QuantityParseError) bad(`${field}: "${text}" is not a Kubernetes quantity (e.g. "500m", "2", "512Mi")`);
    throw error;
  }
  if (amount < 0) bad(`${field}: "${text}" must not be negative`);
  return amount;
}

function bad(message: string): never {
  throw new AppError(ErrorCode.BAD_USER_INPUT, message);
}

/** Toleration.ToleratesTaint of k8s.io/api/core/v1, for a validated toleration. */
export function toleratesTaint(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect !== "" && toleration.effect !== taint.effect) return false;
  if (toleration.key !== "" && toleration.key !== taint.key) return false;
  return toleration.operator === "Exists" || toleration.value === (taint.value ?? "");
}

/**
 * Whether the scheduler's TaintToleration filter lets a pod with these tolerations onto a node
 * with these taints: every NoSchedule and NoExecute taint must be tolerated; PreferNoSchedule
 * only lowers a node's score.
 */
export function toleratesNode(tolerations: readonly Toleration[], taints: readonly Taint[]): boolean {
  for (const taint of taints) {
    if (taint.effect !== "NoSchedule" && taint.effect !== "NoExecute") continue;
    let tolerated = false;
    for (const toleration of tolerations) {
      if (toleratesTaint(toleration, taint)) {
        tolerated = true;
        break;
      }
    }
    if (!tolerated) return false;
  }
  return true;
}

/**
 * Pods of the shape that fit into `free`, as NodeResourcesFit counts: each pod takes one pod slot
 * and its cpu, memory and extended requests; a resource the shape does not request (0) never
 * limits, and one it requests that the node lacks leaves no room.
 * Free space that is already negative (pods bound past allocatable) fits nothing.
 */
export function podsThatFit(free: FreeSpace, shape: Pick<PodShape, "cpuMillicores" | "memoryBytes" | "extended">): number {
  let fit = Math.max(0, free.pods);
  if (shape.cpuMillicores > 0) fit = Math.min(fit, Math.floor(Math.max(0, free.cpuMillicores) / shape.cpuMillicores));
  if (shape.memoryBytes > 0) fit = Math.min(fit, Math.floor(Math.max(0, free.memoryBytes) / shape.memoryBytes));
  for (const { name, value } of shape.extended ?? []) {
    if (value > 0) fit = Math.min(fit, Math.floor(Math.max(0, free.extended?.[name] ?? 0) / value));
  }
  return fit;
}
