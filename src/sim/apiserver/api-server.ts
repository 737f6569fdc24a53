/**
 * The HTTP face of the simulator, laid out as kube-apiserver's handler chain:
 * intake (body, request log and counters), request guards (Host, Origin,
 * Content-Type: ./request-guards.ts), routing (./routing.ts), then the
 * handler for the verb: reads (./list.ts), watches (./watch.ts), writes
 * (./writes.ts), subresources (./subresources.ts) and metrics.k8s.io
 * (./metrics-api.ts). Everything answers JSON; every failure is a
 * `kind: Status` through one normaliser (`fail`).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { SimCluster } from "../cluster.js";
import { badRequest, methodNotAllowed, toApiError } from "./status.js";
import { resolveRoute } from "./routing.js";
import { mediaType, refusal, type ServerIdentity } from "./request-guards.js";
import { serveGet, serveList } from "./list.js";
import { WatchServer } from "./watch.js";
import { serveCreate, serveDelete, servePatch, serveUpdate, type Admit } from "./writes.js";
import { serveEviction } from "./subresources.js";
import { serveMetrics } from "./metrics-api.js";
import { servePodLog, servePortForward } from "./pod-streams.js";
import { admitPodSecurity, warningHeaders } from "./pod-security.js";
import { isNodeProxy, serveNodeProxy } from "./node-proxy.js";
import { entryOf, parseBody, send, type RequestRecord, type Target } from "./request.js";
import { writeOptions } from "./query-options.js";
import { SelectorParseError } from "../../k8s/label-selector.js";
import { AccessControl } from "./access-control.js";
import type { UserInfo } from "./authentication.js";
import { requestAttributes } from "./request-info.js";
import { REVIEW_GROUPS, serveReview, serveTokenRequest } from "./reviews.js";
import { OpenApi } from "./openapi.js";
import { PROTOBUF, protobufToJson } from "./protobuf.js";
import { forbidden, notAcceptable, notFound, pathNotFound, qualified } from "./status.js";
import { R } from "../storage-names.js";
import { strictMessage, unknownFields, warnings } from "./field-validation.js";

export type { RequestRecord } from "./request.js";

export interface ApiServerOptions extends Partial<ServerIdentity> {
  /** Interval of BOOKMARK events on watches that allow them (wall ms). */
  bookmarkIntervalMs?: number;
  /** Serve the watch-list protocol (default true). */
  watchList?: boolean;
  /** Longest request log kept. */
  logSize?: number;
  /** Authenticate every request by bearer token and authorise it by RBAC (`sim --rbac`). */
  rbac?: boolean;
  /** Namespace deletion and NamespaceLifecycle admission (given under `--rbac`): DELETE marks a namespace Terminating. */
  namespaces?: { terminate(name: string): void };
}

const DEFAULT_LOG_SIZE = 5000;

/** Handles every API request for one simulated cluster. */
export class ApiServer {
  readonly log: RequestRecord[] = [];
  readonly counts = new Map<string, number>();
  private readonly watches: WatchServer;
  private readonly openapi = new OpenApi();
  /** The field validation the request being routed asked for (routing is synchronous, so one at a time). */
  private fieldValidation?: { mode: "Strict" | "Warn"; schemas: Record<string, any>; byKind: Map<string, string> };
  /** Authentication, impersonation and authorization (enforced with `rbac`). */
  readonly access: AccessControl;
  /** host:port the server listens on, as discovery reports it. */
  serverAddress = "127.0.0.1:0";

  constructor(
    readonly cluster: SimCluster,
    private readonly options: ApiServerOptions = {},
  ) {
    this.watches = new WatchServer(cluster, options.bookmarkIntervalMs, options.watchList ?? true);
    this.access = new AccessControl(cluster, options.rbac ?? false);
    this.identity = { listenHost: options.listenHost ?? "127.0.0.1", scheme: options.scheme ?? "http" };
  }

  private readonly identity: ServerIdentity;

  /** Close every watch stream (used by stop and dropConnections). */
  closeWatches(): void {
    this.watches.closeAll();
  }

  dispose(): void {
    this.watches.dispose();
  }

  /** The node:http request listener. */
  handle = (req: IncomingMessage, res: ServerResponse): void => {
    const record: RequestRecord = { method: req.method ?? "GET", verb: "", resource: "", subresource: "", namespace: "", name: "", path: req.url ?? "/", code: 200, userAgent: String(req.headers["user-agent"] ?? ""), impersonatedUser: String(req.headers["impersonate-user"] ?? ""), user: "" };
    res.on("finish", () => this.recordRequest(record, res.statusCode));
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      try {
        let body: Buffer = Buffer.concat(chunks);
        // Guards first: a refused request does nothing at all, not even a tick.
        const refused = refusal({ method: req.method ?? "GET", headers: req.headers, bodyLength: body.length }, this.identity);
        if (refused) throw refused;
        // kubectl's typed clients send protobuf; the handlers read JSON.
        if (mediaType(req.headers["content-type"]) === PROTOBUF) body = protobufToJson(body);
        this.cluster.tick();
        // Then who is asking and whether they may, from the URL alone (403 comes before 404).
        const url = new URL(req.url ?? "/", "http://sim");
        const user = this.access.identify(req.headers, url.pathname);
        record.user = user.username;
        this.access.authorize(user, requestAttributes(req.method ?? "GET", url));
        const fieldValidation = url.searchParams.get("fieldValidation");
        if (body.length && (fieldValidation === "Strict" || fieldValidation === "Warn")) {
          // Field validation needs the schemas, built on first use.
          return void this.openapi
            .kinds()
            .then((kinds) => {
              this.fieldValidation = { mode: fieldValidation, ...kinds };
              this.route(req, res, body, record, user);
            })
            .catch((err) => this.fail(res, err));
        }
        this.fieldValidation = undefined;
        this.route(req, res, body, record, user);
      } catch (err) {
        this.fail(res, err);
      }
    });
  };

  private recordRequest(record: RequestRecord, code: number): void {
    record.code = code;
    this.log.push(record);
    const max = this.options.logSize ?? DEFAULT_LOG_SIZE;
    if (this.log.length > max) this.log.splice(0, this.log.length - max);
    if (record.verb) {
      const k = `${record.verb} ${record.resource}${record.subresource ? "/" + record.subresource : ""}`;
      this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
    }
  }

  /** The one normaliser: anything thrown becomes the apiserver's Status (or ends a started stream). */
  private fail(res: ServerResponse, err: unknown): void {
    if (err instanceof SelectorParseError) err = badRequest(`unable to parse requirement: ${err.message}`);
    const e = toApiError(err);
    if (res.headersSent) {
      res.end();
      return;
    }
    // The apiserver's error writer turns retryAfterSeconds into the header client-go retries by.
    if (e.status.details?.retryAfterSeconds) res.setHeader("Retry-After", String(e.status.details.retryAfterSeconds));
    send(this.cluster, res, e.code, e.status);
  }

  private route(req: IncomingMessage, res: ServerResponse, body: Buffer, record: RequestRecord, user: UserInfo): void {
    const url = new URL(req.url ?? "/", "http://sim");
    const method = req.method ?? "GET";
    if (url.pathname === "/openapi/v2") {
      // v2 as JSON only: the protobuf form client-go's discovery asks for is not built here.
      if (!/application\/json|\*\/\*/.test(String(req.headers.accept ?? "*/*"))) throw notAcceptable(["application/json"]);
      return void this.openapi
        .v2()
        .then((doc) => send(this.cluster, res, 200, doc))
        .catch((err) => this.fail(res, err));
    }
    if (url.pathname === "/openapi/v3" || url.pathname.startsWith("/openapi/v3/")) {
      return void this.serveOpenApi(url, res).catch((err) => this.fail(res, err));
    }
    if (isNodeProxy(url.pathname)) {
      Object.assign(record, { verb: "get", resource: "nodes", subresource: "proxy", name: decodeURIComponent(url.pathname.split("/")[4] ?? "") });
      return serveNodeProxy(this.cluster, method, url, res);
    }
    const route = resolveRoute(url, method, this.serverAddress);
    if (route.kind === "document") return send(this.cluster, res, 200, route.body);
    if (route.kind === "health") {
      res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" });
      return void res.end("ok");
    }
    const t = route.target;
    record.resource = t.def.resource;
    record.subresource = t.subresource ?? "";
    record.namespace = t.namespace ?? "";
    record.name = t.name ?? "";
    record.verb = route.verb;
    this.serveResource(t, route.verb, url.searchParams, req, res, body, user);
  }

  /** NamespaceLifecycle: nothing is created in a namespace that does not exist or is being terminated. */
  private admitNamespace(t: Target): void {
    if (!this.options.namespaces || !t.namespace) return;
    const ns = this.cluster.store.get(R.namespaces, t.namespace);
    if (!ns) throw notFound("namespaces", "", t.namespace);
    if (ns.obj.metadata.deletionTimestamp) {
      const e = forbidden(`${qualified(t.def.resource, t.def.group)}${t.name ? ` ${JSON.stringify(t.name)}` : ""} is forbidden: unable to create new content in namespace ${t.namespace} because it is being terminated`);
      e.status.details = { ...(t.name ? { name: t.name } : {}), ...(t.def.group ? { group: t.def.group } : {}), kind: t.def.resource, causes: [{ reason: "NamespaceTerminating", message: `namespace ${t.namespace} is being terminated`, field: "metadata.namespace" }] };
      throw e;
    }
  }

  /** The write admission for `user`: RBAC's escalation prevention on roles and bindings (./access-control.ts), Pod Security on creates. */
  private admitFor(user: UserInfo, verb: string, res: ServerResponse): Admit {
    return (t, obj) => {
      this.access.admitRbacWrite(user, t.def, obj);
      // Pod Security admission runs on creates (./pod-security.ts).
      if (verb !== "create" || !t.namespace) return;
      const labels = this.cluster.store.get(R.namespaces, t.namespace)?.obj.metadata.labels;
      const warnings = admitPodSecurity(t.def.kind, obj, labels);
      if (warnings.length) {
        const had = res.getHeader("Warning");
        res.setHeader("Warning", [...(had === undefined ? [] : Array.isArray(had) ? had : [String(had)]), ...warningHeaders(warnings)]);
      }
    };
  }

  /** Unknown fields of the body: 400 under Strict, a Warning header each under Warn (./field-validation.ts). */
  private validateFields(t: Target, contentType: string, body: Buffer, res: ServerResponse): void {
    const v = this.fieldValidation!;
    const schema = v.byKind.get(`${t.def.group}/${t.version}/${t.def.kind}`);
    // A JSON patch is a list of operations, not an object: nothing to check field by field.
    if (!schema || contentType.startsWith("application/json-patch+json")) return;
    let doc: unknown;
    try {
      doc = JSON.parse(body.toString("utf8"));
    } catch {
      return; // the handler answers the decoding error
    }
    const fields = unknownFields(doc, schema, v.schemas);
    if (fields.length === 0) return;
    if (v.mode === "Strict") throw badRequest(strictMessage(t.def.kind, t.version, fields));
    res.setHeader("Warning", warnings(fields));
  }

  /** OpenAPI v3: the index, or one group-version's document (./openapi.ts). */
  private async serveOpenApi(url: URL, res: ServerResponse): Promise<void> {
    if (url.pathname === "/openapi/v3" || url.pathname === "/openapi/v3/") return send(this.cluster, res, 200, await this.openapi.index());
    const doc = await this.openapi.document(url.pathname.slice("/openapi/v3/".length));
    if (doc === undefined) throw pathNotFound();
    send(this.cluster, res, 200, doc);
  }

  private serveResource(t: Target, verb: string, q: URLSearchParams, req: IncomingMessage, res: ServerResponse, body: Buffer, user: UserInfo): void {
    const c = this.cluster;
    if (REVIEW_GROUPS.has(t.def.group)) {
      if (verb !== "create") throw methodNotAllowed();
      return serveReview(c, this.access, user, t, body, res);
    }
    if (t.subresource === "token") {
      if (verb !== "create") throw methodNotAllowed();
      return serveTokenRequest(c, this.access, t, body, res);
    }
    if (this.fieldValidation && ["create", "update", "patch"].includes(verb) && (!t.subresource || t.subresource === "status")) this.validateFields(t, String(req.headers["content-type"] ?? ""), body, res);
    if (t.def.virtual) {
      if (req.method !== "GET") throw methodNotAllowed();
      return serveMetrics(c, t, q, res);
    }
    if (t.subresource === "log") {
      if (verb !== "get") throw methodNotAllowed();
      return servePodLog(c, t, q, res);
    }
    if (t.subresource === "portforward") return servePortForward(c, t, req);
    const writer = { userAgent: String(req.headers["user-agent"] ?? "") };
    switch (verb) {
      case "get":
        return serveGet(c, t, q, req, res);
      case "list":
        return void serveList(c, t, q, req, res)?.catch((err) => this.fail(res, err));
      case "watch":
        return this.watches.serve(t, q, req, res);
      case "create":
        this.admitNamespace(t);
        if (t.subresource === "eviction") return serveEviction(c, t, body, res);
        if (t.name) throw methodNotAllowed();
        return serveCreate(c, t, q, body, res, writer, this.admitFor(user, verb, res));
      case "update":
        if (!t.name) throw methodNotAllowed();
        return serveUpdate(c, t, q, body, res, writer, this.admitFor(user, verb, res));
      case "patch":
        if (!t.name) throw methodNotAllowed();
        return servePatch(c, t, q, String(req.headers["content-type"] ?? ""), body, res, writer, this.admitFor(user, verb, res));
      case "delete":
        if (this.options.namespaces && t.def.kind === "Namespace" && t.name && !t.subresource) {
          writeOptions("DeleteOptions", q, body.length ? { body: parseBody(body) } : {});
          entryOf(c, t);
          this.options.namespaces.terminate(t.name);
          c.tick();
          return send(c, res, 200, entryOf(c, t).json);
        }
        return serveDelete(c, t, q, body, res);
      case "deletecollection":
        throw methodNotAllowed("deletecollection is not supported by the simulator");
      default:
        throw methodNotAllowed();
    }
  }
}
