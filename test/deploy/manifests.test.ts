/**
 * The Kubernetes manifests (deploy/kubernetes) as `kubectl kustomize` renders them: every object
 * valid against the Kubernetes OpenAPI schemas (kubernetes-models), the pod locked down, the
 * overlays' database choices, and RBAC that grants what the service calls and nothing more.
 */
import { describe, test, before } from "node:test";
import assert from "node:assert/strict";
import { find, renderOverlay, renderWithComponents, type KubeObject } from "./render.js";

/** kubernetes-models' class for an object: `kubernetes-models/<group>/<version>`, export = kind. */
async function modelOf(object: KubeObject): Promise<new (data: unknown) => { validate(): void }> {
  const module = (await import(`kubernetes-models/${object.apiVersion}`)) as Record<string, new (data: unknown) => { validate(): void }>;
  const model = module[object.kind];
  if (!model) throw new Error(`kubernetes-models has no ${object.apiVersion} ${object.kind}`);
  return model;
}

async function validate(object: KubeObject): Promise<void> {
  const Model = await modelOf(object);
  new Model(object).validate();
}

type Rule = { apiGroups?: string[]; resources?: string[]; verbs: string[]; resourceNames?: string[]; nonResourceURLs?: string[] };

/** Every (group, resource, verb) a set of rules grants, as "group/resource:verb". */
function grants(rules: Rule[]): string[] {
  return rules.flatMap((rule) => (rule.apiGroups ?? []).flatMap((group) => (rule.resources ?? []).flatMap((resource) => rule.verbs.map((verb) => `${group}/${resource}:${verb}`))));
}

const rbacRules = (objects: KubeObject[]): Rule[] => objects.filter((o) => o.kind === "ClusterRole" || o.kind === "Role").flatMap((o) => o.rules as Rule[]);

/** What the service calls (src/cluster: reflector, writer, metrics poller, node facts cache, lease elector), the least it can run with. */
const CLUSTER_GRANTS = [
  "/nodes:get",
  "/nodes:list",
  "/nodes:watch",
  "/nodes:patch",
  "/pods:get",
  "/pods:list",
  "/pods:watch",
  "/pods:delete",
  "/pods/eviction:create",
  "apps/daemonsets:get",
  "/events:list",
  "/events:watch",
  "metrics.k8s.io/nodes:list",
];
const LEASE_GRANTS = ["coordination.k8s.io/leases:get", "coordination.k8s.io/leases:create", "coordination.k8s.io/leases:update"];
const NODE_LEASE_GRANTS = ["coordination.k8s.io/leases:list", "coordination.k8s.io/leases:watch"];

for (const overlay of ["single", "ha"]) {
  describe(`kubectl kustomize deploy/kubernetes/overlays/${overlay}`, () => {
    let objects: KubeObject[];
    before(async () => {
      objects = await renderOverlay(overlay);
    });

    test("every rendered object is valid against the Kubernetes schemas", async () => {
      assert.ok(objects.length >= 9, `only ${objects.length} objects`);
      for (const object of objects) {
        await assert.doesNotReject(validate(object), `${object.kind}/${object.metadata.name}`);
      }
    });

    test("everything lives in the node-inventory namespace, except what is cluster-scoped and the node Leases' Role", () => {
      const clusterScoped = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding"]);
      for (const object of objects) {
        const where = object.metadata.name === "node-inventory-node-leases" ? "kube-node-lease" : clusterScoped.has(object.kind) ? undefined : "node-inventory";
        assert.equal(object.metadata.namespace, where, `${object.kind}/${object.metadata.name}`);
      }
      assert.deepEqual(
        objects.map((o) => `${o.kind}/${o.metadata.name}`).sort(),
        [
          "ClusterRole/node-inventory",
          "ClusterRoleBinding/node-inventory",
          "Deployment/node-inventory",
          "Namespace/node-inventory",
          "PodDisruptionBudget/node-inventory",
          "Role/node-inventory-lease",
          "Role/node-inventory-node-leases",
          "RoleBinding/node-inventory-lease",
          "RoleBinding/node-inventory-node-leases",
          "Service/node-inventory",
          "ServiceAccount/node-inventory",
          ...(overlay === "single" ? ["PersistentVolumeClaim/node-inventory-data"] : []),
        ].sort(),
      );
    });

    test("the ClusterRole grants exactly what the service calls, the Roles only its Lease and reading the kubelets' Leases", () => {
      assert.deepEqual(grants(find(objects, "ClusterRole", "node-inventory").rules).sort(), [...CLUSTER_GRANTS].sort());
      assert.deepEqual(grants(find(objects, "Role", "node-inventory-lease").rules).sort(), [...LEASE_GRANTS].sort());
      assert.deepEqual(grants(find(objects, "Role", "node-inventory-node-leases").rules).sort(), [...NODE_LEASE_GRANTS].sort());
      const nodeLeases = find(objects, "RoleBinding", "node-inventory-node-leases");
      assert.deepEqual(nodeLeases.roleRef, { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "node-inventory-node-leases" });
      assert.deepEqual(nodeLeases.subjects, [{ kind: "ServiceAccount", name: "node-inventory", namespace: "node-inventory" }]);
      const binding = find(objects, "ClusterRoleBinding", "node-inventory");
      assert.deepEqual(binding.roleRef, { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "node-inventory" });
      assert.deepEqual(binding.subjects, [{ kind: "ServiceAccount", name: "node-inventory", namespace: "node-inventory" }]);
      const leaseBinding = find(objects, "RoleBinding", "node-inventory-lease");
      assert.deepEqual(leaseBinding.roleRef, { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "node-inventory-lease" });
      assert.deepEqual(leaseBinding.subjects, [{ kind: "ServiceAccount", name: "node-inventory", namespace: "node-inventory" }]);
    });

    test("the RBAC grants no wildcard, no secrets, no pod creation and no impersonation", () => {
      const rules = rbacRules(objects);
      for (const rule of rules) {
        for (const field of [rule.apiGroups, rule.resources, rule.verbs, rule.resourceNames, rule.nonResourceURLs]) assert.ok(!field?.includes("*"), JSON.stringify(rule));
        assert.equal(rule.nonResourceURLs, undefined);
      }
      const all = grants(rules);
      assert.deepEqual(
        all.filter((g) => g.startsWith("/secrets") || g.startsWith("/configmaps")),
        [],
      );
      assert.deepEqual(
        all.filter((g) => g === "/pods:create" || g.startsWith("/pods/exec") || g.startsWith("/pods/attach") || g.startsWith("/pods/portforward")),
        [],
      );
      assert.deepEqual(
        all.filter((g) => g.endsWith(":impersonate") || g.endsWith(":escalate") || g.endsWith(":bind")),
        [],
      );
    });

    test("the pod runs as non-root, read-only, with no privilege, capability or syscall beyond the default", () => {
      const pod = find(objects, "Deployment", "node-inventory").spec.template.spec;
      assert.equal(pod.serviceAccountName, "node-inventory");
      assert.equal(pod.securityContext.runAsNonRoot, true);
      assert.ok(pod.securityContext.runAsUser > 0);
      assert.deepEqual(pod.securityContext.seccompProfile, { type: "RuntimeDefault" });
      const [container] = pod.containers;
      assert.equal(pod.containers.length, 1);
      assert.deepEqual(container.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } });
      const tmp = container.volumeMounts.find((m: { mountPath: string }) => m.mountPath === "/tmp");
      assert.ok(tmp, "no /tmp mount");
      assert.ok(pod.volumes.find((v: { name: string }) => v.name === tmp.name).emptyDir, "/tmp is not an emptyDir");
    });

    test("probes: liveness on /healthz, readiness on /readyz; requests and a memory limit set", () => {
      const [container] = find(objects, "Deployment", "node-inventory").spec.template.spec.containers;
      assert.deepEqual(container.livenessProbe.httpGet, { path: "/healthz", port: "http" });
      assert.deepEqual(container.readinessProbe.httpGet, { path: "/readyz", port: "http" });
      assert.deepEqual(container.ports, [{ name: "http", containerPort: 4000 }]);
      assert.ok(container.resources.requests.cpu && container.resources.requests.memory);
      assert.ok(container.resources.limits.memory);
    });

    test("the tokens file comes from the Secret node-inventory-tokens; the Lease from the pod's namespace", () => {
      const pod = find(objects, "Deployment", "node-inventory").spec.template.spec;
      const env = Object.fromEntries(pod.containers[0].env.map((e: { name: string }) => [e.name, e]));
      assert.equal(env.AUTH_TOKENS_FILE.value, "/etc/node-inventory/tokens/tokens.json");
      const mount = pod.containers[0].volumeMounts.find((m: { mountPath: string }) => m.mountPath === "/etc/node-inventory/tokens");
      assert.deepEqual(pod.volumes.find((v: { name: string }) => v.name === mount.name).secret, { secretName: "node-inventory-tokens" });
      assert.deepEqual(env.LEASE_NAMESPACE.valueFrom, { fieldRef: { fieldPath: "metadata.namespace" } });
      assert.equal(env.IMPERSONATE_CALLERS, undefined);
    });

    test("the Service and PodDisruptionBudget select the Deployment's pods", () => {
      const labels = find(objects, "Deployment", "node-inventory").spec.template.metadata.labels;
      const selects = (selector: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
      assert.ok(selects(find(objects, "Service", "node-inventory").spec.selector));
      const pdb = find(objects, "PodDisruptionBudget", "node-inventory");
      assert.ok(selects(pdb.spec.selector.matchLabels));
      assert.equal(pdb.spec.maxUnavailable, 1);
    });

    if (overlay === "single") {
      test("single: one replica on PGlite in a PersistentVolumeClaim, replaced (never two on one data directory)", () => {
        const deployment = find(objects, "Deployment", "node-inventory");
        assert.equal(deployment.spec.replicas, 1);
        assert.equal(deployment.spec.strategy.type, "Recreate");
        const pod = deployment.spec.template.spec;
        const env = Object.fromEntries(pod.containers[0].env.map((e: { name: string }) => [e.name, e]));
        assert.equal(env.DATABASE_URL, undefined);
        assert.equal(env.DATA_DIR.value, "/data");
        const data = pod.containers[0].volumeMounts.find((m: { mountPath: string }) => m.mountPath === "/data");
        const claim = pod.volumes.find((v: { name: string }) => v.name === data.name).persistentVolumeClaim.claimName;
        assert.deepEqual(find(objects, "PersistentVolumeClaim", claim).spec.accessModes, ["ReadWriteOnce"]);
      });
    } else {
      test("ha: two replicas on PostgreSQL, the URL from the Secret node-inventory-database, spread over nodes", () => {
        const deployment = find(objects, "Deployment", "node-inventory");
        assert.ok(deployment.spec.replicas >= 2);
        assert.deepEqual(deployment.spec.strategy.rollingUpdate, { maxUnavailable: 0, maxSurge: 1 });
        const pod = deployment.spec.template.spec;
        const env = Object.fromEntries(pod.containers[0].env.map((e: { name: string }) => [e.name, e]));
        assert.deepEqual(env.DATABASE_URL.valueFrom, { secretKeyRef: { name: "node-inventory-database", key: "url" } });
        assert.equal(env.DATA_DIR, undefined);
        assert.ok(pod.topologySpreadConstraints.some((c: { topologyKey: string }) => c.topologyKey === "kubernetes.io/hostname"));
      });
    }
  });
}

describe("components/impersonate", () => {
  test("adds the impersonate verb on users, and only it, with --impersonate turned on", async () => {
    const objects = await renderWithComponents("ha", ["impersonate"]);
    for (const object of objects) await assert.doesNotReject(validate(object), `${object.kind}/${object.metadata.name}`);
    assert.deepEqual(grants(find(objects, "ClusterRole", "node-inventory-impersonate").rules), ["/users:impersonate"]);
    assert.deepEqual(find(objects, "ClusterRoleBinding", "node-inventory-impersonate").subjects, [{ kind: "ServiceAccount", name: "node-inventory", namespace: "node-inventory" }]);
    const env = find(objects, "Deployment", "node-inventory").spec.template.spec.containers[0].env;
    assert.deepEqual(
      env.find((e: { name: string }) => e.name === "IMPERSONATE_CALLERS"),
      { name: "IMPERSONATE_CALLERS", value: "true" },
    );
    // Nothing else widens: the base grants are the same.
    assert.deepEqual(grants(find(objects, "ClusterRole", "node-inventory").rules).sort(), [...CLUSTER_GRANTS].sort());
  });
});

describe("the schema check", () => {
  test("rejects what the apiserver would: a container without a name", async () => {
    const objects = await renderOverlay("single");
    const deployment = structuredClone(find(objects, "Deployment", "node-inventory"));
    delete deployment.spec.template.spec.containers[0].name;
    await assert.rejects(validate(deployment), /name/);
  });
});
