/**
 * The three PATCH flavours kubectl and clients send: JSON merge patch (RFC
 * 7386), strategic merge patch (lists of known fields merged by their key, as
 * the apiserver does from the Go struct tags), and JSON patch (RFC 6902).
 */
import { badRequest, ApiError } from "./status.js";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** RFC 7386: objects merge, null deletes, anything else (lists too) replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v) as Json;
  }
  return out;
}

/**
 * patchMergeKey of the list fields we serve, by field name (the Go struct tags
 * of core/v1, apps/v1 and meta/v1). Lists not named here are replaced whole,
 * as the apiserver does for fields without a patch strategy (taints, tolerations).
 */
const MERGE_KEYS: Record<string, string> = {
  conditions: "type",
  addresses: "type",
  containers: "name",
  initContainers: "name",
  ephemeralContainers: "name",
  volumes: "name",
  env: "name",
  ports: "containerPort",
  volumeMounts: "mountPath",
  volumeDevices: "devicePath",
  imagePullSecrets: "name",
  ownerReferences: "uid",
  hostAliases: "ip",
  topologySpreadConstraints: "topologyKey",
  resourceClaims: "name",
  schedulingGates: "name",
};

/** Lists of primitives with patchStrategy "merge" (kept as a set). */
const MERGE_SETS = new Set(["finalizers"]);

/** Strategic merge patch with `$patch`, `$setElementOrder` and `$deleteFromPrimitiveList` directives. */
export function strategicMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  if (patch["$patch"] === "delete") return undefined;
  if (patch["$patch"] === "replace") {
    const { $patch: _ignored, ...rest } = patch;
    return rest;
  }
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === "$patch" || k === "$retainKeys") continue;
    if (k.startsWith("$setElementOrder/")) continue;
    if (k.startsWith("$deleteFromPrimitiveList/")) {
      const field = k.slice("$deleteFromPrimitiveList/".length);
      const current = out[field];
      if (Array.isArray(current) && Array.isArray(v)) out[field] = current.filter((x) => !v.includes(x));
      continue;
    }
    if (v === null) {
      delete out[k];
      continue;
    }
    const mergeKey = MERGE_KEYS[k];
    if (Array.isArray(v) && mergeKey && (Array.isArray(out[k]) || out[k] === undefined)) {
      out[k] = mergeList((out[k] as Json[] | undefined) ?? [], v, mergeKey, patch[`$setElementOrder/${k}`]) as Json;
    } else if (Array.isArray(v) && MERGE_SETS.has(k) && Array.isArray(out[k])) {
      const merged = [...(out[k] as Json[])];
      for (const x of v) if (!merged.includes(x)) merged.push(x);
      out[k] = merged;
    } else if (isObject(v)) {
      const merged = strategicMergePatch(out[k], v);
      if (merged === undefined) delete out[k];
      else out[k] = merged as Json;
    } else {
      out[k] = v;
    }
  }
  return out;
}

function mergeList(current: Json[], patch: Json[], key: string, order: Json | undefined): Json[] {
  if (patch.length === 1 && isObject(patch[0]) && patch[0]["$patch"] === "replace") return [];
  const out = current.map((x) => x);
  for (const item of patch) {
    if (!isObject(item)) {
      out.push(item);
      continue;
    }
    const id = item[key];
    const at = out.findIndex((x) => isObject(x) && x[key] === id);
    if (item["$patch"] === "delete") {
      if (at >= 0) out.splice(at, 1);
      continue;
    }
    if (at >= 0) out[at] = strategicMergePatch(out[at], item) as Json;
    else out.push(strategicMergePatch({}, item) as Json);
  }
  if (Array.isArray(order)) {
    // kubectl apply sends the intended order of the whole list; follow it.
    const rank = new Map(order.map((o, i) => [isObject(o) ? o[key] : o, i]));
    out.sort((a, b) => (rank.get(isObject(a) ? a[key]! : a) ?? 1e9) - (rank.get(isObject(b) ? b[key]! : b) ?? 1e9));
  }
  return out;
}

interface JsonPatchOp {
  op: string;
  path: string;
  from?: string;
  value?: Json;
}

function pointer(path: string): string[] {
  if (path === "") return [];
  if (!path.startsWith("/")) throw badRequest(`invalid JSON pointer: ${path}`);
  return path
    .slice(1)
    .split("/")
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function parentOf(doc: Json, parts: string[], op: string): { parent: JsonObject | Json[]; last: string } {
  let cur: Json = doc;
  for (const p of parts.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(p)] as Json;
    else if (isObject(cur)) cur = cur[p] as Json;
    else cur = undefined as unknown as Json;
    if (cur === undefined || cur === null || typeof cur !== "object") {
      throw new ApiError({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: `the server rejected our request due to an error in our request`, reason: "Invalid", code: 422, details: { causes: [{ reason: "FieldValueInvalid", message: `${op} operation does not apply: doc is missing path: /${parts.join("/")}`, field: "" }] } });
    }
  }
  return { parent: cur as JsonObject | Json[], last: parts[parts.length - 1]! };
}

function getAt(doc: Json, path: string): Json {
  let cur: Json = doc;
  for (const p of pointer(path)) {
    if (Array.isArray(cur)) cur = cur[Number(p)] as Json;
    else if (isObject(cur)) cur = cur[p] as Json;
    else return undefined as unknown as Json;
  }
  return cur;
}

function removeAt(doc: Json, path: string): Json {
  const parts = pointer(path);
  const { parent, last } = parentOf(doc, parts, "remove");
  if (Array.isArray(parent)) {
    const i = Number(last);
    if (!(i >= 0 && i < parent.length)) throw badRequest(`remove operation does not apply: doc is missing path: ${path}`);
    return parent.splice(i, 1)[0]!;
  }
  if (!(last in parent)) throw badRequest(`remove operation does not apply: doc is missing path: ${path}`);
  const v = parent[last]!;
  delete parent[last];
  return v;
}

function addAt(doc: Json, path: string, value: Json, replace: boolean): Json {
  const parts = pointer(path);
  if (parts.length === 0) return value;
  const { parent, last } = parentOf(doc, parts, replace ? "replace" : "add");
  if (Array.isArray(parent)) {
    const i = last === "-" ? parent.length : Number(last);
    if (replace) parent[i] = value;
    else parent.splice(i, 0, value);
  } else {
    if (replace && !(last in parent)) throw badRequest(`replace operation does not apply: doc is missing key: ${path}`);
    parent[last] = value;
  }
  return doc;
}

/** RFC 6902 operations applied to a deep copy of `target`. */
export function jsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw badRequest("json patch must be a list of operations");
  let doc = structuredClone(target) as Json;
  for (const op of ops as JsonPatchOp[]) {
    const value = op.value === undefined ? (undefined as unknown as Json) : structuredClone(op.value);
    switch (op.op) {
      case "add":
        doc = addAt(doc, op.path, value, false);
        break;
      case "replace":
        doc = addAt(doc, op.path, value, true);
        break;
      case "remove":
        removeAt(doc, op.path);
        break;
      case "move": {
        const v = removeAt(doc, op.from ?? "");
        doc = addAt(doc, op.path, v, false);
        break;
      }
      case "copy":
        doc = addAt(doc, op.path, structuredClone(getAt(doc, op.from ?? "")), false);
        break;
      case "test":
        if (JSON.stringify(getAt(doc, op.path)) !== JSON.stringify(value)) {
          throw new ApiError({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: `the server rejected our request due to an error in our request`, reason: "Invalid", code: 422, details: { causes: [{ reason: "FieldValueInvalid", message: `testing value ${op.path} failed`, field: "" }] } });
        }
        break;
      default:
        throw badRequest(`Unexpected kind: ${op.op}`);
    }
  }
  return doc;
}

/** Apply a PATCH body of the given Content-Type. */
export function applyPatch(contentType: string, target: unknown, patch: unknown): unknown {
  const type = contentType.split(";")[0]!.trim();
  if (type === "application/merge-patch+json") return mergePatch(target, patch);
  if (type === "application/strategic-merge-patch+json") return strategicMergePatch(target, patch);
  if (type === "application/json-patch+json") return jsonPatch(target, patch);
  throw new ApiError({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`, reason: "UnsupportedMediaType", code: 415 });
}
