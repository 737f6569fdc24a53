/**
 * Server-side field validation (`?fieldValidation=Strict|Warn|Ignore`), as
 * kube-apiserver does it since 1.27: the fields of a create or update body, or
 * of a merge or strategic merge patch, that the kind's schema does not declare
 * are an error under Strict (400, every such field named as the strict decoder
 * names it) and a `Warning` header each under Warn. kubectl's apply, create
 * and replace ask for Strict; requests that do not ask are not checked.
 *
 * The simulator stores what it was given either way (the apiserver would drop
 * the unknown fields); it only reports them.
 */
type Obj = Record<string, any>;

/** The unknown fields of `value` under `schemaName`, as paths ("spec.foo", "spec.containers[0].bar"). */
export function unknownFields(value: unknown, schemaName: string, schemas: Record<string, Obj>): string[] {
  const out: string[] = [];
  walk(value, schemas[schemaName], "", schemas, out);
  return out;
}

function resolve(schema: Obj | undefined, schemas: Record<string, Obj>): Obj | undefined {
  let s = schema;
  for (let i = 0; s && i < 8; i++) {
    const ref: string | undefined = s.$ref ?? s.allOf?.[0]?.$ref;
    if (!ref) return s;
    s = schemas[ref.slice("#/components/schemas/".length)];
  }
  return s;
}

/** Strategic merge patch directives are not fields. */
const isDirective = (key: string) => key.startsWith("$");

function walk(value: unknown, schema: Obj | undefined, path: string, schemas: Record<string, Obj>, out: string[]): void {
  const s = resolve(schema, schemas);
  if (!s || s["x-kubernetes-preserve-unknown-fields"] || value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    if (s.items) value.forEach((v, i) => walk(v, s.items, `${path}[${i}]`, schemas, out));
    return;
  }
  if (s.additionalProperties) {
    for (const [k, v] of Object.entries(value as Obj)) if (!isDirective(k)) walk(v, s.additionalProperties, path ? `${path}.${k}` : k, schemas, out);
    return;
  }
  const props = s.properties as Obj | undefined;
  if (!props) return;
  for (const [k, v] of Object.entries(value as Obj)) {
    if (isDirective(k)) continue;
    const p = path ? `${path}.${k}` : k;
    if (!(k in props)) out.push(p);
    else walk(v, props[k], p, schemas, out);
  }
}

/** The 400 message Strict gives: `Kind in version "v1" cannot be handled as a Kind: strict decoding error: unknown field "spec.foo", ...`. */
export function strictMessage(kind: string, version: string, fields: string[]): string {
  return `${kind} in version ${JSON.stringify(version)} cannot be handled as a ${kind}: strict decoding error: ${fields.map((f) => `unknown field ${JSON.stringify(f)}`).join(", ")}`;
}

/** The Warning header values Warn gives, one per field. */
export function warnings(fields: string[]): string[] {
  return fields.map((f) => `299 - ${JSON.stringify(`unknown field ${JSON.stringify(f)}`)}`);
}
