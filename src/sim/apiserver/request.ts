/**
 * What every API handler shares: the resource a request addresses, how it is
 * recorded, and the small helpers to find its object and answer it.
 */
import type { ServerResponse } from "node:http";
import type { SimCluster } from "../cluster.js";
import { objectKey, Entry, type KObject } from "../store.js";
import { apiVersionOf, storageName, type ResourceDef } from "./resources.js";
import { badRequest, notFound } from "./status.js";
import { fieldGetter } from "./fields.js";
import { parseLabelSelector, type LabelSelector } from "../../k8s/label-selector.js";
import { parseFieldSelector, type FieldSelector } from "../../k8s/field-selector.js";
import { isPretty } from "./query-options.js";
import { storedFieldSelector } from "./events-v1.js";

/** One request as the log and counters record it. */
export interface RequestRecord {
  method: string;
  verb: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  path: string;
  code: number;
  userAgent: string;
  /** The Impersonate-User header, as the apiserver's audit log records the impersonated user. */
  impersonatedUser: string;
  /** Who the request was authenticated as (impersonation applied; system:anonymous without credentials). */
  user: string;
}

/** The resource (and object, subresource) a URL names. */
export interface Target {
  def: ResourceDef;
  version: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

/** The store table of a target's resource. */
export function storage(t: Target): string {
  return storageName(t.def);
}

/** The stored object a target names, or 404. */
export function entryOf(cluster: SimCluster, t: Target): Entry {
  const e = cluster.store.get(storage(t), objectKey(t.namespace, t.name!));
  if (!e) throw notFound(t.def.resource, t.def.group, t.name!);
  return e;
}

/** JSON of an entry in the requested version (only PDBs are served in two). */
export function versioned(json: string, t: { def: ResourceDef; version: string }): string {
  if (t.def.view) return JSON.stringify(t.def.view.out(JSON.parse(json)));
  if (t.version === t.def.versions[0]) return json;
  const from = `"apiVersion":"${apiVersionOf(t.def.group, t.def.versions[0]!)}"`;
  return json.replace(from, `"apiVersion":"${apiVersionOf(t.def.group, t.version)}"`);
}

/** A request's label and field selectors; `nodeName` when the field selector pins spec.nodeName of pods (indexed). */
export interface Selectors {
  label: LabelSelector;
  field: FieldSelector;
  matches: (o: KObject) => boolean;
  nodeName?: string;
}

export function selectorsOf(t: Target, q: URLSearchParams): Selectors {
  const label = parseLabelSelector(q.get("labelSelector") ?? "");
  const fieldText = q.get("fieldSelector") ?? "";
  const field = parseFieldSelector(t.def.view ? storedFieldSelector(fieldText) : fieldText);
  const getter = fieldGetter(t.def.resource, field.requirements.map((r) => r.field), t.def.kind);
  const hasField = field.requirements.length > 0;
  const hasLabel = label.requirements.length > 0;
  const matches = (o: KObject) => (!hasLabel || label.matches(o.metadata.labels)) && (!hasField || field.matches(getter(o)));
  const byNode = t.def.resource === "pods" && !t.def.group ? field.requirements.find((r) => r.field === "spec.nodeName" && r.operator === "=") : undefined;
  return byNode ? { label, field, matches, nodeName: byNode.value } : { label, field, matches };
}

/** A JSON request body that must be an object, or 400. */
export function parseBody(body: Buffer): KObject {
  try {
    const obj = JSON.parse(body.toString("utf8")) as KObject;
    if (typeof obj !== "object" || obj === null) throw new Error("not an object");
    return obj;
  } catch (err) {
    throw badRequest(`the body of the request could not be decoded: ${(err as Error).message}`);
  }
}

/** Answer JSON (a string is sent as is), with the headers the apiserver sends; indented when the request asks for `pretty`. */
export function send(cluster: SimCluster, res: ServerResponse, code: number, body: unknown): void {
  let text = typeof body === "string" ? body : JSON.stringify(body);
  if (wantsPretty(res)) text = `${JSON.stringify(typeof body === "string" ? JSON.parse(body) : body, null, 2)}\n`;
  res.writeHead(code, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text), "Cache-Control": "no-cache, private", "Audit-Id": cluster.rng.uid() });
  res.end(text);
}

/** Answer a stored entry (its stored JSON, in the requested version) or a built object. */
export function reply(cluster: SimCluster, res: ServerResponse, code: number, t: Target, r: Entry | KObject): void {
  if (r instanceof Entry) send(cluster, res, code, versioned(r.json, t));
  else send(cluster, res, code, t.def.view ? t.def.view.out(r) : r);
}

/** Whether entries of the target are served as stored (no version or shape to convert). */
export function servedAsStored(t: { def: ResourceDef; version: string }): boolean {
  return !t.def.view && t.version === t.def.versions[0];
}

/** A request body in the stored shape of its target's objects. */
export function storedForm(t: Target, obj: KObject): KObject {
  return t.def.view ? (t.def.view.in(obj) as KObject) : obj;
}

/** Whether the request a response answers asked for indented JSON (./query-options.ts isPretty). */
export function wantsPretty(res: ServerResponse): boolean {
  const req = res.req;
  if (!req?.url) return false;
  return isPretty(new URL(req.url, "http://sim").searchParams, req.headers["user-agent"]);
}
