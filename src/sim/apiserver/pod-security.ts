/**
 * Pod Security admission as the apiserver's built-in plugin applies it: the
 * namespace's `pod-security.kubernetes.io/enforce` level refuses a pod that
 * violates it (403 Forbidden), its `warn` level answers a Warning header, and
 * a workload (Deployment, ReplicaSet, DaemonSet) whose pod template violates
 * either level is admitted with the warning. Checks and messages are the
 * baseline and restricted policies' (k8s.io/pod-security-admission), in the
 * order the plugin runs them. `audit` is read but there is no audit log.
 */
import type { KObject } from "../store.js";
import { forbidden } from "./status.js";

type Obj = Record<string, any>;

export type Level = "privileged" | "baseline" | "restricted";

interface Violation {
  reason: string;
  detail: string;
}

/** The containers of a pod spec, each with where it is named. */
function containersOf(spec: Obj): Obj[] {
  return [...((spec.initContainers ?? []) as Obj[]), ...((spec.containers ?? []) as Obj[]), ...((spec.ephemeralContainers ?? []) as Obj[])];
}

const quoted = (names: string[]) => names.map((n) => JSON.stringify(n)).join(", ");
const containerWord = (names: string[]) => `${names.length === 1 ? "container" : "containers"} ${quoted(names)}`;

const DEFAULT_CAPABILITIES = new Set(["AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"]);
const RESTRICTED_VOLUME_TYPES = new Set(["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"]);

type Check = { id: string; level: Level; run(spec: Obj, containers: Obj[]): Violation | undefined };

/** The checks, in the order the plugin evaluates them (by check ID). */
const CHECKS: Check[] = [
  {
    id: "allowPrivilegeEscalation",
    level: "restricted",
    run: (_s, cs) => {
      const bad = cs.filter((c) => c.securityContext?.allowPrivilegeEscalation !== false).map((c) => c.name);
      return bad.length ? { reason: "allowPrivilegeEscalation != false", detail: `${containerWord(bad)} must set securityContext.allowPrivilegeEscalation=false` } : undefined;
    },
  },
  {
    id: "capabilities_baseline",
    level: "baseline",
    run: (_s, cs) => {
      const details: string[] = [];
      for (const c of cs) {
        const added = ((c.securityContext?.capabilities?.add ?? []) as string[]).filter((cap) => !DEFAULT_CAPABILITIES.has(cap));
        if (added.length) details.push(`container ${JSON.stringify(c.name)} must not include ${quoted(added)} in securityContext.capabilities.add`);
      }
      return details.length ? { reason: "non-default capabilities", detail: details.join("; ") } : undefined;
    },
  },
  {
    id: "capabilities_restricted",
    level: "restricted",
    run: (_s, cs) => {
      const noDrop = cs.filter((c) => !((c.securityContext?.capabilities?.drop ?? []) as string[]).includes("ALL")).map((c) => c.name);
      const details: string[] = [];
      if (noDrop.length) details.push(`${containerWord(noDrop)} must set securityContext.capabilities.drop=["ALL"]`);
      for (const c of cs) {
        const added = ((c.securityContext?.capabilities?.add ?? []) as string[]).filter((cap) => cap !== "NET_BIND_SERVICE");
        if (added.length) details.push(`container ${JSON.stringify(c.name)} must not include ${quoted(added)} in securityContext.capabilities.add`);
      }
      return details.length ? { reason: "unrestricted capabilities", detail: details.join("; ") } : undefined;
    },
  },
  {
    id: "hostNamespaces",
    level: "baseline",
    run: (s) => {
      const set = (["hostNetwork", "hostPID", "hostIPC"] as const).filter((f) => s[f] === true).map((f) => `${f}=true`);
      return set.length ? { reason: "host namespaces", detail: set.join(", ") } : undefined;
    },
  },
  {
    id: "hostPathVolumes",
    level: "baseline",
    run: (s) => {
      const names = ((s.volumes ?? []) as Obj[]).filter((v) => v.hostPath).map((v) => v.name);
      return names.length ? { reason: "hostPath volumes", detail: `${names.length === 1 ? "volume" : "volumes"} ${quoted(names)}` } : undefined;
    },
  },
  {
    id: "hostPorts",
    level: "baseline",
    run: (_s, cs) => {
      const details: string[] = [];
      for (const c of cs) {
        const ports = ((c.ports ?? []) as Obj[]).map((p) => p.hostPort).filter((p) => p);
        if (ports.length) details.push(`${containerWord([c.name])} ${ports.length === 1 ? "uses hostPort" : "use hostPorts"} ${ports.join(", ")}`);
      }
      return details.length ? { reason: "hostPort", detail: details.join("; ") } : undefined;
    },
  },
  {
    id: "privileged",
    level: "baseline",
    run: (_s, cs) => {
      const bad = cs.filter((c) => c.securityContext?.privileged === true).map((c) => c.name);
      return bad.length ? { reason: "privileged", detail: `${containerWord(bad)} must not set securityContext.privileged=true` } : undefined;
    },
  },
  {
    id: "restrictedVolumes",
    level: "restricted",
    run: (s) => {
      const details: string[] = [];
      for (const v of (s.volumes ?? []) as Obj[]) {
        const type = Object.keys(v).find((k) => k !== "name");
        if (type && !RESTRICTED_VOLUME_TYPES.has(type)) details.push(`volume ${JSON.stringify(v.name)} uses restricted volume type ${JSON.stringify(type)}`);
      }
      return details.length ? { reason: "restricted volume types", detail: details.join(", ") } : undefined;
    },
  },
  {
    id: "runAsNonRoot",
    level: "restricted",
    run: (s, cs) => {
      const pod = s.securityContext?.runAsNonRoot;
      if (pod === false) return { reason: "runAsNonRoot != true", detail: "pod must not set securityContext.runAsNonRoot=false" };
      const bad = cs.filter((c) => (c.securityContext?.runAsNonRoot ?? pod) !== true).map((c) => c.name);
      return bad.length ? { reason: "runAsNonRoot != true", detail: `pod or ${containerWord(bad)} must set securityContext.runAsNonRoot=true` } : undefined;
    },
  },
  {
    id: "runAsUser",
    level: "restricted",
    run: (s, cs) => {
      const bad = cs.filter((c) => (c.securityContext?.runAsUser ?? s.securityContext?.runAsUser) === 0).map((c) => c.name);
      return bad.length ? { reason: "runAsUser=0", detail: `pod or ${containerWord(bad)} must not set runAsUser=0` } : undefined;
    },
  },
  {
    id: "seccompProfile_restricted",
    level: "restricted",
    run: (s, cs) => {
      const ok = (t: unknown) => t === "RuntimeDefault" || t === "Localhost";
      const bad = cs.filter((c) => !ok(c.securityContext?.seccompProfile?.type ?? s.securityContext?.seccompProfile?.type)).map((c) => c.name);
      return bad.length ? { reason: "seccompProfile", detail: `pod or ${containerWord(bad)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"` } : undefined;
    },
  },
];

const RANK: Record<Level, number> = { privileged: 0, baseline: 1, restricted: 2 };

/** The violations of a pod spec at a level, as "reason (detail)". */
export function violations(spec: Obj, level: Level): string[] {
  const cs = containersOf(spec);
  const out: string[] = [];
  for (const check of CHECKS) {
    if (RANK[check.level] > RANK[level]) continue;
    const v = check.run(spec, cs);
    if (v) out.push(`${v.reason} (${v.detail})`);
  }
  return out;
}

/** The namespace's levels ("latest" whatever version label is set: the simulator knows one policy version). */
export function namespaceLevels(labels: Record<string, string> | undefined): { enforce?: Level; warn?: Level; audit?: Level } {
  const level = (mode: string): Level | undefined => {
    const v = labels?.[`pod-security.kubernetes.io/${mode}`];
    return v === "privileged" || v === "baseline" || v === "restricted" ? v : undefined;
  };
  const out: { enforce?: Level; warn?: Level; audit?: Level } = {};
  for (const mode of ["enforce", "warn", "audit"] as const) {
    const l = level(mode);
    if (l) out[mode] = l;
  }
  return out;
}

const TEMPLATE_KINDS = new Set(["Deployment", "ReplicaSet", "DaemonSet"]);

/**
 * Admit a pod or workload created in a namespace with these labels: throws
 * the plugin's Forbidden for a pod that violates the enforce level; returns
 * the Warning texts to answer with.
 */
export function admitPodSecurity(kind: string, obj: KObject, namespaceLabels: Record<string, string> | undefined): string[] {
  const levels = namespaceLevels(namespaceLabels);
  const spec = kind === "Pod" ? (obj.spec as Obj | undefined) : TEMPLATE_KINDS.has(kind) ? ((obj.spec as Obj | undefined)?.template?.spec as Obj | undefined) : undefined;
  if (!spec) return [];
  const warnings: string[] = [];
  const say = (level: Level, found: string[]) => `would violate PodSecurity "${level}:latest": ${found.join(", ")}`;
  if (levels.enforce && levels.enforce !== "privileged") {
    const found = violations(spec, levels.enforce);
    if (found.length && kind === "Pod") {
      const e = forbidden(`pods ${JSON.stringify(obj.metadata.name)} is forbidden: violates PodSecurity "${levels.enforce}:latest": ${found.join(", ")}`);
      e.status.details = { name: obj.metadata.name, kind: "pods" };
      throw e;
    }
    if (found.length) warnings.push(say(levels.enforce, found));
  }
  if (levels.warn && levels.warn !== "privileged" && levels.warn !== levels.enforce) {
    const found = violations(spec, levels.warn);
    if (found.length) warnings.push(say(levels.warn, found));
  }
  return warnings;
}

/** A Warning header value for each text (RFC 7234 warn-code 299, as the apiserver writes them). */
export function warningHeaders(texts: string[]): string[] {
  return texts.map((t) => `299 - ${JSON.stringify(t)}`);
}
