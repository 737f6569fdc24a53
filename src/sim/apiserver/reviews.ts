/**
 * The review APIs, answered by computation and never stored, as the
 * apiserver's authorization.k8s.io and authentication.k8s.io registries do:
 * SelfSubjectAccessReview (`kubectl auth can-i`), SubjectAccessReview and
 * LocalSubjectAccessReview, SelfSubjectRulesReview (`kubectl auth can-i
 * --list`), SelfSubjectReview (`kubectl auth whoami`), TokenReview; and the
 * TokenRequest subresource of ServiceAccounts (`kubectl create token`).
 */
import type { ServerResponse } from "node:http";
import type { SimCluster } from "../cluster.js";
import type { AccessControl } from "./access-control.js";
import { API_AUDIENCE, type UserInfo } from "./authentication.js";
import type { RequestAttributes } from "./request-info.js";
import type { PolicyRule } from "./rbac.js";
import { badRequest, invalid, methodNotAllowed } from "./status.js";
import { entryOf, parseBody, send, type Target } from "./request.js";

type Obj = Record<string, any>;

/** Groups whose resources are reviews (answered here, not stored). */
export const REVIEW_GROUPS = new Set(["authorization.k8s.io", "authentication.k8s.io"]);

/** The attributes a review's spec asks about. */
function attributesOf(spec: Obj, kind: string, name: string): RequestAttributes {
  const r = spec.resourceAttributes as Obj | undefined;
  const n = spec.nonResourceAttributes as Obj | undefined;
  if (r && n)
    throw invalid(kind, "authorization.k8s.io", name, [{ field: "spec.nonResourceAttributes", message: `Invalid value: "null": cannot be specified in combination with resourceAttributes` }]);
  if (n) return { isResourceRequest: false, path: String(n.path ?? ""), verb: String(n.verb ?? ""), apiGroup: "", apiVersion: "", namespace: "", resource: "", subresource: "", name: "" };
  if (!r)
    throw invalid(kind, "authorization.k8s.io", name, [
      { field: "spec.resourceAttributes", message: "Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified", reason: "FieldValueRequired" },
    ]);
  return {
    isResourceRequest: true,
    path: "",
    verb: String(r.verb ?? ""),
    apiGroup: String(r.group ?? ""),
    apiVersion: String(r.version ?? ""),
    namespace: String(r.namespace ?? ""),
    resource: String(r.resource ?? ""),
    subresource: String(r.subresource ?? ""),
    name: String(r.name ?? ""),
  };
}

function answer(cluster: SimCluster, res: ServerResponse, t: Target, obj: Obj, status: Obj): void {
  const meta = { ...(obj.metadata ?? {}), creationTimestamp: null };
  send(cluster, res, 201, { kind: t.def.kind, apiVersion: `${t.def.group}/${t.version}`, metadata: meta, spec: obj.spec ?? {}, status });
}

function accessStatus(access: AccessControl, user: UserInfo, a: RequestAttributes): Obj {
  const d = access.decide(user, a);
  return { allowed: d.allowed, ...(d.reason ? { reason: d.reason } : {}) };
}

function compactRules(rules: PolicyRule[]): { resourceRules: Obj[]; nonResourceRules: Obj[] } {
  const resourceRules: Obj[] = [];
  const nonResourceRules: Obj[] = [];
  for (const r of rules) {
    if ((r.nonResourceURLs ?? []).length) nonResourceRules.push({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs });
    else
      resourceRules.push({
        verbs: r.verbs,
        ...(r.apiGroups ? { apiGroups: r.apiGroups } : {}),
        ...(r.resources ? { resources: r.resources } : {}),
        ...(r.resourceNames ? { resourceNames: r.resourceNames } : {}),
      });
  }
  return { resourceRules, nonResourceRules };
}

/** POST of a review: the answer for `user` (the caller, impersonation applied). */
export function serveReview(cluster: SimCluster, access: AccessControl, user: UserInfo, t: Target, body: Buffer, res: ServerResponse): void {
  if (t.name) throw methodNotAllowed();
  const obj = parseBody(body) as Obj;
  const spec = (obj.spec ?? {}) as Obj;
  const name = String(obj.metadata?.name ?? "");
  switch (t.def.kind) {
    case "SelfSubjectAccessReview":
      return answer(cluster, res, t, obj, accessStatus(access, user, attributesOf(spec, t.def.kind, name)));
    case "SubjectAccessReview":
    case "LocalSubjectAccessReview": {
      if (!spec.user && !(spec.groups ?? []).length)
        throw invalid(t.def.kind, "authorization.k8s.io", name, [{ field: "spec.user", message: `Invalid value: "": at least one of user or group must be specified` }]);
      const a = attributesOf(spec, t.def.kind, name);
      if (t.def.kind === "LocalSubjectAccessReview") {
        if (a.namespace && a.namespace !== t.namespace) throw badRequest(`spec.resourceAttributes.namespace must match namespace: ${t.namespace}`);
        a.namespace = t.namespace!;
      }
      const subject: UserInfo = { username: String(spec.user ?? ""), groups: (spec.groups ?? []) as string[], ...(spec.uid ? { uid: String(spec.uid) } : {}) };
      return answer(cluster, res, t, obj, accessStatus(access, subject, a));
    }
    case "SelfSubjectRulesReview": {
      const namespace = String(spec.namespace ?? "");
      if (!access.enforce) {
        return answer(cluster, res, t, obj, { resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }], nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }], incomplete: false });
      }
      const { rules, errors } = access.authorizer.rulesFor(user, namespace);
      return answer(cluster, res, t, obj, { ...compactRules(rules), incomplete: errors.length > 0, ...(errors.length ? { evaluationError: errors.join(", ") } : {}) });
    }
    case "SelfSubjectReview":
      return answer(cluster, res, t, obj, { userInfo: userInfoJson(user) });
    case "TokenReview": {
      const found = access.authenticator.authenticate(`Bearer ${String(spec.token ?? "")}`);
      const status = found ? { authenticated: true, user: userInfoJson(found), audiences: [API_AUDIENCE] } : { user: {}, error: "[invalid bearer token, token lookup failed]" };
      return answer(cluster, res, t, obj, status);
    }
    default:
      throw methodNotAllowed();
  }
}

function userInfoJson(u: UserInfo): Obj {
  return { username: u.username, ...(u.uid ? { uid: u.uid } : {}), groups: u.groups, ...(u.extra ? { extra: u.extra } : {}) };
}

const MIN_EXPIRATION_SECONDS = 600;
const DEFAULT_EXPIRATION_SECONDS = 3600;

/** POST serviceaccounts/{name}/token: a token for the ServiceAccount. */
export function serveTokenRequest(cluster: SimCluster, access: AccessControl, t: Target, body: Buffer, res: ServerResponse): void {
  const sa = entryOf(cluster, t).obj;
  const req = (body.length ? parseBody(body) : { metadata: { name: "" } }) as Obj;
  const spec = (req.spec ?? {}) as Obj;
  const expirationSeconds = spec.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
  if (!Number.isInteger(expirationSeconds) || expirationSeconds < MIN_EXPIRATION_SECONDS) {
    throw invalid("TokenRequest", "authentication.k8s.io", t.name!, [
      { field: "spec.expirationSeconds", message: `Invalid value: ${JSON.stringify(expirationSeconds)}: may not specify a duration less than 10 minutes` },
    ]);
  }
  if (expirationSeconds > 2 ** 32) {
    throw invalid("TokenRequest", "authentication.k8s.io", t.name!, [
      { field: "spec.expirationSeconds", message: `Invalid value: ${expirationSeconds}: may not specify a duration larger than 2^32 seconds` },
    ]);
  }
  const audiences = ((spec.audiences ?? []) as string[]).length ? (spec.audiences as string[]) : [API_AUDIENCE];
  const minted = access.authenticator.mint(t.namespace!, t.name!, sa.metadata.uid!, audiences, expirationSeconds);
  send(cluster, res, 201, {
    kind: "TokenRequest",
    apiVersion: "authentication.k8s.io/v1",
    metadata: { name: t.name, namespace: t.namespace, creationTimestamp: cluster.clock.iso() },
    spec: { audiences, expirationSeconds, boundObjectRef: spec.boundObjectRef ?? null },
    status: minted,
  });
}
