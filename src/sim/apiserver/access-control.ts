/**
 * Authentication, impersonation and authorization: the steps of the
 * apiserver's handler chain between the request guards and routing. With
 * `rbac` off (the demo) every request is allowed and credentials are only
 * read to say who asked; with it on:
 *
 * - a bad bearer token is 401; a request without one is 401 too, except for
 *   /healthz, /livez and /readyz, which anonymous callers may read (an
 *   apiserver whose anonymous authentication is limited to the health
 *   endpoints);
 * - Impersonate-User / -Group / -Uid / -Extra-* headers act as that user when
 *   the caller may `impersonate` users, groups, serviceaccounts, uids and
 *   userextras;
 * - RBAC (./rbac.ts) decides, and a refusal is the apiserver's Forbidden.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { SimCluster } from "../cluster.js";
import { ANONYMOUS, Authenticator, parseServiceAccountUsername, serviceAccountUser, type UserInfo } from "./authentication.js";
import { RbacAuthorizer, type Decision } from "./rbac.js";
import type { RequestAttributes } from "./request-info.js";
import { badRequest, forbiddenFor, unauthorized } from "./status.js";

const ANONYMOUS_PATHS = new Set(["/healthz", "/livez", "/readyz"]);

export class AccessControl {
  readonly authenticator: Authenticator;
  readonly authorizer: RbacAuthorizer;

  constructor(
    cluster: SimCluster,
    /** Enforce authentication and RBAC (`sim --rbac`). */
    readonly enforce: boolean,
  ) {
    this.authenticator = new Authenticator(cluster.store);
    this.authorizer = new RbacAuthorizer(cluster.store);
  }

  /** Who sent the request (impersonation applied); throws 401 or 403 as the apiserver would. */
  identify(headers: IncomingHttpHeaders, path: string): UserInfo {
    const found = this.authenticator.authenticate(headers.authorization);
    if (!this.enforce) return found ?? ANONYMOUS;
    if (found === null) throw unauthorized();
    if (found === undefined) {
      if (!ANONYMOUS_PATHS.has(path)) throw unauthorized();
      return ANONYMOUS;
    }
    return this.impersonate(found, headers);
  }

  /** The decision for `user` doing `a` (always allowed when not enforcing). */
  decide(user: UserInfo, a: RequestAttributes): Decision {
    if (!this.enforce) return { allowed: true, reason: "" };
    return this.authorizer.authorize(user, a);
  }

  /** Throws the apiserver's Forbidden unless `user` may do `a`. */
  authorize(user: UserInfo, a: RequestAttributes): void {
    const d = this.decide(user, a);
    if (!d.allowed) throw forbiddenFor(a, user.username, d.reason);
  }

  /** Apply Impersonate-* headers, each one authorised by the `impersonate` verb. */
  private impersonate(requestor: UserInfo, headers: IncomingHttpHeaders): UserInfo {
    const username = first(headers["impersonate-user"]);
    const groups = all(headers["impersonate-group"]);
    const uid = first(headers["impersonate-uid"]);
    const extra: Record<string, string[]> = {};
    for (const [h, v] of Object.entries(headers)) {
      if (!h.startsWith("impersonate-extra-")) continue;
      extra[decodeURIComponent(h.slice("impersonate-extra-".length))] = all(v);
    }
    if (username === undefined) {
      if (groups.length || uid !== undefined || Object.keys(extra).length) throw badRequest("requested impersonation of groups, uid or extra without impersonating a user");
      return requestor;
    }
    const check = (a: Omit<RequestAttributes, "isResourceRequest" | "path" | "verb" | "apiVersion" | "subresource"> & { subresource?: string }) =>
      this.authorize(requestor, { isResourceRequest: true, path: "", verb: "impersonate", apiVersion: "v1", subresource: "", ...a });
    let user: UserInfo;
    const sa = parseServiceAccountUsername(username);
    if (sa) {
      check({ apiGroup: "", namespace: sa.namespace, resource: "serviceaccounts", name: sa.name });
      user = serviceAccountUser(sa.namespace, sa.name);
      user.groups = user.groups.filter((g) => g !== "system:authenticated");
    } else {
      check({ apiGroup: "", namespace: "", resource: "users", name: username });
      user = { username, groups: [] };
    }
    for (const g of groups) {
      check({ apiGroup: "", namespace: "", resource: "groups", name: g });
      if (!user.groups.includes(g)) user.groups.push(g);
    }
    if (uid !== undefined) {
      check({ apiGroup: "authentication.k8s.io", namespace: "", resource: "uids", name: uid });
      user.uid = uid;
    }
    for (const [key, values] of Object.entries(extra)) {
      for (const v of values) check({ apiGroup: "authentication.k8s.io", namespace: "", resource: "userextras", subresource: key, name: v });
    }
    if (Object.keys(extra).length) user.extra = extra;
    if (username !== ANONYMOUS.username && !user.groups.includes("system:authenticated")) user.groups.push("system:authenticated");
    return user;
  }
}

function all(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : v.split(",")).map((s) => s.trim()).filter(Boolean);
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
