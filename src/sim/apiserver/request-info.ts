/**
 * What a request asks to do, as the apiserver's RequestInfo resolver reads it
 * from the URL and method before anything else looks at the request: the
 * attributes authorization decides on (and the Forbidden message names). It
 * is resolved from the path alone, so a request for a resource the simulator
 * does not serve is still refused as the apiserver refuses it (403 before 404).
 */
import { queryBool } from "./query-options.js";

/** The request attributes an authorizer sees. */
export interface RequestAttributes {
  isResourceRequest: boolean;
  /** The URL path (what a non-resource rule matches). */
  path: string;
  verb: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

/** Path segments after /namespaces/{ns} that are subresources of the namespace itself. */
const NAMESPACE_SUBRESOURCES = new Set(["status", "finalize"]);

const METHOD_VERBS: Record<string, string> = { GET: "get", HEAD: "get", POST: "create", PUT: "update", PATCH: "patch", DELETE: "delete" };

/** A path segment that could be an object's name (not empty, not "." or "..", no "/" or "%"). */
function isNameSegment(name: string): boolean {
  return name !== "" && name !== "." && name !== ".." && !/[/%]/.test(name);
}

/** Resolve the attributes of a request, as RequestInfoFactory does. */
export function requestAttributes(method: string, url: URL): RequestAttributes {
  const path = url.pathname;
  const nonResource: RequestAttributes = { isResourceRequest: false, path, verb: method.toLowerCase(), apiGroup: "", apiVersion: "", namespace: "", resource: "", subresource: "", name: "" };
  let parts = path.split("/").filter(Boolean);
  let apiGroup = "";
  if (parts[0] === "api") {
    if (parts.length < 3) return nonResource;
    parts = parts.slice(1);
  } else if (parts[0] === "apis") {
    if (parts.length < 4) return nonResource;
    apiGroup = parts[1]!;
    parts = parts.slice(2);
  } else {
    return nonResource;
  }
  const apiVersion = parts[0]!;
  parts = parts.slice(1);
  let verb = METHOD_VERBS[method] ?? method.toLowerCase();
  let namespace = "";
  if (parts[0] === "namespaces" && parts.length > 1) {
    namespace = parts[1]!;
    if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2]!)) parts = parts.slice(2);
  }
  const resource = parts[0] ?? "";
  let name = parts[1] ?? "";
  const subresource = parts[2] ?? "";
  if (!name && verb === "get") {
    verb = queryBool(url.searchParams, "watch") ? "watch" : "list";
    // A list of one object by name is authorised as that name (resourceNames rules apply).
    const byName = /^metadata\.name==?([^,]*)$/.exec(url.searchParams.get("fieldSelector") ?? "");
    if (byName && isNameSegment(byName[1]!)) name = byName[1]!;
  }
  if (!name && verb === "delete") verb = "deletecollection";
  return { isResourceRequest: true, path, verb, apiGroup, apiVersion, namespace, resource, subresource, name };
}
