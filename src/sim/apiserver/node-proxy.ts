/**
 * The node proxy subresource (GET /api/v1/nodes/NAME/proxy/PATH): the apiserver passes the
 * request on to the node's kubelet. The simulated kubelets serve /configz and the node log query
 * /logs/ (../kubelet-server.ts); anything else is the kubelet's 404. Authorised before it gets
 * here as `get nodes/proxy`, as kube-apiserver authorises it.
 */
import type { ServerResponse } from "node:http";
import type { SimCluster } from "../cluster.js";
import { R } from "../storage-names.js";
import { kubeletConfigz, nodeLogQuery } from "../kubelet-server.js";
import { methodNotAllowed, notFound } from "./status.js";
import { send } from "./request.js";

const PROXY_PATH = /^\/api\/v1\/nodes\/([^/]+)\/proxy(\/.*)?$/;

/** Whether `pathname` is a node proxy request (served by {@link serveNodeProxy}). */
export function isNodeProxy(pathname: string): boolean {
  return PROXY_PATH.test(pathname);
}

export function serveNodeProxy(cluster: SimCluster, method: string, url: URL, res: ServerResponse): void {
  const [, name, rest = "/"] = PROXY_PATH.exec(url.pathname)!;
  const nodeName = decodeURIComponent(name!);
  const node = cluster.store.get(R.nodes, nodeName)?.obj;
  if (!node) throw notFound("nodes", "", nodeName);
  if (method !== "GET") throw methodNotAllowed();
  if (rest === "/configz") return send(cluster, res, 200, kubeletConfigz(node));
  if (rest === "/logs" || rest === "/logs/") {
    const { code, text } = nodeLogQuery(cluster, nodeName, url.searchParams);
    res.writeHead(code, { "Content-Type": "text/plain; charset=utf-8", "Content-Length": Buffer.byteLength(text) });
    return void res.end(text);
  }
  res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" });
  res.end("404 page not found\n");
}
