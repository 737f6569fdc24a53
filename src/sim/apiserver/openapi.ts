/**
 * OpenAPI v3 of the kinds the simulator stores, as kube-apiserver publishes it:
 * `GET /openapi/v3` lists one document per group-version, and each document
 * has the paths (every operation tagged with x-kubernetes-group-version-kind
 * and x-kubernetes-action; PATCH, POST and PUT take `fieldValidation`) and the
 * schemas of its kinds. kubectl reads it to decide that the server validates
 * (so `apply`/`create -f` need no `--validate=false`) and `kubectl explain`
 * reads the schemas.
 *
 * The schemas are not shipped here: they are built on first use from the
 * models of @kubernetes/client-node (generated from the official OpenAPI),
 * their attribute maps for the types and their declaration files for the
 * descriptions and which fields are required.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { RESOURCES, type ResourceDef } from "./resources.js";
import { VERSION_INFO } from "./routing.js";

type Obj = Record<string, any>;
type ModelClass = { attributeTypeMap?: { name: string; baseName: string; type: string; format: string }[] };

/** The kinds an OpenAPI document describes: every stored resource and the reviews (not metrics, served by computation). */
function describedResources(): ResourceDef[] {
  return RESOURCES.filter((d) => !d.virtual || (d.group.endsWith(".k8s.io") && d.group !== "metrics.k8s.io"));
}

/** "api/v1", "apis/apps/v1". */
function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

/** client-node's models leave out the description of every metadata field; it is the same everywhere. */
const METADATA_DESCRIPTION = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

const META = new Set(["ObjectMeta", "ListMeta", "LabelSelector", "LabelSelectorRequirement", "OwnerReference", "ManagedFieldsEntry", "Condition", "Status", "StatusDetails", "StatusCause", "DeleteOptions", "Preconditions"]);

/** Builds (once) the schemas of the models reachable from the served kinds. */
class SchemaBuilder {
  readonly schemas: Record<string, Obj> = {};
  /** Model class name -> schema name. */
  private readonly names = new Map<string, string>();
  private readonly modelsDir: string;

  constructor(private readonly models: Record<string, unknown>) {
    this.modelsDir = join(dirname(fileURLToPath(import.meta.resolve("@kubernetes/client-node"))), "gen", "models");
  }

  /** The schema name of a top-level kind, with its x-kubernetes-group-version-kind. */
  kind(def: ResourceDef, version: string): string | undefined {
    const plain = `${version.charAt(0).toUpperCase()}${version.slice(1)}${def.kind}`;
    // A kind served by two groups has its group in the model's name (EventsV1Event beside V1Event).
    const grouped = def.group ? `${def.group.charAt(0).toUpperCase()}${def.group.split(".")[0]!.slice(1)}${plain}` : plain;
    const cls = this.models[grouped] ? grouped : plain;
    if (!this.models[cls]) return undefined;
    const name = this.model(cls, def.group || "core", version)!;
    this.schemas[name]!["x-kubernetes-group-version-kind"] = [{ group: def.group, kind: def.kind, version }];
    return name;
  }

  /** The schema name of a model class, building it (and what it refers to) the first time. */
  private model(cls: string, group: string, version: string): string | undefined {
    const known = this.names.get(cls);
    if (known) return known;
    const type = this.models[cls] as ModelClass | undefined;
    if (!type?.attributeTypeMap) return undefined;
    const short = cls.replace(/^[A-Z][a-z]+V\d+(?:(?:alpha|beta)\d+)?(?=[A-Z])|^V\d+(?:(?:alpha|beta)\d+)?(?=[A-Z])/, "");
    const prefix = META.has(short) ? "io.k8s.apimachinery.pkg.apis.meta.v1" : `io.k8s.api.${group.replace(/\.k8s\.io$/, "").replace(/\.authorization$/, "")}.${version}`;
    let name = `${prefix}.${short}`;
    if (this.schemas[name]) name = `${prefix}.${cls}`;
    this.names.set(cls, name);
    const docs = this.docs(cls);
    const schema: Obj = { type: "object", ...(docs.description ? { description: docs.description } : {}) };
    this.schemas[name] = schema;
    const properties: Obj = {};
    for (const a of type.attributeTypeMap) {
      const p = this.property(a.type, a.format, group, version);
      const description = docs.fields.get(a.name) ?? (a.baseName === "metadata" ? METADATA_DESCRIPTION : undefined);
      properties[a.baseName] = description ? (p.$ref ? { allOf: [p], description } : { ...p, description }) : p.$ref ? { allOf: [p] } : p;
    }
    schema.properties = properties;
    if (docs.required.length) schema.required = docs.required;
    return name;
  }

  private property(type: string, format: string, group: string, version: string): Obj {
    const array = /^Array<(.+)>$/.exec(type);
    if (array) return { type: "array", items: this.property(array[1]!, "", group, version) };
    const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
    if (map) return { type: "object", additionalProperties: this.property(map[1]!, "", group, version) };
    switch (type) {
      case "string":
        return format === "byte" ? { type: "string", format: "byte" } : { type: "string" };
      case "number":
        return format ? { type: "integer", format } : { type: "number" };
      case "boolean":
        return { type: "boolean" };
      case "Date":
        return { type: "string", format: "date-time" };
      case "IntOrString":
        return { "x-kubernetes-int-or-string": true };
      case "any":
        return { type: "object", "x-kubernetes-preserve-unknown-fields": true };
    }
    const ref = this.model(type, group, version);
    return ref ? { $ref: `#/components/schemas/${ref}` } : { type: "object", "x-kubernetes-preserve-unknown-fields": true };
  }

  /** Class and field descriptions and the required fields, from the model's declaration file. */
  private docs(cls: string): { description?: string; fields: Map<string, string>; required: string[] } {
    const fields = new Map<string, string>();
    const required: string[] = [];
    let text = "";
    try {
      text = readFileSync(join(this.modelsDir, `${cls}.d.ts`), "utf8");
    } catch {
      return { fields, required };
    }
    const clean = (c: string) => c.split("\n").map((l) => l.replace(/^\s*\*\s?/, "").trim()).filter(Boolean).join(" ").replace(/\\'/g, "'");
    const start = text.indexOf("export declare class");
    // The class's own comment is the last one before its declaration (the file's banner comes first).
    const open = text.lastIndexOf("/**", start);
    const head = open >= 0 ? /^\/\*\*\n([\s\S]*?)\*\/\s*$/.exec(text.slice(open, start)) : null;
    // A comment never runs past its own end; a type may hold braces with semicolons ({ [key: string]: string; }).
    const field = /(?:\/\*\*\n((?:[^*]|\*(?!\/))*)\*\/\n\s*)?'([^']+)'(\?)?: (?:\{[^}]*\}|[^;\n])+;/g;
    const body = text.slice(start);
    for (let m; (m = field.exec(body)); ) {
      if (m[1]) fields.set(m[2]!, clean(m[1]));
      if (!m[3]) required.push(m[2]!);
    }
    return { ...(head ? { description: clean(head[1]!) } : {}), fields, required };
  }
}

const QUERY = (name: string, description: string, type = "string"): Obj => ({ name, in: "query", description, schema: { type, uniqueItems: true } });
const WRITE_PARAMS = [
  QUERY("dryRun", "When present, indicates that modifications should not be persisted."),
  QUERY("fieldManager", "fieldManager is a name associated with the actor or entity that is making these changes."),
  QUERY("fieldValidation", "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: Ignore, Warn (the default), Strict."),
];
const LIST_PARAMS = ["labelSelector", "fieldSelector", "continue", "resourceVersion"].map((n) => QUERY(n, `${n} of the list or watch.`)).concat([QUERY("limit", "limit of the list.", "integer"), QUERY("watch", "Watch for changes.", "boolean")]);

function operation(def: ResourceDef, version: string, action: string, id: string, ref: string | undefined, params: Obj[], body: boolean): Obj {
  const content = ref ? { "application/json": { schema: { $ref: `#/components/schemas/${ref}` } } } : undefined;
  return {
    description: `${action} ${def.kind}`,
    operationId: id,
    ...(params.length ? { parameters: params } : {}),
    ...(body && content ? { requestBody: { content, required: true } } : {}),
    responses: { "200": { description: "OK", ...(content ? { content } : {}) }, "401": { description: "Unauthorized" } },
    "x-kubernetes-action": action,
    "x-kubernetes-group-version-kind": { group: def.group, kind: def.kind, version },
  };
}

function pathsOf(def: ResourceDef, version: string, ref: string | undefined): Obj {
  const base = `/${gvPath(def.group, version)}${def.namespaced ? "/namespaces/{namespace}" : ""}/${def.resource}`;
  const id = `${def.kind}${def.group.replace(/\W/g, "")}${version}`;
  const pathParams: Obj[] = def.namespaced ? [{ name: "namespace", in: "path", required: true, schema: { type: "string", uniqueItems: true } }] : [];
  const nameParam = { name: "name", in: "path", required: true, schema: { type: "string", uniqueItems: true } };
  const verbs = new Set(def.verbs);
  const collection: Obj = { parameters: pathParams };
  if (verbs.has("list")) collection.get = operation(def, version, "list", `list${id}`, undefined, LIST_PARAMS, false);
  if (verbs.has("create")) collection.post = operation(def, version, "post", `create${id}`, ref, WRITE_PARAMS, true);
  const out: Obj = { [base]: collection };
  if (def.virtual) return out;
  const item: Obj = { parameters: [nameParam, ...pathParams] };
  if (verbs.has("get")) item.get = operation(def, version, "get", `read${id}`, ref, [], false);
  if (verbs.has("update")) item.put = operation(def, version, "put", `replace${id}`, ref, WRITE_PARAMS, true);
  if (verbs.has("patch")) item.patch = operation(def, version, "patch", `patch${id}`, ref, [...WRITE_PARAMS, QUERY("force", "Force is going to force Apply requests.", "boolean")], true);
  if (verbs.has("delete")) item.delete = operation(def, version, "delete", `delete${id}`, undefined, [QUERY("gracePeriodSeconds", "The duration in seconds before the object should be deleted.", "integer")], false);
  out[`${base}/{name}`] = item;
  return out;
}

/** The documents, built on first use. */
export class OpenApi {
  private documents?: Map<string, { body: string; hash: string }>;
  private loading?: Promise<void>;
  private kindIndex?: { schemas: Record<string, Obj>; byKind: Map<string, string> };

  /** Load client-node's models once (they are only needed here). */
  private load(): Promise<void> {
    this.loading ??= import("@kubernetes/client-node").then((models) => {
      const builder = new SchemaBuilder(models as unknown as Record<string, unknown>);
      const byGv = new Map<string, { paths: Obj; refs: string[] }>();
      for (const def of describedResources()) {
        for (const version of def.versions) {
          const key = gvPath(def.group, version);
          const doc = byGv.get(key) ?? { paths: {}, refs: [] };
          byGv.set(key, doc);
          const ref = builder.kind(def, version);
          if (ref) doc.refs.push(ref);
          Object.assign(doc.paths, pathsOf(def, version, ref));
        }
      }
      this.documents = new Map();
      const byKind = new Map<string, string>();
      for (const [name, schema] of Object.entries(builder.schemas)) {
        for (const gvk of (schema["x-kubernetes-group-version-kind"] ?? []) as Obj[]) byKind.set(`${gvk.group}/${gvk.version}/${gvk.kind}`, name);
      }
      this.kindIndex = { schemas: builder.schemas, byKind };
      for (const [key, doc] of byGv) {
        // Every schema goes into every document: a document must resolve each $ref it holds, and sharing costs nothing here.
        const body = JSON.stringify({ openapi: "3.0.0", info: { title: "Kubernetes", version: VERSION_INFO.gitVersion }, paths: doc.paths, components: { schemas: builder.schemas } });
        this.documents.set(key, { body, hash: createHash("sha512").update(body).digest("hex").slice(0, 128).toUpperCase() });
      }
    });
    return this.loading;
  }

  /** `GET /openapi/v3`: where each group-version's document is. */
  async index(): Promise<object> {
    await this.load();
    const paths: Obj = {};
    for (const [key, doc] of this.documents!) paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${doc.hash}` };
    return { paths };
  }

  /** `GET /openapi/v3/{api/v1|apis/g/v}`: the document, or undefined. */
  async document(key: string): Promise<string | undefined> {
    await this.load();
    return this.documents!.get(key)?.body;
  }

  /**
   * `GET /openapi/v2`: one Swagger 2.0 document of every served kind, converted
   * from the v3 documents (body parameters, response schemas and definitions
   * in v2's places), for clients that still read v2 as JSON.
   */
  async v2(): Promise<string> {
    await this.load();
    this.v2Body ??= JSON.stringify(swaggerV2(this.kindIndex!.schemas, [...this.documents!.values()].map((d) => JSON.parse(d.body).paths as Obj)));
    return this.v2Body;
  }

  private v2Body?: string;

  /** The schemas and the schema name of each group/version/kind, for field validation. */
  async kinds(): Promise<{ schemas: Record<string, Obj>; byKind: Map<string, string> }> {
    await this.load();
    return this.kindIndex!;
  }
}


/** A v3 schema (or parameter schema) in v2's terms: refs to definitions, int-or-string as v2 writes it. */
function v2Schema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(v2Schema);
  if (typeof schema !== "object" || schema === null) return schema;
  const s = schema as Obj;
  if (Array.isArray(s.allOf) && s.allOf.length === 1 && s.allOf[0].$ref) return { ...(v2Schema(s.allOf[0]) as Obj), ...(s.description ? { description: s.description } : {}) };
  if (s["x-kubernetes-int-or-string"]) return { type: "string", format: "int-or-string", ...(s.description ? { description: s.description } : {}) };
  const out: Obj = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === "$ref") out[k] = String(v).replace("#/components/schemas/", "#/definitions/");
    else if (k === "x-kubernetes-preserve-unknown-fields") continue;
    else out[k] = v2Schema(v);
  }
  if (s["x-kubernetes-preserve-unknown-fields"] && !out.type) out.type = "object";
  return out;
}

/** One v3 operation as v2 writes it. */
function v2Operation(op: Obj): Obj {
  const parameters: Obj[] = ((op.parameters ?? []) as Obj[]).map((p) => ({ name: p.name, in: p.in, ...(p.description ? { description: p.description } : {}), ...(p.required ? { required: true } : {}), ...(v2Schema(p.schema) as Obj) }));
  const body = op.requestBody?.content?.["application/json"]?.schema;
  if (body) parameters.push({ name: "body", in: "body", required: true, schema: v2Schema(body) });
  const responses: Obj = {};
  for (const [code, r] of Object.entries((op.responses ?? {}) as Obj)) {
    const schema = r.content?.["application/json"]?.schema;
    responses[code] = { description: r.description, ...(schema ? { schema: v2Schema(schema) } : {}) };
  }
  const { requestBody: _body, responses: _responses, parameters: _parameters, ...rest } = op;
  return { ...rest, consumes: ["*/*"], produces: ["application/json"], schemes: ["https"], ...(parameters.length ? { parameters } : {}), responses };
}

function swaggerV2(schemas: Record<string, Obj>, documents: Obj[]): Obj {
  const paths: Obj = {};
  for (const doc of documents) {
    for (const [path, item] of Object.entries(doc)) {
      const out: Obj = {};
      for (const [method, op] of Object.entries(item as Obj)) {
        out[method] = method === "parameters" ? (op as Obj[]).map((p) => ({ name: p.name, in: p.in, ...(p.required ? { required: true } : {}), ...(v2Schema(p.schema) as Obj) })) : v2Operation(op as Obj);
      }
      paths[path] = out;
    }
  }
  const definitions: Obj = {};
  for (const [name, schema] of Object.entries(schemas)) definitions[name] = v2Schema(schema);
  return { swagger: "2.0", info: { title: "Kubernetes", version: VERSION_INFO.gitVersion }, paths, definitions };
}
