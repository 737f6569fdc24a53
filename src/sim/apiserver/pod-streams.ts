/**
 * The pod subresources a real apiserver passes on to the node's kubelet:
 * `log` (answered here from what the simulated kubelet knows: when each
 * container started and what it runs) and `portforward` (the simulated nodes
 * have no kubelet to dial, so it is refused as the apiserver refuses it when
 * the node's kubelet does not answer).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { SimCluster } from "../cluster.js";
import { badRequest, unconverted } from "./status.js";
import { entryOf, type Target } from "./request.js";
import { queryBool, queryInt } from "./query-options.js";
import { R } from "../storage-names.js";

type Obj = Record<string, any>;

/** Lines of simulated output per container are at most this many (one a minute of simulated time). */
const MAX_LOG_LINES = 1000;
const LINE_INTERVAL_MS = 60_000;

/** `GET pods/{name}/log`: the container's log as text, with container, tailLines, timestamps and limitBytes. */
export function servePodLog(cluster: SimCluster, t: Target, q: URLSearchParams, res: ServerResponse): void {
  const pod = entryOf(cluster, t).obj as Obj;
  const containers = ((pod.spec?.containers ?? []) as Obj[]).map((c) => c.name as string);
  const initContainers = ((pod.spec?.initContainers ?? []) as Obj[]).map((c) => c.name as string);
  let container = q.get("container") ?? "";
  if (!container) {
    if (containers.length !== 1) {
      const init = initContainers.length ? ` or one of the init containers: [${initContainers.join(" ")}]` : "";
      throw badRequest(`a container name must be specified for pod ${t.name}, choose one of: [${containers.join(" ")}]${init}`);
    }
    container = containers[0]!;
  }
  if (!containers.includes(container) && !initContainers.includes(container)) throw badRequest(`container ${container} is not valid for pod ${t.name}`);
  const tailLines = queryInt(q, "tailLines");
  const limitBytes = queryInt(q, "limitBytes");
  const timestamps = queryBool(q, "timestamps");
  // A pod no node has taken has no kubelet to ask: the apiserver answers an empty log.
  if (!pod.spec?.nodeName) return write(res, "");
  const status = ((pod.status?.containerStatuses ?? []) as Obj[]).find((s) => s.name === container);
  const startedAt = status?.state?.running?.startedAt as string | undefined;
  if (!startedAt) {
    const reason = (status?.state?.waiting?.reason as string | undefined) ?? "ContainerCreating";
    throw badRequest(`container ${JSON.stringify(container)} in pod ${JSON.stringify(t.name)} is waiting to start: ${reason}`);
  }
  const spec = ((pod.spec.containers ?? []) as Obj[]).find((c) => c.name === container) ?? {};
  const start = Date.parse(startedAt);
  const now = cluster.clock.now();
  const total = Math.max(1, Math.floor((now - start) / LINE_INTERVAL_MS) + 1);
  const lines: string[] = [];
  // The kubelet keeps the newest lines.
  for (let i = Math.max(0, total - MAX_LOG_LINES); i < total; i++) {
    const at = new Date(start + i * LINE_INTERVAL_MS).toISOString().replace(/\.\d{3}Z$/, ".000000000Z");
    const text = i === 0 ? `starting ${spec.image ?? container} on ${pod.spec.nodeName}` : `${container} serving (uptime ${i}m)`;
    lines.push(timestamps ? `${at} ${text}` : text);
  }
  let out = (tailLines !== undefined && tailLines >= 0 ? lines.slice(Math.max(0, lines.length - tailLines)) : lines).map((l) => `${l}\n`).join("");
  if (limitBytes !== undefined && limitBytes > 0) out = Buffer.from(out).subarray(0, limitBytes).toString("utf8");
  write(res, out);
}

function write(res: ServerResponse, text: string): void {
  res.writeHead(200, { "Content-Type": "text/plain", "Cache-Control": "no-cache, private", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

/** `pods/{name}/portforward`: the node's kubelet is dialled and does not answer. */
export function servePortForward(cluster: SimCluster, t: Target, _req: IncomingMessage): never {
  const pod = entryOf(cluster, t).obj as Obj;
  const nodeName = pod.spec?.nodeName as string | undefined;
  if (!nodeName) throw badRequest(`pod ${t.name} does not have a host assigned`);
  const node = cluster.store.get(R.nodes, nodeName)?.obj as Obj | undefined;
  const address = ((node?.status?.addresses ?? []) as Obj[]).find((a) => a.type === "InternalIP")?.address ?? nodeName;
  throw unconverted(`error dialing backend: dial tcp ${address}:10250: connect: connection refused`);
}
