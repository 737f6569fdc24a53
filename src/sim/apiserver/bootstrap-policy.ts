/**
 * The ClusterRoles and ClusterRoleBindings a new cluster starts with, as
 * kube-apiserver's bootstrap policy (and kubeadm) create them: cluster-admin
 * for system:masters and for kubeadm:cluster-admins (the administrator the
 * kubeconfig names), discovery and the self reviews for every authenticated
 * user, the health and version endpoints for everyone. Only the roles the
 * simulator's API needs; no aggregated roles (admin, edit, view).
 */
import type { KObject } from "../store.js";

const RBAC = "rbac.authorization.k8s.io/v1";
const LABELS = { "kubernetes.io/bootstrapping": "rbac-defaults" };
const ANNOTATIONS = { "rbac.authorization.kubernetes.io/autoupdate": "true" };

function clusterRole(name: string, rules: object[]): KObject {
  return { apiVersion: RBAC, kind: "ClusterRole", metadata: { name, labels: LABELS, annotations: ANNOTATIONS }, rules };
}

function binding(name: string, role: string, groups: string[]): KObject {
  return {
    apiVersion: RBAC,
    kind: "ClusterRoleBinding",
    metadata: { name, labels: LABELS, annotations: ANNOTATIONS },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects: groups.map((g) => ({ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: g })),
  };
}

const PUBLIC_INFO = ["/healthz", "/livez", "/readyz", "/version", "/version/"];

export const BOOTSTRAP_CLUSTER_ROLES: KObject[] = [
  clusterRole("cluster-admin", [
    { apiGroups: ["*"], resources: ["*"], verbs: ["*"] },
    { nonResourceURLs: ["*"], verbs: ["*"] },
  ]),
  clusterRole("system:discovery", [{ nonResourceURLs: ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"], verbs: ["get"] }]),
  clusterRole("system:basic-user", [
    { apiGroups: ["authorization.k8s.io"], resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], verbs: ["create"] },
    { apiGroups: ["authentication.k8s.io"], resources: ["selfsubjectreviews"], verbs: ["create"] },
  ]),
  clusterRole("system:public-info-viewer", [{ nonResourceURLs: PUBLIC_INFO, verbs: ["get"] }]),
];

export const BOOTSTRAP_CLUSTER_ROLE_BINDINGS: KObject[] = [
  binding("cluster-admin", "cluster-admin", ["system:masters"]),
  { ...binding("kubeadm:cluster-admins", "cluster-admin", ["kubeadm:cluster-admins"]), metadata: { name: "kubeadm:cluster-admins" } },
  binding("system:discovery", "system:discovery", ["system:authenticated"]),
  binding("system:basic-user", "system:basic-user", ["system:authenticated"]),
  binding("system:public-info-viewer", "system:public-info-viewer", ["system:authenticated", "system:unauthenticated"]),
];
