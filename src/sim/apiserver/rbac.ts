/**
 * RBAC authorization over the ClusterRoles, Roles and bindings in the store,
 * with the semantics of kube-apiserver's RBAC authorizer: ClusterRoleBindings
 * first, then the RoleBindings of the request's namespace; a rule allows when
 * its verbs, API groups, resources (`*`, `resource/subresource`,
 * `*∕subresource`) and resourceNames (or nonResourceURLs, with a trailing `*`)
 * match; a binding whose role is missing counts as an error the denial reports.
 * No aggregation: a ClusterRole's aggregationRule is not followed.
 */
import type { ObjectStore } from "../store.js";
import { R } from "../storage-names.js";
import type { RequestAttributes } from "./request-info.js";
import type { UserInfo } from "./authentication.js";
import { parseServiceAccountUsername } from "./authentication.js";

type Obj = Record<string, any>;

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

export interface Decision {
  allowed: boolean;
  /** "RBAC: allowed by ..." when allowed; the errors met when not (empty if none). */
  reason: string;
}

/** What a rule visitor sees: where the rule came from, the rule, or an error. */
type Visitor = (source: string, rule: PolicyRule | undefined, error: string | undefined) => boolean;

const has = (list: string[] | undefined, v: string) => (list ?? []).includes(v);

function verbMatches(rule: PolicyRule, verb: string): boolean {
  return has(rule.verbs, "*") || has(rule.verbs, verb);
}

function ruleAllows(a: RequestAttributes, rule: PolicyRule): boolean {
  if (!verbMatches(rule, a.verb)) return false;
  if (!a.isResourceRequest) {
    return (rule.nonResourceURLs ?? []).some((u) => u === "*" || u === a.path || (u.endsWith("*") && a.path.startsWith(u.slice(0, -1))));
  }
  if (!has(rule.apiGroups, "*") && !has(rule.apiGroups, a.apiGroup)) return false;
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const resourceOk = (rule.resources ?? []).some((r) => r === "*" || r === combined || (a.subresource !== "" && r === `*/${a.subresource}`));
  if (!resourceOk) return false;
  return (rule.resourceNames ?? []).length === 0 || has(rule.resourceNames, a.name);
}

function appliesTo(user: UserInfo, s: Subject, bindingNamespace: string): boolean {
  switch (s.kind) {
    case "User":
      return user.username === s.name;
    case "Group":
      return user.groups.includes(s.name);
    case "ServiceAccount": {
      // A RoleBinding's ServiceAccount subject without a namespace is in the binding's own.
      const ns = s.namespace || bindingNamespace;
      const sa = parseServiceAccountUsername(user.username);
      return ns !== "" && sa !== undefined && sa.namespace === ns && sa.name === s.name;
    }
    default:
      return false;
  }
}

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === "ServiceAccount") return `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${JSON.stringify(s.name)}`;
}

/** The RBAC authorizer and rule resolver. */
export class RbacAuthorizer {
  constructor(private readonly store: ObjectStore) {}

  /** Whether `user` may do what `a` describes. */
  authorize(user: UserInfo, a: RequestAttributes): Decision {
    let allowed = false;
    let reason = "";
    const errors: string[] = [];
    this.visitRulesFor(user, a.namespace, (source, rule, error) => {
      if (rule && ruleAllows(a, rule)) {
        allowed = true;
        reason = `RBAC: allowed by ${source}`;
        return false;
      }
      if (error) errors.push(error);
      return true;
    });
    if (allowed) return { allowed, reason };
    return { allowed: false, reason: errors.length === 0 ? "" : `RBAC: ${errors.length === 1 ? errors[0] : `[${errors.join(", ")}]`}` };
  }

  /** Every rule that applies to `user` in `namespace` (cluster-wide ones included), and the errors met. */
  rulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    this.visitRulesFor(user, namespace, (_s, rule, error) => {
      if (rule) rules.push(rule);
      if (error) errors.push(error);
      return true;
    });
    return { rules, errors };
  }

  private clusterRole(name: string): PolicyRule[] | string {
    const e = this.store.get(R.clusterroles, name);
    return e ? (((e.obj as Obj).rules ?? []) as PolicyRule[]) : `clusterrole.rbac.authorization.k8s.io ${JSON.stringify(name)} not found`;
  }

  private role(namespace: string, name: string): PolicyRule[] | string {
    const e = this.store.get(R.roles, `${namespace}/${name}`);
    return e ? (((e.obj as Obj).rules ?? []) as PolicyRule[]) : `role.rbac.authorization.k8s.io ${JSON.stringify(name)} not found`;
  }

  /** Visit rules in the apiserver's order; the visitor returns false to stop. */
  private visitRulesFor(user: UserInfo, namespace: string, visit: Visitor): void {
    for (const e of this.store.list(R.clusterrolebindings)) {
      const b = e.obj as Obj;
      const subject = ((b.subjects ?? []) as Subject[]).find((s) => appliesTo(user, s, ""));
      if (!subject) continue;
      const rules = this.clusterRole(b.roleRef?.name ?? "");
      if (typeof rules === "string") {
        if (!visit("", undefined, rules)) return;
        continue;
      }
      const source = `ClusterRoleBinding ${JSON.stringify(b.metadata.name)} of ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} to ${describeSubject(subject, "")}`;
      for (const rule of rules) if (!visit(source, rule, undefined)) return;
    }
    if (!namespace) return;
    for (const e of this.store.list(R.rolebindings, namespace)) {
      const b = e.obj as Obj;
      const subject = ((b.subjects ?? []) as Subject[]).find((s) => appliesTo(user, s, namespace));
      if (!subject) continue;
      const rules = b.roleRef?.kind === "ClusterRole" ? this.clusterRole(b.roleRef.name ?? "") : this.role(namespace, b.roleRef?.name ?? "");
      if (typeof rules === "string") {
        if (!visit("", undefined, rules)) return;
        continue;
      }
      const source = `RoleBinding ${JSON.stringify(`${b.metadata.name}/${namespace}`)} of ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} to ${describeSubject(subject, namespace)}`;
      for (const rule of rules) if (!visit(source, rule, undefined)) return;
    }
  }
}
