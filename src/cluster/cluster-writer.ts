import { hasStatusCause, isForbidden, isNotFound, isTooManyRequests, NAMESPACE_TERMINATING_CAUSE, type KubeClient } from "./kube-client.js";
import type { CachedNode, CachedPod } from "./model.js";
import { stripNode, stripPod } from "./strip.js";

/**
 * What an eviction came to: accepted (or the pod was already being deleted), gone, blocked by a
 * PodDisruptionBudget (429), or refused because its namespace is being deleted while the pod is
 * not yet (403 NamespaceTerminating): both of the last two are retried, as kubectl does.
 */
export type EvictionResult = { kind: "accepted" } | { kind: "gone" } | { kind: "blocked"; budget: string | null; message: string } | { kind: "namespace-terminating"; message: string };

/**
 * The write side of one cluster (the "cluster writer" port): the only Kubernetes calls that
 * change anything, and the reads a drain needs to be exact. Every call can carry
 * Impersonate-User, so the cluster's own RBAC and audit log see the real caller.
 */
export class ClusterWriter {
  constructor(
    private readonly client: KubeClient,
    readonly cluster: string,
    private readonly impersonate: string | undefined = undefined,
  ) {}

  /**
   * Sets spec.unschedulable and `annotations` in one patch, so the watch event that shows the
   * change also says who made it. Undefined when the node does not exist.
   */
  async setUnschedulable(name: string, unschedulable: boolean, annotations: Record<string, string>): Promise<CachedNode | undefined> {
    try {
      const raw = await this.call<unknown>(
        "PATCH",
        `/api/v1/nodes/${encodeURIComponent(name)}`,
        {
          metadata: { annotations },
          // kubectl uncordon removes the field rather than writing false; so does a merge patch with null.
          spec: { unschedulable: unschedulable ? true : null },
        },
        "application/merge-patch+json",
      );
      return stripNode(this.cluster, raw);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /**
   * A merge patch of the node (labels, taints and the note saying who), undefined when the
   * node does not exist. A patch carrying metadata.resourceVersion is refused with 409 when
   * the node changed since it was read, so a check made on that read still holds.
   */
  async patchNode(name: string, patch: Record<string, unknown>): Promise<CachedNode | undefined> {
    try {
      return stripNode(this.cluster, await this.call<unknown>("PATCH", `/api/v1/nodes/${encodeURIComponent(name)}`, patch, "application/merge-patch+json"));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async node(name: string): Promise<CachedNode | undefined> {
    try {
      return stripNode(this.cluster, await this.call("GET", `/api/v1/nodes/${encodeURIComponent(name)}`));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** The pods bound to `node` (matching `labelSelector`), read from the API as kubectl drain does. */
  async podsOn(node: string, labelSelector: string | null): Promise<CachedPod[]> {
    const pods: CachedPod[] = [];
    let cont: string | undefined;
    do {
      const page = await this.call<{ items: unknown[]; metadata?: { continue?: string } }>("GET", "/api/v1/pods", undefined, undefined, {
        fieldSelector: `spec.nodeName=${node}`,
        labelSelector: labelSelector ?? undefined,
        limit: 500,
        continue: cont,
      });
      for (const item of page.items) pods.push(stripPod(this.cluster, item));
      cont = page.metadata?.continue || undefined;
    } while (cont);
    return pods;
  }

  async daemonSetExists(namespace: string, name: string): Promise<boolean> {
    try {
      await this.call("GET", `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/daemonsets/${encodeURIComponent(name)}`);
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  /**
   * POST an Eviction (policy/v1). A 429 names the PodDisruptionBudget that refused it. A 403
   * because the namespace is terminating means no eviction can succeed: if the pod is already
   * being deleted (the namespace controller got to it), there is nothing to evict, only to wait
   * for; if not, kubectl tries again later, and so do we.
   */
  async evict(pod: { namespace: string; name: string; uid: string }, gracePeriodSeconds: number): Promise<EvictionResult> {
    try {
      await this.call("POST", `${podPath(pod)}/eviction`, {
        apiVersion: "policy/v1",
        kind: "Eviction",
        metadata: { name: pod.name, namespace: pod.namespace },
        ...(gracePeriodSeconds >= 0 ? { deleteOptions: { gracePeriodSeconds } } : {}),
      });
      return { kind: "accepted" };
    } catch (error) {
      if (isNotFound(error)) return { kind: "gone" };
      if (isTooManyRequests(error)) {
        const cause = error.causes.find((c) => c.reason === "DisruptionBudget" || c.reason === undefined);
        const budget = /disruption budget (\S+)/.exec(cause?.message ?? "")?.[1] ?? null;
        return { kind: "blocked", budget, message: cause?.message ?? error.statusMessage };
      }
      if (isForbidden(error) && hasStatusCause(error, NAMESPACE_TERMINATING_CAUSE)) {
        const current = await this.podState(pod);
        if (current === "gone") return { kind: "gone" };
        if (current === "terminating") return { kind: "accepted" };
        return { kind: "namespace-terminating", message: error.statusMessage };
      }
      throw error;
    }
  }

  /** DELETE the pod (disableEviction): no budget is consulted. */
  async deletePod(pod: { namespace: string; name: string }, gracePeriodSeconds: number): Promise<"accepted" | "gone"> {
    try {
      await this.call("DELETE", podPath(pod), gracePeriodSeconds >= 0 ? { apiVersion: "v1", kind: "DeleteOptions", gracePeriodSeconds } : undefined);
      return "accepted";
    } catch (error) {
      if (isNotFound(error)) return "gone";
      throw error;
    }
  }

  /** kubectl's test: gone means 404, or a pod of that name with another UID (a replacement). */
  async podGone(pod: { namespace: string; name: string; uid: string }): Promise<boolean> {
    return (await this.podState(pod)) === "gone";
  }

  /** Gone (as {@link podGone} says), terminating (a deletionTimestamp is set), or still running. */
  async podState(pod: { namespace: string; name: string; uid: string }): Promise<"gone" | "terminating" | "running"> {
    try {
      const current = await this.call<{ metadata?: { uid?: string; deletionTimestamp?: string } }>("GET", podPath(pod));
      if (current.metadata?.uid !== pod.uid) return "gone";
      return current.metadata.deletionTimestamp ? "terminating" : "running";
    } catch (error) {
      if (isNotFound(error)) return "gone";
      throw error;
    }
  }

  /**
   * A SelfSubjectAccessReview, as the writer's caller when it impersonates one: may they do
   * this? Denied reviews carry the authorizer's reason when it gives one.
   */
  async mayI(attributes: AccessAttributes): Promise<{ allowed: boolean; reason: string }> {
    const review = await this.call<{ status?: { allowed?: boolean; reason?: string } }>("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectAccessReview",
      spec: { resourceAttributes: attributes },
    });
    return { allowed: review.status?.allowed === true, reason: review.status?.reason ?? "" };
  }

  private call<T>(method: string, path: string, body?: unknown, contentType?: string, query: Record<string, string | number | undefined> = {}): Promise<T> {
    return this.client.request<T>(method, path, query, body, {
      ...(contentType ? { contentType } : {}),
      ...(this.impersonate ? { headers: { "Impersonate-User": this.impersonate } } : {}),
    });
  }
}

/** What a SelfSubjectAccessReview asks about (authorization.k8s.io/v1 ResourceAttributes). */
export interface AccessAttributes {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  /** Absent: in every namespace (or a cluster-scoped resource). */
  namespace?: string;
}

function podPath(pod: { namespace: string; name: string }): string {
  return `/api/v1/namespaces/${encodeURIComponent(pod.namespace)}/pods/${encodeURIComponent(pod.name)}`;
}
