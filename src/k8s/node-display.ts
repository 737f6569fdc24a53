/**
 * What kubectl shows for a node, reproduced from printNode, findNodeRoles and
 * getNodeExternalIP/InternalIP in k8s.io/kubernetes/pkg/printers/internalversion/printers.go,
 * and duration.HumanDuration in k8s.io/apimachinery/pkg/util/duration.
 */

/** The parts of a v1 Node these helpers read; client-node's V1Node fits. */
export interface NodeLike {
  metadata?: { labels?: Record<string, string> };
  spec?: { unschedulable?: boolean };
  status?: {
    conditions?: { type: string; status: string }[];
    addresses?: { type: string; address: string }[];
  };
}

/**
 * kubectl's STATUS column: "Ready" when the Ready condition is "True",
 * "NotReady" when it is "False" or "Unknown", "Unknown" when there is no
 * Ready condition, then ",SchedulingDisabled" for a cordoned node. Other
 * conditions (MemoryPressure, ...) are not shown. Like kubectl, if Ready
 * appears twice the last one wins.
 */
export function nodeStatusColumn(node: NodeLike): string {
  let ready: string | undefined;
  for (const c of node.status?.conditions ?? []) if (c.type === "Ready") ready = c.status;
  const status = ready === undefined ? "Unknown" : ready === "True" ? "Ready" : "NotReady";
  return node.spec?.unschedulable === true ? `${status},SchedulingDisabled` : status;
}

const NODE_ROLE_PREFIX = "node-role.kubernetes.io/";
const LEGACY_ROLE_LABEL = "kubernetes.io/role";

/**
 * The node's roles, sorted and unique, from `node-role.kubernetes.io/<role>`
 * label keys (any value) and the legacy `kubernetes.io/role=<role>` label.
 * Empty when there are none; kubectl prints that as "<none>".
 */
export function nodeRoles(labels: Record<string, string> | undefined): string[] {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(labels ?? {})) {
    if (key.startsWith(NODE_ROLE_PREFIX)) {
      const role = key.slice(NODE_ROLE_PREFIX.length);
      if (role.length > 0) roles.add(role);
    } else if (key === LEGACY_ROLE_LABEL && value !== "") {
      roles.add(value);
    }
  }
  // Go's sets.String.List sorts bytewise; so does the default sort for ASCII label text.
  return [...roles].sort();
}

function firstAddress(node: NodeLike, type: string): string | undefined {
  return node.status?.addresses?.find((a) => a.type === type)?.address;
}

/** The node's first InternalIP address (`-o wide` INTERNAL-IP), or undefined; kubectl prints "<none>". */
export function nodeInternalIP(node: NodeLike): string | undefined {
  return firstAddress(node, "InternalIP");
}

/** The node's first ExternalIP address (`-o wide` EXTERNAL-IP), or undefined; kubectl prints "<none>". */
export function nodeExternalIP(node: NodeLike): string | undefined {
  return firstAddress(node, "ExternalIP");
}

/**
 * kubectl's AGE column (duration.HumanDuration) for an age in seconds:
 * "45s", "119s", "2m", "9m59s", "10m", "179m", "3h", "7h59m", "8h", "47h",
 * "2d", "7d23h", "8d", "729d", "2y", "2y1d", "8y". Up to one second in the
 * future reads as "0s" (clock skew); further is "<invalid>".
 */
export function formatAge(seconds: number): string {
  if (!Number.isFinite(seconds)) return "<invalid>";
  // Go truncates toward zero at each unit; for non-negative ages that is floor.
  const s = Math.trunc(seconds);
  if (s < -1) return "<invalid>";
  if (s < 0) return "0s";
  if (s < 60 * 2) return `${s}s`;
  const minutes = Math.floor(s / 60);
  if (minutes < 10) {
    const rest = s % 60;
    return rest === 0 ? `${minutes}m` : `${minutes}m${rest}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.floor(s / 3600);
  if (hours < 8) {
    const rest = minutes % 60;
    return rest === 0 ? `${hours}h` : `${hours}h${rest}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) {
    const rest = hours % 24;
    return rest === 0 ? `${days}d` : `${days}d${rest}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (hours < 24 * 365 * 8) {
    const rest = days % 365;
    return rest === 0 ? `${years}y` : `${years}y${rest}d`;
  }
  return `${years}y`;
}
