/** Storage names of the resources the cluster keeps (the store's tables; group/resource outside core). */
export const R = {
  nodes: "nodes",
  pods: "pods",
  namespaces: "namespaces",
  events: "events",
  deployments: "apps/deployments",
  replicasets: "apps/replicasets",
  daemonsets: "apps/daemonsets",
  pdbs: "policy/poddisruptionbudgets",
  leases: "coordination.k8s.io/leases",
} as const;
