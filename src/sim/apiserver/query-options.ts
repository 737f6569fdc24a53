/**
 * Query parameters read as the apiserver's parameter codec reads them into
 * ListOptions, CreateOptions, UpdateOptions, PatchOptions and DeleteOptions,
 * and validated as apimachinery's options validation does, with its messages.
 *
 * Booleans follow Convert_Slice_string_To_bool: a present parameter is true
 * unless it is "0" or "false" in any case (so the Python client's `watch=True`
 * is a watch, and so is `watch=`). Integers follow strconv.ParseInt, and a bad
 * one is 400 with Go's error text. `pretty` alone is read by strconv.ParseBool
 * (the response negotiation reads it, not the codec).
 */
import { badRequest, invalid, type StatusCause } from "./status.js";

/** A boolean query parameter as the apiserver's codec converts it. */
export function queryBool(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  if (v === null) return false;
  return !(v === "0" || v.toLowerCase() === "false");
}

/** An optional boolean (a *bool field such as sendInitialEvents or force): undefined when absent. */
export function queryOptionalBool(q: URLSearchParams, name: string): boolean | undefined {
  return q.has(name) ? queryBool(q, name) : undefined;
}

const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

/** An int64 query parameter as strconv.ParseInt(s, 10, 64) reads it; 400 with Go's message when it cannot. */
export function queryInt(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  if (!/^[+-]?[0-9]+$/.test(v)) throw badRequest(`strconv.ParseInt: parsing ${goQuote(v)}: invalid syntax`);
  const n = BigInt(v);
  if (n > INT64_MAX || n < INT64_MIN) throw badRequest(`strconv.ParseInt: parsing ${goQuote(v)}: value out of range`);
  return Number(n);
}

/** `pretty` as the response negotiation reads it (strconv.ParseBool; a value it cannot parse is false). */
export function isPretty(q: URLSearchParams, userAgent: string | undefined): boolean {
  const v = q.get("pretty");
  if (v) return ["1", "t", "T", "TRUE", "true", "True"].includes(v);
  // Without the parameter the apiserver pretty-prints for command-line tools and browsers.
  const ua = userAgent ?? "";
  return ua.startsWith("curl") || ua.startsWith("Wget") || ua.startsWith("Mozilla/5.0");
}

/** Go's %q of a string (the printable ASCII cases a query holds; others escaped as \uXXXX). */
export function goQuote(s: string): string {
  return JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Go's %#v of a []string: []string{"a", "b"}. */
function goStrings(values: string[]): string {
  return `[]string{${values.map(goQuote).join(", ")}}`;
}

/** field.NotSupported's message. */
export function notSupported(value: string, supported: string[]): string {
  return `Unsupported value: ${value}: supported values: ${supported.map((s) => JSON.stringify(s)).join(", ")}`;
}

/** ListOptions as a list or watch decodes them. */
export interface ListOptions {
  watch: boolean;
  allowWatchBookmarks: boolean;
  sendInitialEvents?: boolean;
  resourceVersion: string;
  resourceVersionMatch: string;
  limit: number;
  timeoutSeconds?: number;
  continue: string;
}

/** Decode a list's or watch's options (400 on a bad integer). */
export function listOptions(q: URLSearchParams): ListOptions {
  const limit = queryInt(q, "limit") ?? 0;
  const timeoutSeconds = queryInt(q, "timeoutSeconds");
  const sendInitialEvents = queryOptionalBool(q, "sendInitialEvents");
  return {
    watch: queryBool(q, "watch"),
    allowWatchBookmarks: queryBool(q, "allowWatchBookmarks"),
    ...(sendInitialEvents !== undefined ? { sendInitialEvents } : {}),
    resourceVersion: q.get("resourceVersion") ?? "",
    resourceVersionMatch: q.get("resourceVersionMatch") ?? "",
    limit,
    ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
    continue: q.get("continue") ?? "",
  };
}

const forbiddenCause = (field: string, message: string): StatusCause => ({ field, reason: "FieldValueForbidden", message: `Forbidden: ${message}` });
const notSupportedCause = (field: string, value: string, supported: string[]): StatusCause => ({ field, reason: "FieldValueNotSupported", message: notSupported(goQuote(value), supported) });

/** ValidateListOptions for a list (a watch's rules are in ./watch.ts): 422 Invalid on ListOptions. */
export function validateListOptions(o: ListOptions): void {
  const causes: StatusCause[] = [];
  const match = o.resourceVersionMatch;
  if (match) {
    if (!o.resourceVersion) causes.push(forbiddenCause("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"));
    if (o.continue) causes.push(forbiddenCause("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"));
    if (match !== "Exact" && match !== "NotOlderThan") causes.push(notSupportedCause("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""]));
    if (match === "Exact" && o.resourceVersion === "0") causes.push(forbiddenCause("resourceVersionMatch", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  }
  if (o.sendInitialEvents !== undefined) causes.push(forbiddenCause("sendInitialEvents", "sendInitialEvents is forbidden for list"));
  if (causes.length) throw invalid("ListOptions", "meta.k8s.io", "", causes);
}

export type OptionsKind = "CreateOptions" | "UpdateOptions" | "PatchOptions" | "DeleteOptions";

/** The options of a write, decoded and validated. */
export interface WriteOptions {
  dryRun: boolean;
  fieldManager: string;
  force?: boolean;
  propagationPolicy?: string;
  gracePeriodSeconds?: number;
}

const FIELD_MANAGER_MAX_LENGTH = 128;
const FIELD_VALIDATIONS = ["", "Ignore", "Strict", "Warn"];
const PROPAGATION_POLICIES = ["Foreground", "Background", "Orphan", "nil"];

/** The causes ValidateFieldManager gives. */
function fieldManagerCauses(fieldManager: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (Buffer.byteLength(fieldManager) > FIELD_MANAGER_MAX_LENGTH)
    causes.push({ field: "fieldManager", reason: "FieldValueTooLong", message: `Too long: may not be more than ${FIELD_MANAGER_MAX_LENGTH} bytes` });
  let position = 0;
  for (const ch of fieldManager) {
    // unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
    if (ch !== " " && !/^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch)) {
      const code = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
      causes.push({ field: "fieldManager", reason: "FieldValueInvalid", message: `Invalid value: ${goQuote(fieldManager)}: invalid character U+${code} (at position ${position})` });
    }
    position += Buffer.byteLength(ch);
  }
  return causes;
}

/**
 * Decode and validate a write's options as the create, update, patch and
 * delete handlers do (ValidateCreateOptions and its siblings): 400 for what
 * cannot be decoded, 422 Invalid on the options kind for what is not allowed.
 * `patchType` is the PATCH body's media type; `body` the DeleteOptions a DELETE
 * sent (its query is read only without one, as the apiserver does).
 */
export function writeOptions(kind: OptionsKind, q: URLSearchParams, extra: { patchType?: string; body?: Record<string, any> } = {}): WriteOptions {
  const fromBody = kind === "DeleteOptions" && extra.body !== undefined;
  const dryRunValues: string[] = fromBody ? ((extra.body!.dryRun as string[] | undefined) ?? []) : q.getAll("dryRun");
  const fieldManager = kind === "DeleteOptions" ? "" : (q.get("fieldManager") ?? "");
  const causes: StatusCause[] = [];
  const out: WriteOptions = { dryRun: dryRunValues.length > 0, fieldManager };
  if (kind === "PatchOptions") {
    const force = queryOptionalBool(q, "force");
    const apply = extra.patchType === "application/apply-patch+yaml" || extra.patchType === "application/apply-patch+cbor";
    if (!apply && force !== undefined) causes.push(forbiddenCause("force", "may not be specified for non-apply patch"));
    if (apply && fieldManager === "") causes.push({ field: "fieldManager", reason: "FieldValueRequired", message: "Required value: is required for apply patch" });
    if (force !== undefined) out.force = force;
  }
  if (kind !== "DeleteOptions") causes.push(...fieldManagerCauses(fieldManager));
  if (kind === "DeleteOptions") {
    const grace = fromBody ? (extra.body!.gracePeriodSeconds as number | undefined) : queryInt(q, "gracePeriodSeconds");
    const policy = fromBody ? (extra.body!.propagationPolicy as string | undefined) : (q.get("propagationPolicy") ?? undefined);
    if (grace !== undefined && grace !== null) out.gracePeriodSeconds = grace;
    if (policy !== undefined && policy !== null) {
      out.propagationPolicy = policy;
      if (!PROPAGATION_POLICIES.slice(0, 3).includes(policy)) causes.push(notSupportedCause("propagationPolicy", policy, PROPAGATION_POLICIES));
    }
  }
  if (dryRunValues.some((v) => v !== "All")) causes.push({ field: "dryRun", reason: "FieldValueNotSupported", message: notSupported(goStrings(dryRunValues), ["All"]) });
  if (kind !== "DeleteOptions") {
    const fieldValidation = q.get("fieldValidation") ?? "";
    if (!FIELD_VALIDATIONS.includes(fieldValidation)) causes.push(notSupportedCause("fieldValidation", fieldValidation, FIELD_VALIDATIONS));
  }
  if (causes.length) throw invalid(kind, "meta.k8s.io", "", causes);
  return out;
}
