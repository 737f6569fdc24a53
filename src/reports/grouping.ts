/**
 * How reports group nodes: by cluster, node pool, zone, instance type, role or any label.
 * Shared by the capacity report (live nodes) and the availability report (recorded nodes),
 * so a group means the same thing in both.
 */

import { AppError, ErrorCode } from "../graphql/errors.js";
import type { ReportGrouping, ReportKey } from "../graphql/generated/resolvers-types.js";
import { labelKeyErrors } from "../k8s/label-validation.js";
import { nodeRoles } from "../k8s/node-display.js";

/** The schema's ReportDimension, ReportGrouping input and ReportKey, which every report shares. */
export type { ReportDimension, ReportGrouping, ReportKey } from "../graphql/generated/resolvers-types.js";

/**
 * Labels that name a node's pool, most specific first: managed node groups of EKS, GKE and
 * AKS, Karpenter, and the plain `node-pool` label self-managed clusters (and the simulator) use.
 */
export const POOL_LABELS = ["eks.amazonaws.com/nodegroup", "cloud.google.com/gke-nodepool", "kubernetes.azure.com/agentpool", "karpenter.sh/nodepool", "node-pool"] as const;

/** The groupings, checked: LABEL needs a valid labelKey, and nothing may repeat. */
export function validateGroupings(groupBy: readonly ReportGrouping[] | null | undefined): ReportGrouping[] {
  const groupings = [...(groupBy ?? [])];
  const seen = new Set<string>();
  for (const grouping of groupings) {
    if (grouping.by === "LABEL") {
      if (!grouping.labelKey) throw new AppError(ErrorCode.BAD_USER_INPUT, "groupBy LABEL needs a labelKey");
      const errors = labelKeyErrors(grouping.labelKey);
      if (errors.length) throw new AppError(ErrorCode.BAD_USER_INPUT, `groupBy labelKey "${grouping.labelKey}": ${errors.join("; ")}`);
    } else if (grouping.labelKey) {
      throw new AppError(ErrorCode.BAD_USER_INPUT, `groupBy ${grouping.by} takes no labelKey`);
    }
    const name = dimensionName(grouping);
    if (seen.has(name)) throw new AppError(ErrorCode.BAD_USER_INPUT, `groupBy names ${name} twice`);
    seen.add(name);
  }
  return groupings;
}

/** How a grouping is named in a report: the dimension, or `label:<key>`. */
export function dimensionName(grouping: ReportGrouping): string {
  return grouping.by === "LABEL" ? `label:${grouping.labelKey}` : grouping.by;
}

/** A node's value for one grouping; null when it has none. */
export function groupValue(grouping: ReportGrouping, cluster: string, labels: Readonly<Record<string, string>>): string | null {
  switch (grouping.by) {
    case "CLUSTER":
      return cluster;
    case "NODE_POOL":
      for (const key of POOL_LABELS) if (labels[key]) return labels[key]!;
      return null;
    case "ZONE":
      return labels["topology.kubernetes.io/zone"] ?? labels["failure-domain.beta.kubernetes.io/zone"] ?? null;
    case "INSTANCE_TYPE":
      return labels["node.kubernetes.io/instance-type"] ?? labels["beta.kubernetes.io/instance-type"] ?? null;
    case "ROLE": {
      const roles = nodeRoles(labels);
      return roles.length ? roles.join(",") : null;
    }
    case "LABEL":
      return labels[grouping.labelKey!] ?? null;
  }
}

/** A node's key under all groupings, and a string that identifies that key for bucketing. */
export function groupKey(groupings: readonly ReportGrouping[], cluster: string, labels: Readonly<Record<string, string>>): { key: ReportKey[]; id: string } {
  const key = groupings.map((grouping) => ({ dimension: dimensionName(grouping), value: groupValue(grouping, cluster, labels) }));
  return { key, id: JSON.stringify(key.map((entry) => entry.value)) };
}

/** Groups in key order, a missing value (null) after every value. */
export function compareKeys(a: readonly ReportKey[], b: readonly ReportKey[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!.value;
    const y = b[i]!.value;
    if (x === y) continue;
    if (x === null) return 1;
    if (y === null) return -1;
    return x < y ? -1 : 1;
  }
  return 0;
}
