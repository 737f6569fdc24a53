/**
 * Per-kind rules of the write path, as the apiserver's registry strategies
 * have them: defaults filled in on create, and the few validations clients rely
 * on (422 Invalid). A new stored kind adds its rules here.
 */
import type { KObject } from "../store.js";
import { labelKeyErrors, labelValueErrors } from "../../k8s/label-validation.js";
import { invalid, type StatusCause } from "./status.js";
import type { ResourceDef } from "./resources.js";

type Obj = Record<string, any>;

/** Defaults the apiserver (and its admission) fills in on create. */
export function prepareForCreate(def: ResourceDef, obj: KObject): void {
  if (def.kind === "Pod") {
    const spec = (obj.spec ?? {}) as Obj;
    spec.restartPolicy ??= "Always";
    spec.terminationGracePeriodSeconds ??= 30;
    spec.schedulerName ??= "default-scheduler";
    spec.dnsPolicy ??= "ClusterFirst";
    obj.spec = spec;
    obj.status = { phase: "Pending", qosClass: "BestEffort" };
  }
}

/** Throws 422 Invalid for what the apiserver's validation would refuse (the part clients rely on). */
export function validate(def: ResourceDef, obj: KObject): void {
  // ValidateObjectMeta's labels, for every kind: kubectl label checks values, never keys.
  const labelCauses: StatusCause[] = [];
  for (const [key, value] of Object.entries((obj.metadata.labels ?? {}) as Record<string, string>)) {
    for (const message of labelKeyErrors(key)) labelCauses.push({ field: "metadata.labels", message: `Invalid value: ${JSON.stringify(key)}: ${message}` });
    for (const message of labelValueErrors(String(value))) labelCauses.push({ field: "metadata.labels", message: `Invalid value: ${JSON.stringify(value)}: ${message}` });
  }
  if (labelCauses.length) throw invalid(def.kind, def.group, obj.metadata.name, labelCauses);
  if (def.kind === "Node") {
    const conds = ((obj.status as Obj | undefined)?.conditions ?? []) as Obj[];
    for (const [i, c] of conds.entries()) {
      if (!["True", "False", "Unknown"].includes(c.status)) {
        throw invalid("Node", "", obj.metadata.name, [{ field: `status.conditions[${i}].status`, message: `Unsupported value: "${c.status}": supported values: "False", "True", "Unknown"`, reason: "FieldValueNotSupported" }]);
      }
    }
  }
  if (def.kind === "Lease") {
    const d = (obj.spec as Obj | undefined)?.leaseDurationSeconds;
    if (d !== undefined && !(d > 0)) throw invalid("Lease", "coordination.k8s.io", obj.metadata.name, [{ field: "spec.leaseDurationSeconds", message: "Invalid value: must be greater than 0" }]);
  }
}
