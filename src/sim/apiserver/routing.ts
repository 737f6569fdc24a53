/**
 * Routing: which endpoint a URL names. Plain documents (version, discovery,
 * health) are answered from here; a resource URL becomes a Target and a verb
 * (get, list, watch, create, update, patch, delete, deletecollection), as the
 * apiserver's RequestInfo resolver names them for audit and authorization.
 */
import { apiGroup, apiGroupList, apiResourceList, apiVersions, findResource } from "./resources.js";
import { pathNotFound } from "./status.js";
import type { Target } from "./request.js";
import { queryBool } from "./query-options.js";

export const VERSION_INFO = {
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

const HEALTH_PATHS = ["/healthz", "/readyz", "/livez"];

export type Route = { kind: "document"; body: object } | { kind: "health" } | { kind: "resource"; target: Target; verb: string };

/** Resolve a request's path and method; unknown paths throw the apiserver's 404. */
export function resolveRoute(url: URL, method: string, serverAddress: string): Route {
  const parts = url.pathname.split("/").filter(Boolean);
  if (url.pathname === "/version" || url.pathname === "/version/") return { kind: "document", body: VERSION_INFO };
  if (HEALTH_PATHS.includes(url.pathname)) return { kind: "health" };
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === "api") {
    if (parts.length === 1) return { kind: "document", body: apiVersions(serverAddress) };
    if (parts[1] !== "v1") throw pathNotFound();
    if (parts.length === 2) return { kind: "document", body: apiResourceList("", "v1")! };
    [group, version, rest] = ["", "v1", parts.slice(2)];
  } else if (parts[0] === "apis") {
    if (parts.length === 1) return { kind: "document", body: apiGroupList() };
    group = parts[1]!;
    if (parts.length === 2) {
      const g = apiGroup(group);
      if (!g) throw pathNotFound();
      return { kind: "document", body: g };
    }
    version = parts[2]!;
    if (parts.length === 3) {
      const list = apiResourceList(group, version);
      if (!list) throw pathNotFound();
      return { kind: "document", body: list };
    }
    rest = parts.slice(3);
  } else {
    throw pathNotFound();
  }
  const target = parseTarget(group, version, rest);
  return { kind: "resource", target, verb: verbOf(method, target, url.searchParams) };
}

function parseTarget(group: string, version: string, segs: string[]): Target {
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

/** Whether a GET asks for a watch: `watch` present and not "0" or "false" (the Python client sends "True"). */
export function isWatch(q: URLSearchParams): boolean {
  return queryBool(q, "watch");
}

function verbOf(method: string, t: Target, q: URLSearchParams): string {
  switch (method) {
    case "GET":
      return t.name ? "get" : isWatch(q) ? "watch" : "list";
    case "POST":
      return "create";
    case "PUT":
      return "update";
    case "PATCH":
      return "patch";
    case "DELETE":
      return t.name ? "delete" : "deletecollection";
    default:
      return method.toLowerCase();
  }
}
