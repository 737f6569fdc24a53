/**
 * The field selectors each resource supports, as the apiserver registers them
 * (GetAttrs / field label conversion): metadata.name and metadata.namespace
 * everywhere, plus the kind-specific fields kubectl and controllers use.
 */
import type { KObject } from "../store.js";
import { badRequest } from "./status.js";

type Obj = Record<string, any>;
type Getter = (obj: KObject) => string | undefined;

const common: Record<string, Getter> = {
  "metadata.name": (o) => o.metadata.name,
  "metadata.namespace": (o) => o.metadata.namespace ?? "",
};

const BY_RESOURCE: Record<string, Record<string, Getter>> = {
  pods: {
    "spec.nodeName": (o) => (o.spec as Obj)?.nodeName ?? "",
    "spec.restartPolicy": (o) => (o.spec as Obj)?.restartPolicy,
    "spec.schedulerName": (o) => (o.spec as Obj)?.schedulerName,
    "spec.serviceAccountName": (o) => (o.spec as Obj)?.serviceAccountName,
    "spec.hostNetwork": (o) => String(Boolean((o.spec as Obj)?.hostNetwork)),
    "status.phase": (o) => (o.status as Obj)?.phase ?? "",
    "status.podIP": (o) => (o.status as Obj)?.podIP ?? "",
    "status.nominatedNodeName": (o) => (o.status as Obj)?.nominatedNodeName ?? "",
  },
  nodes: {
    "spec.unschedulable": (o) => String(Boolean((o.spec as Obj)?.unschedulable)),
  },
  events: {
    "involvedObject.kind": (o) => (o as Obj).involvedObject?.kind ?? "",
    "involvedObject.namespace": (o) => (o as Obj).involvedObject?.namespace ?? "",
    "involvedObject.name": (o) => (o as Obj).involvedObject?.name ?? "",
    "involvedObject.uid": (o) => (o as Obj).involvedObject?.uid ?? "",
    "involvedObject.apiVersion": (o) => (o as Obj).involvedObject?.apiVersion ?? "",
    "involvedObject.resourceVersion": (o) => (o as Obj).involvedObject?.resourceVersion ?? "",
    "involvedObject.fieldPath": (o) => (o as Obj).involvedObject?.fieldPath ?? "",
    reason: (o) => (o as Obj).reason ?? "",
    reportingComponent: (o) => (o as Obj).reportingComponent ?? "",
    source: (o) => (o as Obj).source?.component ?? "",
    type: (o) => (o as Obj).type ?? "",
  },
  namespaces: { "status.phase": (o) => (o.status as Obj)?.phase ?? "" },
};

/** A getter for `fieldSelector` matching; throws 400 for a field the resource does not support. */
export function fieldGetter(resource: string, fields: string[], kind: string): (obj: KObject) => (field: string) => string | undefined {
  const table = { ...common, ...(BY_RESOURCE[resource] ?? {}) };
  for (const f of fields) {
    if (!table[f]) throw badRequest(`field label not supported: ${f}`);
  }
  void kind;
  return (obj) => (field) => table[field]!(obj);
}
