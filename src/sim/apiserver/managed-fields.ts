/**
 * Field ownership as the apiserver's field manager keeps it in
 * metadata.managedFields, and server-side apply over it: every write records
 * which manager set which fields (FieldsV1), an apply patch merges the
 * applier's intent, removes what it set before and no longer applies, and is
 * refused with a 409 Conflict naming the other managers of the fields it
 * would change (unless forced, which takes those fields over).
 *
 * Without the kinds' schemas, lists are keyed by the same field names the
 * strategic merge patch uses (./patch.ts MERGE_KEYS); other lists are atomic.
 */
import { MERGE_KEYS } from "./patch.js";
import type { ApiError } from "./status.js";
import { conflictStatus } from "./status.js";

type Obj = Record<string, any>;

/** A field path: "f:name" and 'k:{"name":"x"}' segments, as FieldsV1 names them. */
type Path = string[];

export interface ManagedFieldsEntry {
  manager: string;
  operation: "Apply" | "Update";
  apiVersion: string;
  time: string;
  fieldsType: "FieldsV1";
  fieldsV1: Obj;
  subresource?: string;
}

/** Fields the field manager never tracks (identity and server-set metadata). */
const UNTRACKED_META = new Set(["name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"]);

/** Maps (as opposed to structs) whose own path is owned with their keys ("." in FieldsV1). */
const GRANULAR_MAPS = new Set(["labels", "annotations", "data", "stringData", "binaryData", "matchLabels", "nodeSelector", "limits", "requests"]);

function isObject(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A path as a set member: its segments joined by NUL (no segment holds one). */
const keyOf = (joined: string) => joined;

/** The paths of every field set in `obj` (leaves, granular maps, keyed list items). */
export function fieldPaths(obj: Obj, withStatus: boolean, mapDots = true): Set<string> {
  const out = new Set<string>();
  const walk = (value: unknown, path: Path, field: string) => {
    if (isObject(value)) {
      // A keyed list item is owned as itself; a map only by an update that brought it (an apply owns its keys).
      if (path.length && ((mapDots && GRANULAR_MAPS.has(field)) || path[path.length - 1]!.startsWith("k:"))) out.add(keyOf([...path, "."].join("\u0000")));
      const entries = Object.entries(value);
      if (entries.length === 0 && path.length) out.add(keyOf(path.join("\u0000")));
      for (const [k, v] of entries) walk(v, [...path, `f:${k}`], k);
      return;
    }
    if (Array.isArray(value) && MERGE_KEYS[field] && value.every((v) => isObject(v) && v[MERGE_KEYS[field]!] !== undefined)) {
      for (const item of value) walk(item, [...path, `k:${JSON.stringify({ [MERGE_KEYS[field]!]: item[MERGE_KEYS[field]!] })}`], "");
      return;
    }
    if (Array.isArray(value) && field === "finalizers") {
      for (const item of value) out.add(keyOf([...path, `v:${JSON.stringify(item)}`].join("\u0000")));
      return;
    }
    out.add(keyOf(path.join("\u0000")));
  };
  for (const [k, v] of Object.entries(obj)) {
    if (k === "apiVersion" || k === "kind" || (k === "status" && !withStatus)) continue;
    if (k === "metadata" && isObject(v)) {
      for (const [mk, mv] of Object.entries(v)) if (!UNTRACKED_META.has(mk)) walk(mv, ["f:metadata", `f:${mk}`], mk);
      continue;
    }
    walk(v, [`f:${k}`], k);
  }
  return out;
}

const split = (p: string): Path => p.split("\u0000");

/** A set of paths as FieldsV1. */
export function toFieldsV1(paths: Set<string>): Obj {
  const root: Obj = {};
  for (const p of paths) {
    let node = root;
    for (const seg of split(p)) node = node[seg] ??= {};
  }
  return root;
}

/** FieldsV1 as a set of paths. */
export function fromFieldsV1(fields: Obj): Set<string> {
  const out = new Set<string>();
  const walk = (node: Obj, path: Path) => {
    const keys = Object.keys(node);
    if (keys.length === 0 && path.length) out.add(keyOf(path.join("\u0000")));
    for (const k of keys) walk(node[k] as Obj, [...path, k]);
  };
  walk(fields, []);
  return out;
}

/** The value at a path of an object (undefined when absent). */
function valueAt(obj: unknown, path: Path): unknown {
  let cur: unknown = obj;
  for (const seg of path) {
    if (seg === ".") return cur;
    if (seg.startsWith("f:")) cur = isObject(cur) ? cur[seg.slice(2)] : undefined;
    else if (seg.startsWith("k:")) {
      const key = JSON.parse(seg.slice(2)) as Obj;
      const [k, v] = Object.entries(key)[0]!;
      cur = Array.isArray(cur) ? cur.find((item) => isObject(item) && item[k] === v) : undefined;
    } else if (seg.startsWith("v:")) {
      const want = JSON.stringify(JSON.parse(seg.slice(2)));
      cur = Array.isArray(cur) ? cur.find((item) => JSON.stringify(item) === want) : undefined;
    }
    if (cur === undefined) return undefined;
  }
  return cur;
}

/** A path as fieldpath.Path.String() prints it: .spec.containers[name="app"].image. */
export function pathString(p: string): string {
  return split(p)
    .filter((s) => s !== ".")
    .map((s) => {
      if (s.startsWith("f:")) return `.${s.slice(2)}`;
      if (s.startsWith("k:")) return `[${Object.entries(JSON.parse(s.slice(2)) as Obj).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(",")}]`;
      return `[=${s.slice(2)}]`;
    })
    .join("");
}

/** The manager name of a write without fieldManager: the User-Agent up to its first '/' (prefixFromUserAgent). */
export function managerFromUserAgent(userAgent: string): string {
  const name = userAgent.split("/")[0] ?? "";
  return name.length > 128 ? name.slice(0, 128) : name;
}

function entriesOf(obj: Obj | undefined): ManagedFieldsEntry[] {
  return ((obj?.metadata?.managedFields ?? []) as ManagedFieldsEntry[]).map((e) => ({ ...e }));
}

/** The order the apiserver keeps entries in: Apply before Update, then by time, manager, apiVersion. */
function sortEntries(entries: ManagedFieldsEntry[]): ManagedFieldsEntry[] {
  return entries.sort((p, q) => (p.operation !== q.operation ? (p.operation < q.operation ? -1 : 1) : p.time !== q.time ? (p.time < q.time ? -1 : 1) : p.manager !== q.manager ? (p.manager < q.manager ? -1 : 1) : p.apiVersion < q.apiVersion ? -1 : p.apiVersion > q.apiVersion ? 1 : 0));
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Give `manager` (operation Update) the fields that differ between `before` and `after`; other managers lose them. */
export function recordUpdate(before: Obj | undefined, after: Obj, manager: string, apiVersion: string, time: string, withStatus: boolean, subresource?: string): void {
  const entries = entriesOf(before);
  const afterPaths = fieldPaths(after, withStatus);
  const changed = new Set<string>();
  for (const p of afterPaths) {
    // A map's own entry changes hands only when the map comes into being.
    const dot = p.endsWith("\u0000.");
    const was = before ? valueAt(before, split(p)) : undefined;
    if (dot ? was === undefined : !before || !sameValue(was, valueAt(after, split(p)))) changed.add(p);
  }
  const removed = new Set<string>();
  if (before) for (const p of fieldPaths(before, withStatus)) if (!afterPaths.has(p)) removed.add(p);
  if (changed.size === 0 && removed.size === 0) {
    if (entries.length) after.metadata.managedFields = entries;
    else delete after.metadata.managedFields;
    return;
  }
  const kept: ManagedFieldsEntry[] = [];
  let mine: Set<string> | undefined;
  for (const e of entries) {
    const paths = fromFieldsV1(e.fieldsV1);
    const isMine = e.manager === manager && e.operation === "Update" && e.apiVersion === apiVersion && (e.subresource ?? "") === (subresource ?? "");
    for (const p of [...changed, ...removed]) paths.delete(p);
    if (isMine) mine = paths;
    else if (paths.size) kept.push({ ...e, fieldsV1: toFieldsV1(paths) });
  }
  mine ??= new Set();
  for (const p of changed) mine.add(p);
  if (mine.size) kept.push({ manager, operation: "Update", apiVersion, time, fieldsType: "FieldsV1", fieldsV1: toFieldsV1(mine), ...(subresource ? { subresource } : {}) });
  after.metadata.managedFields = sortEntries(kept);
}

/** How a conflicting manager is named in the message (printManager). */
function printManager(e: ManagedFieldsEntry): string {
  let s = JSON.stringify(e.manager);
  if (e.subresource) s = `${s} with subresource ${JSON.stringify(e.subresource)}`;
  return e.operation === "Update" ? `${s} using ${e.apiVersion} at ${e.time}` : s;
}

/** The 409 the apiserver answers an apply that would change other managers' fields. */
function conflictError(conflicts: { entry: ManagedFieldsEntry; path: string }[]): ApiError {
  let message: string;
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0]!.entry)}: ${pathString(conflicts[0]!.path)}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) {
      const m = printManager(c.entry);
      byManager.set(m, [...(byManager.get(m) ?? []), pathString(c.path)]);
    }
    const lines: string[] = [];
    for (const m of [...byManager.keys()].sort()) {
      lines.push(`conflicts with ${m}:`);
      for (const p of byManager.get(m)!) lines.push(`- ${p}`);
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join("\n")}`;
  }
  return conflictStatus(message, conflicts.map((c) => ({ reason: "FieldManagerConflict", message: `conflict with ${printManager(c.entry)}`, field: pathString(c.path) })));
}

/** Remove the field at `path` from `obj` (a keyed list item, a map key, a set member). */
function removeAt(obj: Obj, path: Path): void {
  const parentPath = path.slice(0, -1);
  const last = path[path.length - 1]!;
  if (last === ".") return removeAt(obj, parentPath);
  const parent = parentPath.length ? valueAt(obj, parentPath) : obj;
  if (last.startsWith("f:") && isObject(parent)) delete parent[last.slice(2)];
  else if (Array.isArray(parent)) {
    const target = valueAt(obj, path);
    const i = parent.indexOf(target);
    if (i >= 0) parent.splice(i, 1);
  }
}

/** Merge the applied configuration into the live object (maps merge, keyed lists by key, other lists replace). */
function merge(live: unknown, applied: unknown, field: string): unknown {
  if (isObject(applied)) {
    const out: Obj = isObject(live) ? { ...live } : {};
    for (const [k, v] of Object.entries(applied)) out[k] = merge(out[k], v, k);
    return out;
  }
  const key = MERGE_KEYS[field];
  if (Array.isArray(applied) && key && Array.isArray(live)) {
    const out = [...live];
    for (const item of applied) {
      const i = out.findIndex((x) => isObject(x) && isObject(item) && x[key] === item[key]);
      if (i >= 0) out[i] = merge(out[i], item, "");
      else out.push(item);
    }
    return out;
  }
  if (Array.isArray(applied) && field === "finalizers" && Array.isArray(live)) return [...new Set([...live, ...applied])];
  return applied;
}

/**
 * Server-side apply of `applied` by `manager` onto `live` (undefined when it
 * does not exist yet): the object to store, with its managedFields, or the
 * 409 Conflict (unless `force`).
 */
export function serverSideApply(live: Obj | undefined, applied: Obj, manager: string, apiVersion: string, time: string, force: boolean, withStatus: boolean): Obj {
  const entries = entriesOf(live);
  const appliedPaths = fieldPaths(applied, withStatus, false);
  const conflicts: { entry: ManagedFieldsEntry; path: string }[] = [];
  const isMine = (e: ManagedFieldsEntry) => e.manager === manager && e.operation === "Apply";
  if (live) {
    for (const e of entries) {
      if (isMine(e)) continue;
      const owned = fromFieldsV1(e.fieldsV1);
      // A map's own entry (".") is shared by whoever sets a key in it: never a conflict.
      for (const p of appliedPaths) if (!p.endsWith("\u0000.") && owned.has(p) && !sameValue(valueAt(live, split(p)), valueAt(applied, split(p)))) conflicts.push({ entry: e, path: p });
    }
  }
  if (conflicts.length && !force) throw conflictError(conflicts);
  const result = (live ? merge(structuredClone(live), applied, "") : structuredClone(applied)) as Obj;
  // What this manager applied before and applies no longer goes, unless another manager also owns it.
  const previous = entries.find(isMine);
  const others = new Set<string>();
  for (const e of entries) if (!isMine(e)) for (const p of fromFieldsV1(e.fieldsV1)) others.add(p);
  if (previous) {
    const gone = [...fromFieldsV1(previous.fieldsV1)].filter((p) => !appliedPaths.has(p) && !others.has(p));
    // Deepest first, so a list item goes before the list is looked at again.
    for (const p of gone.sort((a, b) => split(b).length - split(a).length)) removeAt(result, split(p));
  }
  const forced = new Set(conflicts.map((c) => c.path));
  const kept: ManagedFieldsEntry[] = [];
  for (const e of entries) {
    if (isMine(e)) continue;
    const owned = fromFieldsV1(e.fieldsV1);
    for (const p of forced) owned.delete(p);
    if (owned.size) kept.push({ ...e, fieldsV1: toFieldsV1(owned) });
  }
  const fieldsV1 = toFieldsV1(appliedPaths);
  // An apply that changes nothing keeps its entry as it was, time and all (so the object is not written).
  const unchanged = previous && live && previous.apiVersion === apiVersion && sameValue(previous.fieldsV1, fieldsV1) && sameValue({ ...result, metadata: { ...result.metadata, managedFields: undefined } }, { ...live, metadata: { ...live.metadata, managedFields: undefined } });
  kept.push(unchanged ? previous : { manager, operation: "Apply", apiVersion, time, fieldsType: "FieldsV1", fieldsV1 });
  result.metadata ??= {};
  result.metadata.managedFields = sortEntries(kept);
  return result;
}
