/**
 * The HTTP face of the simulator: discovery, list (streamed from stored JSON,
 * with selectors and limit/continue), get, watch (history resume, 410, bookmarks,
 * timeoutSeconds), create, update, patch, delete, status and eviction
 * subresources, metrics, and the Table form. Everything answers JSON; every
 * failure is a `kind: Status` through one normaliser.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { SimCluster, R } from "./cluster.js";
import { objectKey, Entry, type KObject, type StoreEvent } from "./store.js";
import { RESOURCES, apiGroup, apiGroupList, apiResourceList, apiVersionOf, apiVersions, findResource, storageName, type ResourceDef } from "./resources.js";
import { ApiError, alreadyExists, badRequest, conflict, gone, methodNotAllowed, notFound, pathNotFound, success, toApiError, invalid } from "./status.js";
import { applyPatch } from "./patch.js";
import { fieldGetter } from "./fields.js";
import { renderTable, wantsTable } from "./table.js";
import { nodeMetrics, podMetrics } from "./metrics.js";
import { parseLabelSelector, SelectorParseError, type LabelSelector } from "../k8s/label-selector.js";
import { parseFieldSelector, type FieldSelector } from "../k8s/field-selector.js";

type Obj = Record<string, any>;

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
}

interface Target {
  def: ResourceDef;
  version: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

interface Watcher {
  resource: string;
  namespace?: string;
  matches: (obj: KObject) => boolean;
  res: ServerResponse;
  version: string;
  def: ResourceDef;
  table: boolean;
  close: () => void;
}

export interface RouterOptions {
  /** Interval of BOOKMARK events on watches that allow them (wall ms). */
  bookmarkIntervalMs?: number;
  /** Longest request log kept. */
  logSize?: number;
}

const VERSION_INFO = {
  major: "1",
  minor: "31",
  gitVersion: "v1.31.4",
  gitCommit: "a78aa47129b8539636eb86a9d00e31b2720fe06b",
  gitTreeState: "clean",
  buildDate: "2024-12-10T11:36:49Z",
  goVersion: "go1.22.9",
  compiler: "gc",
  platform: "linux/amd64",
};

const COMMA = Buffer.from(",");
const CLOSE = Buffer.from("]}");
const NL_CLOSE = Buffer.from("}\n");
const ADDED = Buffer.from('{"type":"ADDED","object":');

function listKind(def: ResourceDef): string {
  return `${def.kind}List`;
}

/** Handles every API request for one simulated cluster. */
export class ApiRouter {
  private readonly watchers = new Set<Watcher>();
  readonly log: RequestRecord[] = [];
  readonly counts = new Map<string, number>();
  private readonly eventLines = new WeakMap<StoreEvent, Buffer>();
  private readonly unsubscribe: () => void;
  serverAddress = "127.0.0.1:0";

  constructor(
    readonly cluster: SimCluster,
    private readonly options: RouterOptions = {},
  ) {
    this.unsubscribe = cluster.store.subscribe((e) => this.fanOut(e));
  }

  /** Close every watch stream (used by stop and dropConnections). */
  closeWatches(): void {
    for (const w of [...this.watchers]) w.close();
  }

  dispose(): void {
    this.closeWatches();
    this.unsubscribe();
  }

  /** The node:http request listener. */
  handle = (req: IncomingMessage, res: ServerResponse): void => {
    const record: RequestRecord = { method: req.method ?? "GET", verb: "", resource: "", subresource: "", namespace: "", name: "", path: req.url ?? "/", code: 200, userAgent: String(req.headers["user-agent"] ?? ""), impersonatedUser: String(req.headers["impersonate-user"] ?? "") };
    res.on("finish", () => {
      record.code = res.statusCode;
      this.log.push(record);
      if (this.log.length > (this.options.logSize ?? 5000)) this.log.splice(0, this.log.length - (this.options.logSize ?? 5000));
      if (record.verb) {
        const k = `${record.verb} ${record.resource}${record.subresource ? "/" + record.subresource : ""}`;
        this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
      }
    });
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      try {
        this.cluster.tick();
        this.route(req, res, Buffer.concat(chunks), record);
      } catch (err) {
        this.fail(res, err);
      }
    });
  };

  private fail(res: ServerResponse, err: unknown): void {
    if (err instanceof SelectorParseError) err = badRequest(`unable to parse requirement: ${err.message}`);
    const e = toApiError(err);
    if (res.headersSent) {
      res.end();
      return;
    }
    this.send(res, e.code, e.status);
  }

  private send(res: ServerResponse, code: number, body: unknown): void {
    const text = typeof body === "string" ? body : JSON.stringify(body);
    res.writeHead(code, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text), "Cache-Control": "no-cache, private", "Audit-Id": this.cluster.rng.uid() });
    res.end(text);
  }

  private route(req: IncomingMessage, res: ServerResponse, body: Buffer, record: RequestRecord): void {
    const url = new URL(req.url ?? "/", "http://sim");
    const q = url.searchParams;
    const parts = url.pathname.split("/").filter(Boolean);
    const method = req.method ?? "GET";
    if (url.pathname === "/version" || url.pathname === "/version/") return this.send(res, 200, VERSION_INFO);
    if (["/healthz", "/readyz", "/livez"].includes(url.pathname)) {
      res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" });
      return void res.end("ok");
    }
    if (parts[0] === "api") {
      if (parts.length === 1) return this.send(res, 200, apiVersions(this.serverAddress));
      if (parts[1] !== "v1") throw pathNotFound();
      if (parts.length === 2) return this.send(res, 200, apiResourceList("", "v1"));
      return this.resourceRequest("", "v1", parts.slice(2), method, q, req, res, body, record);
    }
    if (parts[0] === "apis") {
      if (parts.length === 1) return this.send(res, 200, apiGroupList());
      const group = parts[1]!;
      if (parts.length === 2) {
        const g = apiGroup(group);
        if (!g) throw pathNotFound();
        return this.send(res, 200, g);
      }
      const version = parts[2]!;
      if (parts.length === 3) {
        const list = apiResourceList(group, version);
        if (!list) throw pathNotFound();
        return this.send(res, 200, list);
      }
      return this.resourceRequest(group, version, parts.slice(3), method, q, req, res, body, record);
    }
    throw pathNotFound();
  }

  private parseTarget(group: string, version: string, segs: string[]): Target {
    let namespace: string | undefined;
    if (segs[0] === "namespaces" && segs.length >= 3 && segs[2] !== "status" && segs[2] !== "finalize") {
      namespace = segs[1];
      segs = segs.slice(2);
    }
    const def = findResource(group, version, segs[0]!);
    if (!def || segs.length > 3) throw pathNotFound();
    if (namespace !== undefined && !def.namespaced) throw pathNotFound();
    if (def.namespaced && namespace === undefined && segs.length > 1) throw pathNotFound();
    const t: Target = { def, version };
    if (namespace !== undefined) t.namespace = namespace;
    if (segs[1] !== undefined) t.name = segs[1];
    if (segs[2] !== undefined) {
      if (!(def.subresources ?? []).includes(segs[2])) throw pathNotFound();
      t.subresource = segs[2];
    }
    return t;
  }

  private resourceRequest(group: string, version: string, segs: string[], method: string, q: URLSearchParams, req: IncomingMessage, res: ServerResponse, body: Buffer, record: RequestRecord): void {
    const t = this.parseTarget(group, version, segs);
    record.resource = t.def.resource;
    record.subresource = t.subresource ?? "";
    record.namespace = t.namespace ?? "";
    record.name = t.name ?? "";
    const watch = q.get("watch") === "true" || q.get("watch") === "1";
    record.verb =
      method === "GET" ? (t.name ? "get" : watch ? "watch" : "list") :
      method === "POST" ? "create" :
      method === "PUT" ? "update" : method === "PATCH" ? "patch" : method === "DELETE" ? (t.name ? "delete" : "deletecollection") : method.toLowerCase();
    if (t.def.virtual) {
      if (method !== "GET") throw methodNotAllowed();
      return this.metrics(t, q, res);
    }
    switch (method) {
      case "GET":
        if (!t.name) return watch ? this.watch(t, q, req, res) : this.list(t, q, req, res);
        return this.get(t, q, req, res);
      case "POST":
        if (t.subresource === "eviction") return this.evict(t, body, res);
        if (t.name) throw methodNotAllowed();
        return this.create(t, q, body, res);
      case "PUT":
        if (!t.name) throw methodNotAllowed();
        return this.update(t, q, body, res);
      case "PATCH":
        if (!t.name) throw methodNotAllowed();
        return this.patch(t, q, String(req.headers["content-type"] ?? ""), body, res);
      case "DELETE":
        if (!t.name) throw methodNotAllowed("deletecollection is not supported by the simulator");
        return this.delete(t, q, body, res);
      default:
        throw methodNotAllowed();
    }
  }

  // ------------------------------------------------------------- helpers

  private storage(t: Target): string {
    return storageName(t.def);
  }

  private entry(t: Target): Entry {
    const e = this.cluster.store.get(this.storage(t), objectKey(t.namespace, t.name!));
    if (!e) throw notFound(t.def.resource, t.def.group, t.name!);
    return e;
  }

  /** JSON of an entry in the requested version (only PDBs are served in two). */
  private versioned(json: string, t: { def: ResourceDef; version: string }): string {
    if (t.version === t.def.versions[0]) return json;
    const from = `"apiVersion":"${apiVersionOf(t.def.group, t.def.versions[0]!)}"`;
    return json.replace(from, `"apiVersion":"${apiVersionOf(t.def.group, t.version)}"`);
  }

  private selectors(t: Target, q: URLSearchParams): { label: LabelSelector; field: FieldSelector; matches: (o: KObject) => boolean; nodeName?: string } {
    const label = parseLabelSelector(q.get("labelSelector") ?? "");
    const field = parseFieldSelector(q.get("fieldSelector") ?? "");
    const getter = fieldGetter(t.def.resource, field.requirements.map((r) => r.field), t.def.kind);
    const hasField = field.requirements.length > 0;
    const hasLabel = label.requirements.length > 0;
    const matches = (o: KObject) => (!hasLabel || label.matches(o.metadata.labels)) && (!hasField || field.matches(getter(o)));
    const byNode = t.def.resource === "pods" && !t.def.group ? field.requirements.find((r) => r.field === "spec.nodeName" && r.operator === "=") : undefined;
    return byNode ? { label, field, matches, nodeName: byNode.value } : { label, field, matches };
  }

  private parseBody(body: Buffer): KObject {
    try {
      const obj = JSON.parse(body.toString("utf8")) as KObject;
      if (typeof obj !== "object" || obj === null) throw new Error("not an object");
      return obj;
    } catch (err) {
      throw badRequest(`the body of the request could not be decoded: ${(err as Error).message}`);
    }
  }

  // ---------------------------------------------------------------- list

  private list(t: Target, q: URLSearchParams, req: IncomingMessage, res: ServerResponse): void {
    const resource = this.storage(t);
    const store = this.cluster.store;
    const sel = this.selectors(t, q);
    const limit = Number(q.get("limit") ?? 0) || 0;
    let listRv = store.resourceVersion;
    let after: string | undefined;
    const token = q.get("continue");
    if (token) {
      let parsed: { rv: number; start: string };
      try {
        parsed = JSON.parse(Buffer.from(token, "base64").toString("utf8"));
      } catch {
        throw badRequest("continue key is not valid: illegal base64 data");
      }
      if (parsed.rv < store.compactedRv(resource)) {
        throw gone("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.");
      }
      listRv = parsed.rv;
      after = parsed.start;
    }
    let source: Iterable<Entry>;
    if (sel.nodeName !== undefined) {
      // spec.nodeName is indexed, as the apiserver's watch cache indexes it.
      const keys = [...store.byIndex(resource, "nodeName", sel.nodeName)].filter((k) => (!t.namespace || k.startsWith(`${t.namespace}/`)) && (after === undefined || k > after)).sort();
      source = keys.map((k) => store.get(resource, k)!).filter(Boolean);
    } else {
      source = store.list(resource, t.namespace, after);
    }
    const items: Entry[] = [];
    let more = false;
    let remaining = 0;
    const filtered = sel.label.requirements.length > 0 || sel.field.requirements.length > 0;
    for (const e of source) {
      if (!sel.matches(e.obj)) continue;
      if (limit > 0 && items.length >= limit) {
        more = true;
        if (filtered) break;
        remaining++;
        continue;
      }
      items.push(e);
    }
    const meta: Obj = { resourceVersion: String(listRv) };
    if (more) {
      meta.continue = Buffer.from(JSON.stringify({ v: "meta.k8s.io/v1", rv: listRv, start: items[items.length - 1]!.key })).toString("base64");
      if (!filtered) meta.remainingItemCount = remaining;
    }
    if (wantsTable(req.headers.accept)) {
      return this.send(res, 200, renderTable(resource, items.map((e) => e.obj), this.cluster.clock.now(), meta, q.get("includeObject") ?? "Metadata"));
    }
    // Stream the stored JSON: no object is re-serialised for a list, and a slow
    // reader holds back the writer instead of the whole list piling up in memory.
    res.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "no-cache, private" });
    const head = Buffer.from(`{"kind":"${listKind(t.def)}","apiVersion":"${apiVersionOf(t.def.group, t.version)}","metadata":${JSON.stringify(meta)},"items":[`);
    const same = t.version === t.def.versions[0];
    let i = 0;
    const pump = (): void => {
      while (i < items.length) {
        const parts: Buffer[] = i === 0 ? [head] : [];
        let size = 0;
        while (i < items.length && size < 1 << 20) {
          const bytes = same ? items[i]!.bytes : Buffer.from(this.versioned(items[i]!.json, t));
          if (i > 0) parts.push(COMMA);
          parts.push(bytes);
          size += bytes.length;
          i++;
        }
        if (!res.write(Buffer.concat(parts))) {
          res.once("drain", pump);
          return;
        }
      }
      res.end(items.length === 0 ? Buffer.concat([head, CLOSE]) : CLOSE);
    };
    res.on("close", () => (i = items.length + 1));
    pump();
  }

  // ----------------------------------------------------------------- get

  private get(t: Target, q: URLSearchParams, req: IncomingMessage, res: ServerResponse): void {
    const e = this.entry(t);
    if (wantsTable(req.headers.accept)) {
      return this.send(res, 200, renderTable(this.storage(t), [e.obj], this.cluster.clock.now(), { resourceVersion: e.obj.metadata.resourceVersion }, q.get("includeObject") ?? "Metadata"));
    }
    this.send(res, 200, this.versioned(e.json, t));
  }

  // --------------------------------------------------------------- watch

  private eventLine(e: StoreEvent, type: string): Buffer {
    const build = () => Buffer.concat([Buffer.from(`{"type":"${type}","object":`), e.entry.bytes, NL_CLOSE]);
    if (type !== e.type) return build();
    // Serialised once per event, however many watchers receive it.
    let line = this.eventLines.get(e);
    if (line === undefined) this.eventLines.set(e, (line = build()));
    return line;
  }

  private deliver(w: Watcher, e: StoreEvent): void {
    const obj = e.entry.obj;
    if (w.namespace && obj.metadata.namespace !== w.namespace) return;
    let type: string = e.type;
    if (e.type === "MODIFIED") {
      const now = w.matches(obj);
      const before = w.matches(e.prev!.obj);
      if (!now && !before) return;
      if (now && !before) type = "ADDED";
      else if (!now && before) type = "DELETED";
    } else if (!w.matches(obj)) return;
    if (w.table) {
      const table = renderTable(w.resource, [obj], this.cluster.clock.now(), { resourceVersion: obj.metadata.resourceVersion });
      w.res.write(`{"type":"${type}","object":${JSON.stringify(table)}}\n`);
      return;
    }
    const line = w.version === w.def.versions[0] ? this.eventLine(e, type) : this.versioned(this.eventLine(e, type).toString(), w);
    w.res.write(line);
  }

  private fanOut(e: StoreEvent): void {
    for (const w of this.watchers) if (w.resource === e.resource) this.deliver(w, e);
  }

  private watch(t: Target, q: URLSearchParams, req: IncomingMessage, res: ServerResponse): void {
    const resource = this.storage(t);
    const store = this.cluster.store;
    const sel = this.selectors(t, q);
    const rvText = q.get("resourceVersion") ?? "";
    const table = wantsTable(req.headers.accept);
    res.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "no-cache, private", "Transfer-Encoding": "chunked" });
    res.flushHeaders();
    const kind = t.def.kind;
    const apiVersion = apiVersionOf(t.def.group, t.version);
    if (rvText !== "" && rvText !== "0") {
      const rv = Number(rvText);
      if (!Number.isFinite(rv)) {
        res.end(`{"type":"ERROR","object":${JSON.stringify(badRequest(`invalid resource version: ${rvText}`).status)}}\n`);
        return;
      }
      const floor = store.compactedRv(resource);
      if (rv < floor) {
        // Real apiservers answer 200 and then an ERROR event with the Expired Status.
        const status = gone(`too old resource version: ${rv} (${floor})`).status;
        res.end(`{"type":"ERROR","object":${JSON.stringify(status)}}\n`);
        return;
      }
    }
    let timer: NodeJS.Timeout | undefined;
    let bookmarkTimer: NodeJS.Timeout | undefined;
    const w: Watcher = {
      resource,
      ...(t.namespace ? { namespace: t.namespace } : {}),
      matches: sel.matches,
      res,
      version: t.version,
      def: t.def,
      table,
      close: () => {
        if (!this.watchers.delete(w)) return;
        clearTimeout(timer);
        clearInterval(bookmarkTimer);
        res.end();
      },
    };
    const bookmark = (annotations?: Record<string, string>) =>
      res.write(`{"type":"BOOKMARK","object":{"kind":"${kind}","apiVersion":"${apiVersion}","metadata":{"resourceVersion":"${store.resourceVersion}","creationTimestamp":null${annotations ? `,"annotations":${JSON.stringify(annotations)}` : ""}}}}\n`);
    // Initial state or history first, synchronously, so no change slips between.
    if (rvText === "" || rvText === "0" || q.get("sendInitialEvents") === "true") {
      for (const e of store.list(resource, t.namespace)) {
        if (!sel.matches(e.obj)) continue;
        if (table) res.write(`{"type":"ADDED","object":${JSON.stringify(renderTable(resource, [e.obj], this.cluster.clock.now(), { resourceVersion: e.obj.metadata.resourceVersion }))}}\n`);
        else res.write(t.version === t.def.versions[0] ? Buffer.concat([ADDED, e.bytes, NL_CLOSE]) : `{"type":"ADDED","object":${this.versioned(e.json, t)}}\n`);
      }
      if (q.get("sendInitialEvents") === "true" && q.get("allowWatchBookmarks") === "true") bookmark({ "k8s.io/initial-events-end": "true" });
    } else {
      for (const e of store.eventsAfter(resource, Number(rvText))) this.deliver(w, e);
    }
    this.watchers.add(w);
    const timeout = Number(q.get("timeoutSeconds") ?? 0);
    // Without timeoutSeconds the apiserver ends watches after 30-60 minutes.
    timer = setTimeout(() => w.close(), (timeout > 0 ? timeout : 1800 + Math.floor(this.cluster.rng.next() * 1800)) * 1000);
    if (q.get("allowWatchBookmarks") === "true") {
      bookmarkTimer = setInterval(() => bookmark(), this.options.bookmarkIntervalMs ?? 60_000);
    }
    req.socket.on("close", () => w.close());
    res.on("close", () => w.close());
  }

  // ---------------------------------------------------------- write paths

  private hasStatus(t: Target): boolean {
    return (t.def.subresources ?? []).includes("status");
  }

  /** Store `next` as the new version of the target, with apiserver update rules. */
  private commit(t: Target, current: Entry, next: KObject, q: URLSearchParams): Entry | KObject {
    const cur = current.obj;
    if (next.metadata?.resourceVersion && next.metadata.resourceVersion !== cur.metadata.resourceVersion) {
      throw conflict(t.def.resource, t.def.group, t.name!);
    }
    if (next.metadata?.name && next.metadata.name !== cur.metadata.name) {
      throw badRequest(`the name of the object (${next.metadata.name}) does not match the name on the URL (${cur.metadata.name})`);
    }
    let result: KObject;
    if (t.subresource === "status") {
      // The status subresource only changes status.
      result = { ...(JSON.parse(current.json) as KObject), status: next.status };
    } else {
      result = { ...next, metadata: { ...next.metadata } };
      if (this.hasStatus(t)) result.status = cur.status;
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
    this.validate(t, result);
    if (q.get("dryRun")) return { ...result, metadata: { ...result.metadata, resourceVersion: cur.metadata.resourceVersion } };
    // A write that changes nothing keeps its resourceVersion, as in the apiserver.
    if (Buffer.from(JSON.stringify({ ...result, metadata: { ...result.metadata, resourceVersion: cur.metadata.resourceVersion } })).equals(current.bytes)) return current;
    return this.cluster.store.put(this.storage(t), result);
  }

  /** The few validations clients rely on (422 Invalid). */
  private validate(t: Target, obj: KObject): void {
    if (t.def.kind === "Node") {
      const conds = ((obj.status as Obj | undefined)?.conditions ?? []) as Obj[];
      for (const [i, c] of conds.entries()) {
        if (!["True", "False", "Unknown"].includes(c.status)) {
          throw invalid("Node", "", obj.metadata.name, [{ field: `status.conditions[${i}].status`, message: `Unsupported value: "${c.status}": supported values: "False", "True", "Unknown"`, reason: "FieldValueNotSupported" }]);
        }
      }
    }
    if (t.def.kind === "Lease") {
      const d = (obj.spec as Obj | undefined)?.leaseDurationSeconds;
      if (d !== undefined && !(d > 0)) throw invalid("Lease", "coordination.k8s.io", obj.metadata.name, [{ field: "spec.leaseDurationSeconds", message: "Invalid value: must be greater than 0" }]);
    }
  }

  private reply(res: ServerResponse, code: number, t: Target, r: Entry | KObject): void {
    if (r instanceof Entry) this.send(res, code, this.versioned(r.json, t));
    else this.send(res, code, r);
  }

  private create(t: Target, q: URLSearchParams, body: Buffer, res: ServerResponse): void {
    const obj = this.parseBody(body);
    obj.metadata ??= { name: "" };
    const m = obj.metadata;
    if (t.def.namespaced) {
      if (m.namespace && m.namespace !== t.namespace) throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
      m.namespace = t.namespace!;
    }
    if (!m.name && m.generateName) m.name = `${m.generateName}${this.cluster.rng.suffix(5)}`;
    if (!m.name) throw invalid(t.def.kind, t.def.group, "", [{ field: "metadata.name", message: "Required value: name or generateName is required", reason: "FieldValueRequired" }]);
    if (this.cluster.store.get(this.storage(t), objectKey(m.namespace, m.name))) throw alreadyExists(t.def.resource, t.def.group, m.name);
    obj.apiVersion = apiVersionOf(t.def.group, t.def.versions[0]!);
    obj.kind = t.def.kind;
    delete m.resourceVersion;
    delete m.uid;
    delete m.creationTimestamp;
    if (t.def.kind === "Pod") {
      const spec = (obj.spec ?? {}) as Obj;
      spec.restartPolicy ??= "Always";
      spec.terminationGracePeriodSeconds ??= 30;
      spec.schedulerName ??= "default-scheduler";
      spec.dnsPolicy ??= "ClusterFirst";
      obj.spec = spec;
      obj.status = { phase: "Pending", qosClass: "BestEffort" };
    }
    this.validate(t, obj);
    if (q.get("dryRun")) return this.send(res, 201, obj);
    const e = this.cluster.create(this.storage(t), obj);
    this.cluster.tick();
    this.reply(res, 201, t, e);
  }

  private update(t: Target, q: URLSearchParams, body: Buffer, res: ServerResponse): void {
    const current = this.entry(t);
    const next = this.parseBody(body);
    // Without a resourceVersion an update is unconditional, as the apiserver allows for these kinds.
    next.metadata ??= { name: t.name! };
    const r = this.commit(t, current, next, q);
    this.cluster.tick();
    this.reply(res, 200, t, r);
  }

  private patch(t: Target, q: URLSearchParams, contentType: string, body: Buffer, res: ServerResponse): void {
    const current = this.entry(t);
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
    const r = this.commit(t, current, patched, q);
    this.cluster.tick();
    this.reply(res, 200, t, r);
  }

  private delete(t: Target, q: URLSearchParams, body: Buffer, res: ServerResponse): void {
    const current = this.entry(t);
    const opts = body.length ? (this.parseBody(body) as unknown as Obj) : {};
    const pre = opts.preconditions ?? {};
    if (pre.uid && pre.uid !== current.obj.metadata.uid) throw conflict(t.def.resource, t.def.group, t.name!);
    if (pre.resourceVersion && pre.resourceVersion !== current.obj.metadata.resourceVersion) throw conflict(t.def.resource, t.def.group, t.name!);
    const graceText = q.get("gracePeriodSeconds");
    const grace = graceText !== null ? Number(graceText) : (opts.gracePeriodSeconds as number | undefined);
    if (q.get("dryRun") || (opts.dryRun ?? []).length) return this.reply(res, 200, t, current);
    if (t.def.kind === "Pod") {
      const obj = this.cluster.deletePod(current.key, grace);
      this.cluster.tick();
      return this.send(res, 200, obj);
    }
    const gone = this.cluster.store.remove(this.storage(t), current.key)!;
    if (t.def.kind === "Node") {
      this.cluster.store.remove(R.leases, objectKey("kube-node-lease", current.key));
    }
    this.cluster.tick();
    this.send(res, 200, success(200, { name: t.name!, ...(t.def.group ? { group: t.def.group } : {}), kind: t.def.resource, uid: gone.obj.metadata.uid! }));
  }

  private evict(t: Target, body: Buffer, res: ServerResponse): void {
    const ev = this.parseBody(body) as unknown as Obj;
    if (ev.metadata?.name && ev.metadata.name !== t.name) throw badRequest(`name in URL does not match name in Eviction object`);
    if (ev.kind && ev.kind !== "Eviction") throw badRequest(`unexpected kind ${ev.kind}, expected Eviction`);
    const grace = ev.deleteOptions?.gracePeriodSeconds as number | undefined;
    this.cluster.evict(t.namespace!, t.name!, grace);
    this.cluster.tick();
    this.send(res, 201, success(201));
  }

  // ------------------------------------------------------------- metrics

  private metrics(t: Target, q: URLSearchParams, res: ServerResponse): void {
    const label = parseLabelSelector(q.get("labelSelector") ?? "");
    const apiVersion = "metrics.k8s.io/v1beta1";
    const source = t.def.resource === "nodes" ? R.nodes : R.pods;
    const compute = (o: KObject) => (t.def.resource === "nodes" ? nodeMetrics(this.cluster, o) : podMetrics(this.cluster, o));
    if (t.name) {
      const e = this.cluster.store.get(source, objectKey(t.namespace, t.name));
      const m = e ? compute(e.obj) : undefined;
      if (!m) throw notFound(t.def.resource, "metrics.k8s.io", t.name);
      return this.send(res, 200, { kind: t.def.kind, apiVersion, ...m });
    }
    const items: object[] = [];
    for (const e of this.cluster.store.list(source, t.namespace)) {
      if (!label.matches(e.obj.metadata.labels)) continue;
      const m = compute(e.obj);
      if (m) items.push(m);
    }
    this.send(res, 200, { kind: `${t.def.kind}List`, apiVersion, metadata: {}, items });
  }
}

/** Every resource served, for tests that walk them all. */
export const SERVED = RESOURCES;
export { ApiError };
