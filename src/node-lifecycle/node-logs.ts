/**
 * A node's service log through the kubelet's node log query (GET
 * /api/v1/nodes/NAME/proxy/logs/?query=SERVICE&tailLines=N&pattern=RE; beta since 1.30, the
 * kubelet's enableSystemLogQuery), bounded in lines and bytes, every line made safe to show.
 */
import type { ClusterRegistry } from "../cluster/cluster-registry.js";
import { isNotFound } from "../cluster/kube-client.js";
import type { CachedNode } from "../cluster/model.js";
import { boundedText } from "../cluster/node-event.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import { kube } from "../maintenance/maintenance-service.js";

export const NODE_LOG_LIMITS = {
  /** Lines when tailLines is omitted, and at most. */
  defaultLines: 100,
  maxLines: 1000,
  /** Bytes read of the kubelet's answer at most. */
  maxBytes: 512 * 1024,
  /** Characters kept of one line. */
  lineChars: 2048,
  patternChars: 256,
} as const;

/** A journal unit name as the kubelet accepts it (a service, or a file under /var/log on Windows). */
const SERVICE = /^[A-Za-z0-9][A-Za-z0-9@._-]{0,63}$/;

export interface NodeLogView {
  query: string;
  lines: string[];
  truncated: boolean;
}

/** What a call asks, checked. @throws AppError BAD_USER_INPUT */
export function checkLogQuery(query: string | null | undefined, tailLines: number | null | undefined, pattern: string | null | undefined): { query: string; tailLines: number; pattern: string | undefined } {
  const service = query ?? "kubelet";
  if (!SERVICE.test(service)) throw new AppError(ErrorCode.BAD_USER_INPUT, `query: a service name of letters, digits, '@', '.', '_' and '-' (at most 64), got ${JSON.stringify(service.slice(0, 80))}`);
  const lines = tailLines ?? NODE_LOG_LIMITS.defaultLines;
  if (!Number.isInteger(lines) || lines < 1 || lines > NODE_LOG_LIMITS.maxLines) throw new AppError(ErrorCode.BAD_USER_INPUT, `tailLines: between 1 and ${NODE_LOG_LIMITS.maxLines}, got ${lines}`);
  if (pattern != null && pattern.length > NODE_LOG_LIMITS.patternChars) throw new AppError(ErrorCode.BAD_USER_INPUT, `pattern: at most ${NODE_LOG_LIMITS.patternChars} characters`);
  return { query: service, tailLines: lines, pattern: pattern || undefined };
}

/**
 * The node's last lines of `query`'s journal. Null when the kubelet has no node log query
 * (404: the feature is off or the kubelet older); a refusal or failure is the caller's error.
 */
export async function readNodeLog(clusters: ClusterRegistry, node: Pick<CachedNode, "cluster" | "name">, asked: { query: string; tailLines: number; pattern: string | undefined }): Promise<NodeLogView | null> {
  const cache = clusters.get(node.cluster);
  if (!cache) throw new AppError(ErrorCode.NOT_FOUND, `cluster "${node.cluster}" is not configured`);
  // One line more than asked tells whether more matched.
  const params = { query: asked.query, tailLines: asked.tailLines + 1, pattern: asked.pattern };
  const answer = await kube(node.cluster, async () => {
    try {
      return await cache.client.getText(`/api/v1/nodes/${encodeURIComponent(node.name)}/proxy/logs/`, params, NODE_LOG_LIMITS.maxBytes, "tail");
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  });
  if (answer === null) return null;
  const all = answer.text.split("\n");
  if (all.at(-1) === "") all.pop();
  // The kept tail of a longer answer begins inside a line: that part is dropped.
  if (answer.truncated) all.shift();
  const truncated = answer.truncated || all.length > asked.tailLines;
  const lines = all.slice(-asked.tailLines).map((line) => boundedText(line, NODE_LOG_LIMITS.lineChars) ?? "");
  return { query: asked.query, lines, truncated };
}
