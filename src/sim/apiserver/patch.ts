/**
 * The three PATCH flavours kubectl and clients send: JSON merge patch (RFC
 * 7396), strategic merge patch (lists of known fields merged by their key, as
 * the apiserver does from the Go struct tags), and JSON patch (RFC 6902, by
 * fast-json-patch; test/sim/json-patch-conformance.test.ts runs the public
 * RFC 6902 suite against the PATCH endpoint).
 */
import jsonPatchLibrary, { type Operation } from "fast-json-patch";
import { badRequest, requestEntityTooLarge, unsupportedMediaType, ApiError } from "./status.js";

const { applyPatch: applyJsonPatch, JsonPatchError } = jsonPatchLibrary;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** RFC 7396: objects merge, null deletes, anything else (lists too) replaces. */
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
export const MERGE_KEYS: Record<string, string> = {
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

/** The operations RFC 6902 defines (the library also knows a private `_get`, which the apiserver refuses). */
const JSON_PATCH_OPS = new Set(["add", "remove", "replace", "move", "copy", "test"]);
/** The apiserver's limit on operations in one JSON patch. */
const MAX_JSON_PATCH_OPERATIONS = 10_000;

/**
 * A JSON patch the document refused, as the apiserver answers it: 422 Invalid
 * with the patch library's message as the one cause.
 */
function patchDoesNotApply(message: string): ApiError {
  return new ApiError({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: "the server rejected our request due to an error in our request", reason: "Invalid", details: { causes: [{ reason: "UnexpectedServerResponse", message }] }, code: 422 });
}

/** What went wrong, in one line: the operation and the library's reason (never the document, which its message includes). */
function describeFailure(err: unknown, ops: JsonObject[]): string | undefined {
  if (err instanceof JsonPatchError) {
    const op = ops[err.index ?? 0] ?? {};
    const reason = err.name === "TEST_OPERATION_FAILED" ? "test failed" : err.message.split("\n")[0];
    return `${String(op.op)} operation ${err.index ?? 0} on ${JSON.stringify(op.path)} does not apply: ${reason}`;
  }
  // The library's guard against prototype pollution (`__proto__`, `constructor/prototype` in a path).
  if (err instanceof TypeError && err.message.startsWith("JSON-Patch: modifying `__proto__`")) return "a path may not name __proto__ or constructor/prototype";
  return undefined;
}

/**
 * RFC 6902 operations applied to a deep copy of `target` by fast-json-patch,
 * with every operation validated. As in the apiserver: a body that is not a
 * list of objects is 400, more than 10,000 operations 413, and any operation
 * that does not apply 422 (nothing of the patch is applied).
 */
export function jsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops) || !ops.every(isObject)) throw badRequest("json patch must be a list of operation objects");
  if (ops.length > MAX_JSON_PATCH_OPERATIONS) throw requestEntityTooLarge(`The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${ops.length}`);
  const foreign = ops.find((op) => !JSON_PATCH_OPS.has(op.op as string));
  if (foreign) throw patchDoesNotApply(`Unexpected kind: ${String(foreign.op)}`);
  try {
    return applyJsonPatch(target, ops as unknown as Operation[], true, false).newDocument;
  } catch (err) {
    const message = describeFailure(err, ops);
    if (message === undefined) throw err;
    throw patchDoesNotApply(message);
  }
}

const MERGE_PATCH = "application/merge-patch+json";
const STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json";
const JSON_PATCH = "application/json-patch+json";
/** Server-side apply's body type (./managed-fields.ts). */
export const APPLY_PATCH = "application/apply-patch+yaml";

/** The PATCH body types served. */
export const PATCH_MEDIA_TYPES: readonly string[] = [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH];

/** Apply a PATCH body of the given Content-Type. */
export function applyPatch(contentType: string, target: unknown, patch: unknown): unknown {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  if (type === MERGE_PATCH) return mergePatch(target, patch);
  if (type === STRATEGIC_MERGE_PATCH) return strategicMergePatch(target, patch);
  if (type === JSON_PATCH) return jsonPatch(target, patch);
  throw unsupportedMediaType(PATCH_MEDIA_TYPES);
}
