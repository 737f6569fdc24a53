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
import { apiVersionOf } from "./resources.js";
import { alreadyExists, badRequest, conflict, success } from "./status.js";
import { applyPatch } from "./patch.js";
import { prepareForCreate, prepareForUpdate, validate } from "./strategies.js";
import { statusUpdate } from "./subresources.js";
import { entryOf, parseBody, reply, send, storage, type Target } from "./request.js";
import { writeOptions, type WriteOptions } from "./query-options.js";

type Obj = Record<string, any>;

/** A check on the object a write would store (RBAC's escalation prevention); throws to refuse it. */
export type Admit = (t: Target, obj: KObject) => void;

function hasStatus(t: Target): boolean {
  return (t.def.subresources ?? []).includes("status");
}

/** Store `next` as the new version of the target, with apiserver update rules. */
function commit(cluster: SimCluster, t: Target, current: Entry, next: KObject, options: WriteOptions, admit?: Admit): Entry | KObject {
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
  result.apiVersion = apiVersionOf(t.def.group, t.def.versions[0]!);
  result.kind = t.def.kind;
  delete result.metadata.resourceVersion;
  if (t.subresource !== "status") prepareForUpdate(t.def, result, cur);
  validate(t.def, result);
  admit?.(t, result);
  if (options.dryRun) return { ...result, metadata: { ...result.metadata, resourceVersion: cur.metadata.resourceVersion } };
  // A write that changes nothing keeps its resourceVersion, as in the apiserver.
  if (Buffer.from(JSON.stringify({ ...result, metadata: { ...result.metadata, resourceVersion: cur.metadata.resourceVersion } })).equals(current.bytes)) return current;
  return cluster.store.put(storage(t), result);
}

export function serveCreate(cluster: SimCluster, t: Target, q: URLSearchParams, body: Buffer, res: ServerResponse, admit?: Admit): void {
  const options = writeOptions("CreateOptions", q);
  const obj = parseBody(body);
  obj.metadata ??= { name: "" };
  const m = obj.metadata;
  if (t.def.namespaced) {
    if (m.namespace && m.namespace !== t.namespace) throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
    m.namespace = t.namespace!;
  }
  if (!m.name && m.generateName) m.name = `${m.generateName}${cluster.rng.suffix(5)}`;
  obj.apiVersion = apiVersionOf(t.def.group, t.def.versions[0]!);
  obj.kind = t.def.kind;
  delete m.resourceVersion;
  delete m.uid;
  delete m.creationTimestamp;
  prepareForCreate(t.def, obj, cluster.store);
  // Validation before storage: an invalid name is 422 even when an object of that name exists.
  validate(t.def, obj);
  if (cluster.store.get(storage(t), objectKey(m.namespace, m.name))) throw alreadyExists(t.def.resource, t.def.group, m.name);
  admit?.(t, obj);
  if (options.dryRun) return send(cluster, res, 201, obj);
  const e = cluster.create(storage(t), obj);
  cluster.tick();
  reply(cluster, res, 201, t, e);
}

export function serveUpdate(cluster: SimCluster, t: Target, q: URLSearchParams, body: Buffer, res: ServerResponse, admit?: Admit): void {
  const options = writeOptions("UpdateOptions", q);
  const current = entryOf(cluster, t);
  const next = parseBody(body);
  // Without a resourceVersion an update is unconditional, as the apiserver allows for these kinds.
  next.metadata ??= { name: t.name! };
  const r = commit(cluster, t, current, next, options, admit);
  cluster.tick();
  reply(cluster, res, 200, t, r);
}

export function servePatch(cluster: SimCluster, t: Target, q: URLSearchParams, contentType: string, body: Buffer, res: ServerResponse, admit?: Admit): void {
  const options = writeOptions("PatchOptions", q, { patchType: contentType.split(";")[0]!.trim().toLowerCase() });
  const current = entryOf(cluster, t);
  let patchDoc: unknown;
  try {
    patchDoc = JSON.parse(body.toString("utf8"));
  } catch (err) {
    throw badRequest(`error decoding patch: ${(err as Error).message}`);
  }
  const base = JSON.parse(current.json) as KObject;
  const patched = applyPatch(contentType, base, patchDoc) as KObject;
  if (typeof patched !== "object" || patched === null) throw badRequest("patch produced a non-object");
  // A patch only carries a resourceVersion when the client wants a precondition.
  const wanted = (patchDoc as Obj)?.metadata?.resourceVersion;
  if (patched.metadata && wanted === undefined) patched.metadata.resourceVersion = current.obj.metadata.resourceVersion;
  const r = commit(cluster, t, current, patched, options, admit);
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
