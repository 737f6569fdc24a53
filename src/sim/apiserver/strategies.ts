/**
 * Per-kind rules of the write path, as the apiserver's registry strategies
 * have them: defaults filled in on create, and the few validations clients rely
 * on (422 Invalid). A new stored kind adds its rules here.
 */
import type { KObject } from "../store.js";
import { invalid } from "./status.js";
import { objectMetaCauses } from "./object-meta.js";
import type { ResourceDef } from "./resources.js";
import type { ObjectStore } from "../store.js";
import { R } from "../storage-names.js";

type Obj = Record<string, any>;

/** Defaults the apiserver (and its admission) fills in on create. */
export function prepareForCreate(def: ResourceDef, obj: KObject, store?: ObjectStore): void {
  decodeSecret(def, obj);
  if (def.kind === "Namespace") {
    obj.metadata.labels = { ...(obj.metadata.labels ?? {}), "kubernetes.io/metadata.name": obj.metadata.name };
    obj.spec = { finalizers: ["kubernetes"], ...((obj.spec as Obj | undefined) ?? {}) };
    obj.status = { phase: "Active" };
  }
  if (def.kind === "Service" && store) defaultService(obj, store);
  if (def.kind === "PersistentVolumeClaim") {
    const spec = (obj.spec ?? {}) as Obj;
    spec.volumeMode ??= "Filesystem";
    obj.spec = spec;
    obj.status = { phase: "Pending" };
  }
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

/** What every write of a kind goes through before validation (create and update alike). */
export function prepareForUpdate(def: ResourceDef, obj: KObject, old: KObject): void {
  decodeSecret(def, obj);
  if (def.kind === "Service") {
    // The cluster IP is allocated once; an update that leaves it out keeps it.
    const spec = (obj.spec ?? {}) as Obj;
    const was = (old.spec ?? {}) as Obj;
    spec.clusterIP ??= was.clusterIP;
    spec.clusterIPs ??= was.clusterIPs;
    obj.spec = spec;
    if (spec.clusterIP !== was.clusterIP)
      throw invalid("Service", "", obj.metadata.name, [{ field: "spec.clusterIPs[0]", message: `Invalid value: ${JSON.stringify(spec.clusterIP)}: may not change once set` }]);
  }
  if (def.kind === "RoleBinding" || def.kind === "ClusterRoleBinding") {
    if (JSON.stringify((obj as Obj).roleRef) !== JSON.stringify((old as Obj).roleRef)) {
      // The value is printed as Go's %#v of the internal type prints it.
      const r = ((obj as Obj).roleRef ?? {}) as Obj;
      const value = `rbac.RoleRef{APIGroup:${JSON.stringify(r.apiGroup ?? "")}, Kind:${JSON.stringify(r.kind ?? "")}, Name:${JSON.stringify(r.name ?? "")}}`;
      throw invalid(def.kind, def.group, obj.metadata.name, [{ field: "roleRef", message: `Invalid value: ${value}: cannot change roleRef` }]);
    }
  }
}

/** A Secret's stringData is written into data (base64), as the apiserver converts it on every write. */
function decodeSecret(def: ResourceDef, obj: KObject): void {
  if (def.kind !== "Secret") return;
  const o = obj as Obj;
  o.type ??= "Opaque";
  if (o.stringData && typeof o.stringData === "object") {
    o.data = { ...(o.data ?? {}) };
    for (const [k, v] of Object.entries(o.stringData as Record<string, string>)) o.data[k] = Buffer.from(String(v), "utf8").toString("base64");
  }
  delete o.stringData;
}

/** ClusterIP Service defaults, with an address from 10.96.0.0/12 no other Service holds. */
function defaultService(obj: KObject, store: ObjectStore): void {
  const spec = (obj.spec ?? {}) as Obj;
  spec.type ??= "ClusterIP";
  spec.sessionAffinity ??= "None";
  spec.internalTrafficPolicy ??= "Cluster";
  spec.ipFamilies ??= ["IPv4"];
  spec.ipFamilyPolicy ??= "SingleStack";
  spec.ports = ((spec.ports ?? []) as Obj[]).map((p) => ({ protocol: "TCP", ...p, targetPort: p.targetPort ?? p.port }));
  if (spec.clusterIP === undefined || spec.clusterIP === "") {
    const taken = new Set<string>();
    for (const e of store.list(R.services)) taken.add(String(((e.obj.spec ?? {}) as Obj).clusterIP));
    let n = 10;
    while (taken.has(`10.96.${n >> 8}.${n & 255}`)) n++;
    spec.clusterIP = `10.96.${n >> 8}.${n & 255}`;
  }
  spec.clusterIPs ??= [spec.clusterIP];
  obj.spec = spec;
  obj.status = { loadBalancer: {} };
}

/** Throws 422 Invalid for what the apiserver's validation would refuse (the part clients rely on). */
export function validate(def: ResourceDef, obj: KObject): void {
  // ValidateObjectMeta, for every kind (./object-meta.ts).
  const metaCauses = objectMetaCauses(def, obj);
  if (metaCauses.length) throw invalid(def.kind, def.group, obj.metadata?.name ?? "", metaCauses);
  if (def.kind === "Node") {
    const conds = ((obj.status as Obj | undefined)?.conditions ?? []) as Obj[];
    for (const [i, c] of conds.entries()) {
      if (!["True", "False", "Unknown"].includes(c.status)) {
        throw invalid("Node", "", obj.metadata.name, [
          { field: `status.conditions[${i}].status`, message: `Unsupported value: "${c.status}": supported values: "False", "True", "Unknown"`, reason: "FieldValueNotSupported" },
        ]);
      }
    }
  }
  if (def.kind === "RoleBinding" || def.kind === "ClusterRoleBinding") {
    const ref = (obj as Obj).roleRef as Obj | undefined;
    if (!ref?.name) throw invalid(def.kind, def.group, obj.metadata.name, [{ field: "roleRef.name", message: "Required value", reason: "FieldValueRequired" }]);
    const kinds = def.kind === "RoleBinding" ? ["Role", "ClusterRole"] : ["ClusterRole"];
    if (!kinds.includes(ref.kind))
      throw invalid(def.kind, def.group, obj.metadata.name, [
        { field: "roleRef.kind", message: `Unsupported value: ${JSON.stringify(ref.kind)}: supported values: ${kinds.map((k) => JSON.stringify(k)).join(", ")}`, reason: "FieldValueNotSupported" },
      ]);
  }
  if (def.kind === "Lease") {
    const d = (obj.spec as Obj | undefined)?.leaseDurationSeconds;
    if (d !== undefined && !(d > 0)) throw invalid("Lease", "coordination.k8s.io", obj.metadata.name, [{ field: "spec.leaseDurationSeconds", message: "Invalid value: must be greater than 0" }]);
  }
}
