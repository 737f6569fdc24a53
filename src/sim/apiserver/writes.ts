/**
 * Writes: create, update (PUT), patch and delete, with the apiserver's update
 * rules (resourceVersion preconditions, immutable identity, status kept out of
 * the main resource, generation bumps on spec changes, no-op writes keep their
 * resourceVersion, dryRun). Per-kind rules are in ./strategies.ts.
 */
import type { ServerResponse } from "node:http";
import type { SimCluster } from "../cluster.js";
import { objectKey, type Entry, type KObject } from "../store.js";
import { R } from "../storage-names.js";
import { apiVersionOf, storedApiVersion } from "./resources.js";
import { parse as parseYaml } from "yaml";
import { managerFromUserAgent, recordUpdate, serverSideApply } from "./managed-fields.js";
import { alreadyExists, badRequest, conflict, success } from "./status.js";
import { APPLY_PATCH, applyPatch } from "./patch.js";
import { prepareForCreate, prepareForUpdate, validate } from "./strategies.js";
import { statusUpdate } from "./subresources.js";
import { entryOf, parseBody, reply, send, storage, storedForm, versioned, type Target } from "./request.js";
import { writeOptions, type WriteOptions } from "./query-options.js";

type Obj = Record<string, any>;

/** A check on the object a write would store (RBAC's escalation prevention); throws to refuse it. */
export type Admit = (t: Target, obj: KObject) => void;

function hasStatus(t: Target): boolean {
  return (t.def.subresources ?? []).includes("status");
}

/** Who a write is by, for managedFields: its fieldManager, else its User-Agent's product. */
export interface Writer {
  userAgent: string;
}

function managerOf(options: WriteOptions, writer: Writer): string {
  return options.fieldManager || managerFromUserAgent(writer.userAgent);
}

/** managedFields' time: RFC 3339 to the second, in simulated time. */
function fieldsTime(cluster: SimCluster): string {
  return new Date(cluster.clock.now()).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Store `next` as the new version of the target, with apiserver update rules (`applied`: its managedFields are already set). */
function commit(cluster: SimCluster, t: Target, current: Entry, next: KObject, options: WriteOptions, writer: Writer, admit?: Admit, applied = false): Entry | KObject {
  const cur = current.obj;
  if (next.metadata?.resourceVersion && next.metadata.resourceVersion !== cur.metadata.resourceVersion) {
    throw conflict(t.def.resource, t.def.group, t.name!);
  }
  if (next.metadata?.name && next.metadata.name !== cur.metadata.name) {
    throw badRequest(`the name of the object (${next.metadata.name}) does not match the name on the URL (${cur.metadata.name})`);
  }
  let result: KObject;
  if (t.subresource === "status") {
    result = statusUpdate(current, next);
  } else {
    result = { ...next, metadata: { ...next.metadata } };
    if (hasStatus(t)) result.status = cur.status;
    const m = result.metadata;
    m.uid = cur.metadata.uid;
    m.creationTimestamp = cur.metadata.creationTimestamp;
    m.name = cur.metadata.name;
    if (cur.metadata.namespace) m.namespace = cur.metadata.namespace;
    if (cur.metadata.deletionTimestamp) {
      m.deletionTimestamp = cur.metadata.deletionTimestamp;
      m.deletionGracePeriodSeconds = cur.metadata.deletionGracePeriodSeconds;
    }
    if (cur.metadata.generation !== undefined) {
      m.generation = JSON.stringify(next.spec) !== JSON.stringify(cur.spec) ? cur.metadata.generation + 1 : cur.metadata.generation;
    }
  }
  result.apiVersion = storedApiVersion(t.def);
  result.kind = t.def.kind;
  delete result.metadata.resourceVersion;
  if (t.subresource !== "status") prepareForUpdate(t.def, result, cur);
  if (!applied) {
    if (next.metadata?.managedFields === undefined && cur.metadata.managedFields !== undefined) result.metadata.managedFields = cur.metadata.managedFields;
    const status = t.subresource === "status";
    recordUpdate(cur, result, managerOf(options, writer), apiVersionOf(t.def.group, t.version), fieldsTime(cluster), status, status ? "status" : undefined);
  }
  validate(t.def, result);
  admit?.(t, result);
  if (options.dryRun) return { ...result, metadata: { ...result.metadata, resourceVersion: cur.metadata.resourceVersion } };
  // A write that changes nothing keeps its resourceVersion, as in the apiserver.
  if (Buffer.from(JSON.stringify({ ...result, metadata: { ...result.metadata, resourceVersion: cur.metadata.resourceVersion } })).equals(current.bytes)) return current;
  return cluster.store.put(storage(t), result);
}

export function serveCreate(cluster: SimCluster, t: Target, q: URLSearchParams, body: Buffer, res: ServerResponse, writer: Writer, admit?: Admit): void {
  const options = writeOptions("CreateOptions", q);
  const obj = storedForm(t, parseBody(body));
  obj.metadata ??= { name: "" };
  create(cluster, t, obj, options, res, writer, admit);
}

/** The create path shared by POST and an apply that creates (`applied`: managedFields already set). */
function create(cluster: SimCluster, t: Target, obj: KObject, options: WriteOptions, res: ServerResponse, writer: Writer, admit?: Admit, applied = false): void {
  const m = obj.metadata;
  if (t.def.namespaced) {
    if (m.namespace && m.namespace !== t.namespace) throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
    m.namespace = t.namespace!;
  }
  if (!m.name && m.generateName) m.name = `${m.generateName}${cluster.rng.suffix(5)}`;
  obj.apiVersion = storedApiVersion(t.def);
  obj.kind = t.def.kind;
  delete m.resourceVersion;
  delete m.uid;
  delete m.creationTimestamp;
  prepareForCreate(t.def, obj, cluster.store);
  if (!applied) recordUpdate(undefined, obj, managerOf(options, writer), apiVersionOf(t.def.group, t.version), fieldsTime(cluster), false);
  // Validation before storage: an invalid name is 422 even when an object of that name exists.
  validate(t.def, obj);
  if (cluster.store.get(storage(t), objectKey(m.namespace, m.name))) throw alreadyExists(t.def.resource, t.def.group, m.name);
  admit?.(t, obj);
  if (options.dryRun) return reply(cluster, res, 201, t, obj);
  const e = cluster.create(storage(t), obj);
  cluster.tick();
  reply(cluster, res, 201, t, e);
}

export function serveUpdate(cluster: SimCluster, t: Target, q: URLSearchParams, body: Buffer, res: ServerResponse, writer: Writer, admit?: Admit): void {
  const options = writeOptions("UpdateOptions", q);
  const current = entryOf(cluster, t);
  const next = storedForm(t, parseBody(body));
  // Without a resourceVersion an update is unconditional, as the apiserver allows for these kinds.
  next.metadata ??= { name: t.name! };
  const r = commit(cluster, t, current, next, options, writer, admit);
  cluster.tick();
  reply(cluster, res, 200, t, r);
}

export function servePatch(cluster: SimCluster, t: Target, q: URLSearchParams, contentType: string, body: Buffer, res: ServerResponse, writer: Writer, admit?: Admit): void {
  const patchType = contentType.split(";")[0]!.trim().toLowerCase();
  const options = writeOptions("PatchOptions", q, { patchType });
  if (patchType === APPLY_PATCH) return serveApply(cluster, t, options, body, res, writer, admit);
  const current = entryOf(cluster, t);
  let patchDoc: unknown;
  try {
    patchDoc = JSON.parse(body.toString("utf8"));
  } catch (err) {
    throw badRequest(`error decoding patch: ${(err as Error).message}`);
  }
  const base = JSON.parse(versioned(current.json, t)) as KObject;
  const patched = storedForm(t, applyPatch(contentType, base, patchDoc) as KObject);
  if (typeof patched !== "object" || patched === null) throw badRequest("patch produced a non-object");
  // A patch only carries a resourceVersion when the client wants a precondition.
  const wanted = (patchDoc as Obj)?.metadata?.resourceVersion;
  if (patched.metadata && wanted === undefined) patched.metadata.resourceVersion = current.obj.metadata.resourceVersion;
  const r = commit(cluster, t, current, patched, options, writer, admit);
  cluster.tick();
  reply(cluster, res, 200, t, r);
}

/** Server-side apply (./managed-fields.ts): creates the object when it does not exist. */
function serveApply(cluster: SimCluster, t: Target, options: WriteOptions, body: Buffer, res: ServerResponse, writer: Writer, admit?: Admit): void {
  let applied: Obj;
  try {
    applied = parseYaml(body.toString("utf8")) as Obj;
  } catch (err) {
    throw badRequest(`error decoding YAML: ${(err as Error).message}`);
  }
  if (typeof applied !== "object" || applied === null || Array.isArray(applied)) throw badRequest("error decoding YAML: the apply configuration is not an object");
  const served = apiVersionOf(t.def.group, t.version);
  if (applied.apiVersion !== served || applied.kind !== t.def.kind) throw badRequest(`the apply configuration's apiVersion and kind (${applied.apiVersion ?? ""}, ${applied.kind ?? ""}) do not match the resource (${served}, ${t.def.kind})`);
  applied.metadata ??= {};
  if (applied.metadata.name && applied.metadata.name !== t.name) throw badRequest(`the name of the object (${applied.metadata.name}) does not match the name on the URL (${t.name})`);
  const manager = options.fieldManager;
  const time = fieldsTime(cluster);
  const current = cluster.store.get(storage(t), objectKey(t.namespace, t.name!));
  if (!current) {
    const obj = storedForm(t, serverSideApply(undefined, { ...applied, metadata: { ...applied.metadata, name: t.name } }, manager, served, time, options.force ?? false, !hasStatus(t)) as KObject);
    return create(cluster, t, obj, options, res, writer, admit, true);
  }
  const live = JSON.parse(versioned(current.json, t)) as Obj;
  const next = storedForm(t, serverSideApply(live, applied, manager, served, time, options.force ?? false, !hasStatus(t)) as KObject);
  const r = commit(cluster, t, current, next, options, writer, admit, true);
  cluster.tick();
  reply(cluster, res, 200, t, r);
}

export function serveDelete(cluster: SimCluster, t: Target, q: URLSearchParams, body: Buffer, res: ServerResponse): void {
  const opts = body.length ? (parseBody(body) as unknown as Obj) : undefined;
  const options = writeOptions("DeleteOptions", q, opts ? { body: opts } : {});
  const current = entryOf(cluster, t);
  const pre = opts?.preconditions ?? {};
  if (pre.uid && pre.uid !== current.obj.metadata.uid) throw conflict(t.def.resource, t.def.group, t.name!);
  if (pre.resourceVersion && pre.resourceVersion !== current.obj.metadata.resourceVersion) throw conflict(t.def.resource, t.def.group, t.name!);
  const grace = options.gracePeriodSeconds;
  if (options.dryRun) return reply(cluster, res, 200, t, current);
  if (t.def.kind === "Pod") {
    const obj = cluster.deletePod(current.key, grace);
    cluster.tick();
    return send(cluster, res, 200, obj);
  }
  const gone = cluster.store.remove(storage(t), current.key)!;
  if (t.def.kind === "Node") {
    cluster.store.remove(R.leases, objectKey("kube-node-lease", current.key));
  }
  cluster.tick();
  send(cluster, res, 200, success(200, { name: t.name!, ...(t.def.group ? { group: t.def.group } : {}), kind: t.def.resource, uid: gone.obj.metadata.uid! }));
}
