/** metrics.k8s.io (NodeMetrics, PodMetrics), computed on read by ../metrics.ts as metrics-server would serve it. */
import type { ServerResponse } from "node:http";
import type { SimCluster } from "../cluster.js";
import { objectKey, type KObject } from "../store.js";
import { R } from "../storage-names.js";
import { nodeMetrics, podMetrics } from "../metrics.js";
import { notFound } from "./status.js";
import { send, type Target } from "./request.js";
import { parseLabelSelector } from "../../k8s/label-selector.js";

const API_VERSION = "metrics.k8s.io/v1beta1";

export function serveMetrics(cluster: SimCluster, t: Target, q: URLSearchParams, res: ServerResponse): void {
  const label = parseLabelSelector(q.get("labelSelector") ?? "");
  const source = t.def.resource === "nodes" ? R.nodes : R.pods;
  const compute = (o: KObject) => (t.def.resource === "nodes" ? nodeMetrics(cluster, o) : podMetrics(cluster, o));
  if (t.name) {
    const e = cluster.store.get(source, objectKey(t.namespace, t.name));
    const m = e ? compute(e.obj) : undefined;
    if (!m) throw notFound(t.def.resource, "metrics.k8s.io", t.name);
    return send(cluster, res, 200, { kind: t.def.kind, apiVersion: API_VERSION, ...m });
  }
  const items: object[] = [];
  for (const e of cluster.store.list(source, t.namespace)) {
    if (!label.matches(e.obj.metadata.labels)) continue;
    const m = compute(e.obj);
    if (m) items.push(m);
  }
  send(cluster, res, 200, { kind: `${t.def.kind}List`, apiVersion: API_VERSION, metadata: {}, items });
}
