/**
 * The resources the simulator serves and the discovery documents built from
 * them. One table drives routing, discovery and storage, so a resource listed
 * here is reachable everywhere or nowhere.
 */

export interface ResourceDef {
  group: string;
  /** Versions served; the first is the storage version. */
  versions: string[];
  resource: string;
  kind: string;
  singular: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  verbs: string[];
  subresources?: string[];
  /** Served by computation (metrics), not from the store. */
  virtual?: boolean;
  /** Another resource's objects shown in this one's shape (events.k8s.io Events are core Events). */
  view?: { storage: string; storedApiVersion: string; out(stored: Record<string, any>): Record<string, any>; in(served: Record<string, any>): Record<string, any> };
}

import { fromEventsV1, toEventsV1 } from "./events-v1.js";

const RW = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

export const RESOURCES: ResourceDef[] = [
  { group: "", versions: ["v1"], resource: "nodes", kind: "Node", singular: "node", namespaced: false, shortNames: ["no"], verbs: RW, subresources: ["status"] },
  { group: "", versions: ["v1"], resource: "pods", kind: "Pod", singular: "pod", namespaced: true, shortNames: ["po"], categories: ["all"], verbs: RW, subresources: ["status", "eviction", "log", "portforward"] },
  { group: "", versions: ["v1"], resource: "namespaces", kind: "Namespace", singular: "namespace", namespaced: false, shortNames: ["ns"], verbs: ["create", "delete", "get", "list", "patch", "update", "watch"], subresources: ["status"] },
  { group: "", versions: ["v1"], resource: "events", kind: "Event", singular: "event", namespaced: true, shortNames: ["ev"], verbs: RW },
  { group: "apps", versions: ["v1"], resource: "deployments", kind: "Deployment", singular: "deployment", namespaced: true, shortNames: ["deploy"], categories: ["all"], verbs: RW, subresources: ["status"] },
  { group: "apps", versions: ["v1"], resource: "replicasets", kind: "ReplicaSet", singular: "replicaset", namespaced: true, shortNames: ["rs"], categories: ["all"], verbs: RW, subresources: ["status"] },
  { group: "apps", versions: ["v1"], resource: "daemonsets", kind: "DaemonSet", singular: "daemonset", namespaced: true, shortNames: ["ds"], categories: ["all"], verbs: RW, subresources: ["status"] },
  { group: "policy", versions: ["v1", "v1beta1"], resource: "poddisruptionbudgets", kind: "PodDisruptionBudget", singular: "poddisruptionbudget", namespaced: true, shortNames: ["pdb"], verbs: RW, subresources: ["status"] },
  { group: "events.k8s.io", versions: ["v1"], resource: "events", kind: "Event", singular: "event", namespaced: true, shortNames: ["ev"], verbs: RW, view: { storage: "events", storedApiVersion: "v1", out: toEventsV1, in: fromEventsV1 } },
  { group: "coordination.k8s.io", versions: ["v1"], resource: "leases", kind: "Lease", singular: "lease", namespaced: true, verbs: RW },
  { group: "metrics.k8s.io", versions: ["v1beta1"], resource: "nodes", kind: "NodeMetrics", singular: "", namespaced: false, verbs: ["get", "list"], virtual: true },
  { group: "metrics.k8s.io", versions: ["v1beta1"], resource: "pods", kind: "PodMetrics", singular: "", namespaced: true, verbs: ["get", "list"], virtual: true },
  // What an application's manifests hold (stored, not run), and the RBAC kinds `sim --rbac` authorises by.
  { group: "", versions: ["v1"], resource: "serviceaccounts", kind: "ServiceAccount", singular: "serviceaccount", namespaced: true, shortNames: ["sa"], verbs: RW, subresources: ["token"] },
  { group: "", versions: ["v1"], resource: "secrets", kind: "Secret", singular: "secret", namespaced: true, verbs: RW },
  { group: "", versions: ["v1"], resource: "configmaps", kind: "ConfigMap", singular: "configmap", namespaced: true, shortNames: ["cm"], verbs: RW },
  { group: "", versions: ["v1"], resource: "services", kind: "Service", singular: "service", namespaced: true, shortNames: ["svc"], categories: ["all"], verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"], subresources: ["status"] },
  { group: "", versions: ["v1"], resource: "persistentvolumeclaims", kind: "PersistentVolumeClaim", singular: "persistentvolumeclaim", namespaced: true, shortNames: ["pvc"], verbs: RW, subresources: ["status"] },
  { group: "networking.k8s.io", versions: ["v1"], resource: "networkpolicies", kind: "NetworkPolicy", singular: "networkpolicy", namespaced: true, shortNames: ["netpol"], verbs: RW },
  { group: "rbac.authorization.k8s.io", versions: ["v1"], resource: "clusterroles", kind: "ClusterRole", singular: "clusterrole", namespaced: false, verbs: RW },
  { group: "rbac.authorization.k8s.io", versions: ["v1"], resource: "clusterrolebindings", kind: "ClusterRoleBinding", singular: "clusterrolebinding", namespaced: false, verbs: RW },
  { group: "rbac.authorization.k8s.io", versions: ["v1"], resource: "roles", kind: "Role", singular: "role", namespaced: true, verbs: RW },
  { group: "rbac.authorization.k8s.io", versions: ["v1"], resource: "rolebindings", kind: "RoleBinding", singular: "rolebinding", namespaced: true, verbs: RW },
  // Reviews: computed answers to a create, never stored (./reviews.ts).
  { group: "authentication.k8s.io", versions: ["v1"], resource: "selfsubjectreviews", kind: "SelfSubjectReview", singular: "selfsubjectreview", namespaced: false, verbs: ["create"], virtual: true },
  { group: "authentication.k8s.io", versions: ["v1"], resource: "tokenreviews", kind: "TokenReview", singular: "tokenreview", namespaced: false, verbs: ["create"], virtual: true },
  { group: "authorization.k8s.io", versions: ["v1"], resource: "localsubjectaccessreviews", kind: "LocalSubjectAccessReview", singular: "localsubjectaccessreview", namespaced: true, verbs: ["create"], virtual: true },
  { group: "authorization.k8s.io", versions: ["v1"], resource: "selfsubjectaccessreviews", kind: "SelfSubjectAccessReview", singular: "selfsubjectaccessreview", namespaced: false, verbs: ["create"], virtual: true },
  { group: "authorization.k8s.io", versions: ["v1"], resource: "selfsubjectrulesreviews", kind: "SelfSubjectRulesReview", singular: "selfsubjectrulesreview", namespaced: false, verbs: ["create"], virtual: true },
  { group: "authorization.k8s.io", versions: ["v1"], resource: "subjectaccessreviews", kind: "SubjectAccessReview", singular: "subjectaccessreview", namespaced: false, verbs: ["create"], virtual: true },
];

/** The group order the apiserver reports (core first, then by priority). */
const GROUP_ORDER = ["apps", "policy", "coordination.k8s.io", "metrics.k8s.io"];

/** Storage key of a resource: "nodes", "apps/deployments". */
export function storageName(def: ResourceDef): string {
  if (def.view) return def.view.storage;
  return def.group ? `${def.group}/${def.resource}` : def.resource;
}

/** Find the definition a URL names. */
export function findResource(group: string, version: string, resource: string): ResourceDef | undefined {
  return RESOURCES.find((d) => d.group === group && d.resource === resource && d.versions.includes(version));
}

/** The apiVersion an object of `def` is stored with. */
export function storedApiVersion(def: ResourceDef): string {
  return def.view ? def.view.storedApiVersion : apiVersionOf(def.group, def.versions[0]!);
}

/** apiVersion string for a group and version. */
export function apiVersionOf(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

/** `GET /api`. */
export function apiVersions(serverAddress: string): object {
  return {
    kind: "APIVersions",
    versions: ["v1"],
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }],
  };
}

/** Every served group: GROUP_ORDER first, then any other group of RESOURCES in table order. */
function servedGroups(): string[] {
  return [...new Set([...GROUP_ORDER, ...RESOURCES.map((d) => d.group).filter(Boolean)])];
}

function groupEntry(group: string): object {
  const versions = [...new Set(RESOURCES.filter((d) => d.group === group).flatMap((d) => d.versions))];
  const gv = versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
  return { name: group, versions: gv, preferredVersion: gv[0] };
}

/** `GET /apis`. */
export function apiGroupList(): object {
  return { kind: "APIGroupList", apiVersion: "v1", groups: servedGroups().map(groupEntry) };
}

/** `GET /apis/{group}`. */
export function apiGroup(group: string): object | undefined {
  if (!servedGroups().includes(group)) return undefined;
  return { kind: "APIGroup", apiVersion: "v1", ...groupEntry(group) };
}

/** `GET /api/v1` or `GET /apis/{group}/{version}`. */
export function apiResourceList(group: string, version: string): object | undefined {
  const defs = RESOURCES.filter((d) => d.group === group && d.versions.includes(version));
  if (defs.length === 0) return undefined;
  const resources: object[] = [];
  for (const d of defs) {
    resources.push({
      name: d.resource,
      singularName: d.singular,
      namespaced: d.namespaced,
      kind: d.kind,
      verbs: d.verbs,
      ...(d.shortNames ? { shortNames: d.shortNames } : {}),
      ...(d.categories ? { categories: d.categories } : {}),
      ...(d.virtual ? {} : { storageVersionHash: Buffer.from(`${d.group}/${d.kind}`).toString("base64").slice(0, 11) }),
    });
    for (const sub of d.subresources ?? []) {
      if (sub === "token") {
        resources.push({ name: `${d.resource}/token`, singularName: "", namespaced: true, group: "authentication.k8s.io", version: "v1", kind: "TokenRequest", verbs: ["create"] });
      } else if (sub === "eviction") {
        // kubectl drain looks for exactly this entry to decide it may evict.
        resources.push({ name: "pods/eviction", singularName: "", namespaced: true, group: "policy", version: "v1", kind: "Eviction", verbs: ["create"] });
      } else if (sub === "log") {
        resources.push({ name: "pods/log", singularName: "", namespaced: true, kind: "Pod", verbs: ["get"] });
      } else if (sub === "portforward") {
        resources.push({ name: "pods/portforward", singularName: "", namespaced: true, kind: "PodPortForwardOptions", verbs: ["create", "get"] });
      } else {
        resources.push({ name: `${d.resource}/${sub}`, singularName: "", namespaced: d.namespaced, kind: d.kind, verbs: ["get", "patch", "update"] });
      }
    }
  }
  return { kind: "APIResourceList", apiVersion: "v1", groupVersion: apiVersionOf(group, version), resources };
}
