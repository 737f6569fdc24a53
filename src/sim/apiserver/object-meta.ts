/**
 * ValidateObjectMeta as the apiserver runs it on every write of every kind:
 * the name (and generateName) by the kind's name rule, the namespace, labels,
 * annotation keys and their total size, with apimachinery's messages word for
 * word (k8s.io/apimachinery/pkg/api/validation and pkg/util/validation).
 */
import type { KObject } from "../store.js";
import { labelKeyErrors, labelValueErrors } from "../../k8s/label-validation.js";
import type { StatusCause } from "./status.js";
import type { ResourceDef } from "./resources.js";
import { goQuote } from "./query-options.js";

/** RegexError: the message, its examples and the regex. */
function regexError(message: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${message} (regex used for validation is '${fmt}')`;
  return `${message} (e.g. ${examples.map((e) => `'${e}', `).join(" or ")}regex used for validation is '${fmt}')`;
}

const maxLenError = (n: number) => `must be no more than ${n} characters`;

const DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const DNS1035_LABEL_RE = new RegExp(`^${DNS1035_LABEL_FMT}$`);

/** validation.IsDNS1123Label. */
export function dns1123LabelErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!DNS1123_LABEL_RE.test(value))
    errs.push(
      regexError(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        DNS1123_LABEL_FMT,
        "my-name",
        "123-abc",
      ),
    );
  return errs;
}

/** validation.IsDNS1123Subdomain. */
export function dns1123SubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push(maxLenError(253));
  if (!DNS1123_SUBDOMAIN_RE.test(value))
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_FMT,
        "example.com",
      ),
    );
  return errs;
}

/** validation.IsDNS1035Label (Service names). */
export function dns1035LabelErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!DNS1035_LABEL_RE.test(value))
    errs.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035_LABEL_FMT,
        "my-name",
        "abc-123",
      ),
    );
  return errs;
}

/** path.IsValidPathSegmentName (RBAC names). */
export function pathSegmentErrors(value: string): string[] {
  if (value === "." || value === "..") return [`may not be '${value}'`];
  const errs: string[] = [];
  for (const c of ["/", "%"]) if (value.includes(c)) errs.push(`may not contain '${c}'`);
  return errs;
}

/** A kind's ValidateNameFunc: `prefix` for a generateName, whose trailing '-' is allowed. */
type NameRule = (name: string) => string[];

const PATH_SEGMENT_KINDS = new Set(["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]);

function nameRule(kind: string): NameRule {
  if (kind === "Namespace") return dns1123LabelErrors;
  if (kind === "Service") return dns1035LabelErrors;
  if (PATH_SEGMENT_KINDS.has(kind)) return pathSegmentErrors;
  return dns1123SubdomainErrors;
}

/** maskTrailingDash, as apimachinery has it (it drops the last two characters for one 'a'): a generateName may end in '-'. */
function asPrefix(name: string): string {
  return name.length > 1 && name.endsWith("-") ? `${name.slice(0, -2)}a` : name;
}

/** The annotations' size limit (TotalAnnotationSizeLimitB). */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

const invalidCause = (field: string, value: string, message: string): StatusCause => ({ field, reason: "FieldValueInvalid", message: `Invalid value: ${goQuote(value)}: ${message}` });

/**
 * The causes ValidateObjectMetaAccessor gives for an object of `def`, in its
 * order: generateName, name, namespace, labels, annotations. Path-segment
 * kinds (RBAC) use their own rule; the rest of the kind's validation is in
 * ./strategies.ts.
 */
export function objectMetaCauses(def: ResourceDef, obj: KObject): StatusCause[] {
  const m = obj.metadata ?? ({} as KObject["metadata"]);
  const rule = nameRule(def.kind);
  const causes: StatusCause[] = [];
  const generateName = typeof m.generateName === "string" ? m.generateName : "";
  if (generateName) {
    const prefix = PATH_SEGMENT_KINDS.has(def.kind) ? generateName : asPrefix(generateName);
    for (const msg of rule(prefix)) causes.push(invalidCause("metadata.generateName", generateName, msg));
  }
  const name = typeof m.name === "string" ? m.name : "";
  if (!name) causes.push({ field: "metadata.name", reason: "FieldValueRequired", message: "Required value: name or generateName is required" });
  else for (const msg of rule(name)) causes.push(invalidCause("metadata.name", name, msg));
  if (def.namespaced) {
    const ns = typeof m.namespace === "string" ? m.namespace : "";
    if (!ns) causes.push({ field: "metadata.namespace", reason: "FieldValueRequired", message: "Required value" });
    else for (const msg of dns1123LabelErrors(ns)) causes.push(invalidCause("metadata.namespace", ns, msg));
  } else if (m.namespace) {
    causes.push({ field: "metadata.namespace", reason: "FieldValueForbidden", message: "Forbidden: not allowed on this type" });
  }
  for (const [key, value] of Object.entries((m.labels ?? {}) as Record<string, unknown>)) {
    for (const msg of labelKeyErrors(key)) causes.push(invalidCause("metadata.labels", key, msg));
    for (const msg of labelValueErrors(String(value))) causes.push(invalidCause("metadata.labels", String(value), msg));
  }
  const annotations = (m.annotations ?? {}) as Record<string, unknown>;
  let size = 0;
  for (const [key, value] of Object.entries(annotations)) {
    // Annotation keys are qualified names in any case.
    for (const msg of labelKeyErrors(key.toLowerCase())) causes.push(invalidCause("metadata.annotations", key, msg));
    size += Buffer.byteLength(key) + Buffer.byteLength(String(value));
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) causes.push({ field: "metadata.annotations", reason: "FieldValueTooLong", message: `Too long: may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes` });
  return causes;
}
