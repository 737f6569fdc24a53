/**
 * `node-inventory sim --rbac --tls` judged by the real kubectl: bearer-token
 * authentication (the kubeconfig's administrator, ServiceAccount tokens from
 * `kubectl create token`, 401 for anything else), RBAC from roles and bindings
 * applied through the API, Forbidden worded as kube-apiserver words it, `auth
 * can-i` (with --as) and impersonation authorised by the `impersonate` verb.
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { kubeconfigClient, runKubectl, spawnSimulator, type Run, type SimProcess } from "./support.js";

const SA = "system:serviceaccount:node-inventory:node-inventory";

const NODE_READER = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: node-inventory-nodes
rules:
- apiGroups: [""]
  resources: ["nodes"]
  verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: node-inventory-nodes
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: node-inventory-nodes
subjects:
- kind: ServiceAccount
  name: node-inventory
  namespace: node-inventory
`;

const LEASE_ROLE = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: node-inventory-lease
  namespace: node-inventory
rules:
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["get", "create", "update"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: node-inventory-lease
  namespace: node-inventory
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: node-inventory-lease
subjects:
- kind: ServiceAccount
  name: node-inventory
`;

describe("sim --rbac --tls with the real kubectl", () => {
  let sim: SimProcess;
  let client: ReturnType<typeof kubeconfigClient>;
  /** The ServiceAccount's token, from `kubectl create token`. */
  let token = "";

  const kubectl = (...args: string[]): Promise<Run> => runKubectl(sim.kubeconfig, args);
  /** kubectl as the ServiceAccount: the kubeconfig's server and CA, the ServiceAccount's token. */
  const asSa = (...args: string[]): Promise<Run> => runKubectl(sim.kubeconfig, ["--token", token, ...args]);
  const apply = async (name: string, yaml: string): Promise<Run> => {
    const file = join(sim.dir, name);
    await writeFile(file, yaml);
    return kubectl("apply", "-f", file);
  };

  before(async () => {
    sim = await spawnSimulator(["--nodes", "6", "--seed", "3", "--name", "rbac-sim", "--rbac", "--tls"]);
    client = kubeconfigClient(sim.kubeconfigText);
    assert.match(sim.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  });

  after(async () => {
    await sim?.stop();
  });

  test("kubectl verifies the simulator's certificate (no insecure-skip-tls-verify) and the kubeconfig's user is the cluster-admin administrator", async () => {
    assert.doesNotMatch(sim.kubeconfigText, /insecure-skip-tls-verify/);
    const who = await kubectl("auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}");
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.stdout, 'kubernetes-admin ["kubeadm:cluster-admins","system:authenticated"]');
    const nodes = await kubectl("get", "nodes", "--no-headers");
    assert.equal(nodes.code, 0, nodes.stderr);
    assert.equal(nodes.stdout.trim().split("\n").length, 6);
    const binding = await kubectl("get", "clusterrolebinding", "kubeadm:cluster-admins", "-o", "jsonpath={.roleRef.kind}/{.roleRef.name} {.subjects[0].kind}/{.subjects[0].name}");
    assert.equal(binding.stdout, "ClusterRole/cluster-admin Group/kubeadm:cluster-admins");
  });

  test("auth can-i answers yes for the administrator and no (exit 1) for another user named with --as", async () => {
    const yes = await kubectl("auth", "can-i", "list", "nodes");
    assert.equal(yes.code, 0);
    assert.equal(yes.stdout, "yes\n");
    const no = await kubectl("auth", "can-i", "list", "nodes", "--as", "jane");
    assert.equal(no.code, 1);
    assert.equal(no.stdout, "no\n");
    const star = await kubectl("auth", "can-i", "*", "*");
    assert.equal(star.stdout, "yes\n");
  });

  test("a bad bearer token is 401 Unauthorized, as kubectl reports it; so is a request with none", async () => {
    const r = await runKubectl(sim.kubeconfig, ["--token", "not-a-token", "get", "nodes"]);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, "error: You must be logged in to the server (Unauthorized)\n");
    const bad = await client.request("GET", "/api/v1/nodes", { token: "not-a-token" });
    assert.equal(bad.status, 401);
    assert.deepEqual(JSON.parse(bad.text), { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: "Unauthorized", reason: "Unauthorized", code: 401 });
    const none = await client.request("GET", "/api/v1/nodes", { token: null });
    assert.equal(none.status, 401);
    assert.equal(JSON.parse(none.text).reason, "Unauthorized");
    // A forged ServiceAccount token (a valid JWT's claims, re-signed by nobody) is no better.
    const forged = `${Buffer.from('{"alg":"none"}').toString("base64url")}.${Buffer.from(JSON.stringify({ sub: SA })).toString("base64url")}.`;
    assert.equal((await client.request("GET", "/api/v1/nodes", { token: forged })).status, 401);
    // Health needs no credentials (a probe has none); discovery does.
    const health = await client.request("GET", "/readyz", { token: null });
    assert.equal(health.status, 200);
    assert.equal((await client.request("GET", "/api", { token: null })).status, 401);
  });

  test("kubectl create token mints a ServiceAccount token the simulator accepts as that ServiceAccount", async () => {
    assert.equal((await kubectl("create", "namespace", "node-inventory")).code, 0);
    assert.equal((await kubectl("create", "serviceaccount", "node-inventory", "-n", "node-inventory")).stdout, "serviceaccount/node-inventory created\n");
    const minted = await kubectl("create", "token", "node-inventory", "-n", "node-inventory");
    assert.equal(minted.code, 0, minted.stderr);
    token = minted.stdout.trim();
    assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8"));
    assert.equal(claims.sub, SA);
    assert.deepEqual(claims.aud, ["https://kubernetes.default.svc.cluster.local"]);
    assert.equal(claims.exp - claims.iat, 3600);
    const who = await asSa("auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}");
    assert.equal(who.stdout, `${SA} ["system:serviceaccounts","system:serviceaccounts:node-inventory","system:authenticated"]`);
    const short = await kubectl("create", "token", "node-inventory", "-n", "node-inventory", "--duration=5m");
    assert.equal(short.code, 1);
    assert.equal(
      short.stderr,
      'error: failed to create token: TokenRequest.authentication.k8s.io "node-inventory" is invalid: spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes\n',
    );
    // Every namespace has its default ServiceAccount, the generated ones and the one just created.
    const defaults = await kubectl("get", "serviceaccounts", "-A", "--field-selector", "metadata.name=default", "-o", "jsonpath={.items[*].metadata.namespace}");
    assert.ok(defaults.stdout.split(" ").includes("kube-system") && defaults.stdout.split(" ").includes("node-inventory"), defaults.stdout);
    const byDefault = await runKubectl(sim.kubeconfig, [
      "--token",
      (await kubectl("create", "token", "default", "-n", "node-inventory")).stdout.trim(),
      "auth",
      "whoami",
      "-o",
      "jsonpath={.status.userInfo.username}",
    ]);
    assert.equal(byDefault.stdout, "system:serviceaccount:node-inventory:default");
    const missing = await kubectl("create", "token", "nobody", "-n", "node-inventory");
    assert.equal(missing.stderr, 'error: failed to create token: serviceaccounts "nobody" not found\n');
  });

  test("without a binding the ServiceAccount's get nodes is Forbidden, worded as the apiserver words it", async () => {
    const r = await asSa("get", "nodes");
    assert.equal(r.code, 1);
    assert.equal(r.stderr, `Error from server (Forbidden): nodes is forbidden: User "${SA}" cannot list resource "nodes" in API group "" at the cluster scope\n`);
    const one = await client.request("GET", "/api/v1/nodes/anything", { token });
    assert.equal(one.status, 403);
    assert.deepEqual(JSON.parse(one.text), {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: `nodes "anything" is forbidden: User "${SA}" cannot get resource "nodes" in API group "" at the cluster scope`,
      reason: "Forbidden",
      details: { name: "anything", kind: "nodes" },
      code: 403,
    });
    const pods = await asSa("get", "pods", "-n", "kube-system");
    assert.equal(pods.stderr, `Error from server (Forbidden): pods is forbidden: User "${SA}" cannot list resource "pods" in API group "" in the namespace "kube-system"\n`);
    const evict = await client.request("POST", "/api/v1/namespaces/kube-system/pods/x/eviction", {
      token,
      body: { apiVersion: "policy/v1", kind: "Eviction", metadata: { name: "x", namespace: "kube-system" } },
    });
    assert.equal(JSON.parse(evict.text).message, `pods "x" is forbidden: User "${SA}" cannot create resource "pods/eviction" in API group "" in the namespace "kube-system"`);
    assert.equal((await asSa("auth", "can-i", "list", "nodes")).stdout, "no\n");
  });

  test("kubectl apply of a ClusterRole and its binding grants exactly what it lists", async () => {
    const r = await apply("node-reader.yaml", NODE_READER);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "clusterrole.rbac.authorization.k8s.io/node-inventory-nodes created\nclusterrolebinding.rbac.authorization.k8s.io/node-inventory-nodes created\n");
    const nodes = await asSa("get", "nodes", "--no-headers");
    assert.equal(nodes.code, 0, nodes.stderr);
    assert.equal(nodes.stdout.trim().split("\n").length, 6);
    assert.equal((await asSa("auth", "can-i", "watch", "nodes")).stdout, "yes\n");
    // Only what it lists: not patch, not another resource.
    const patch = await asSa("cordon", nodes.stdout.split(/\s/)[0]!);
    assert.match(patch.stderr, new RegExp(`nodes "[^"]+" is forbidden: User "${SA}" cannot patch resource "nodes" in API group "" at the cluster scope`));
    assert.equal((await asSa("auth", "can-i", "list", "pods", "-A")).stdout, "no\n");
    assert.equal((await kubectl("auth", "can-i", "list", "nodes", "--as", SA)).stdout, "yes\n");
    // The review says which binding allowed it.
    const review = await client.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
      body: { apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview", spec: { user: SA, groups: ["system:serviceaccounts"], resourceAttributes: { verb: "list", resource: "nodes" } } },
    });
    assert.equal(review.status, 201);
    assert.deepEqual(JSON.parse(review.text).status, {
      allowed: true,
      reason: 'RBAC: allowed by ClusterRoleBinding "node-inventory-nodes" of ClusterRole "node-inventory-nodes" to ServiceAccount "node-inventory/node-inventory"',
    });
  });

  test("a Role and RoleBinding grant in their namespace only", async () => {
    const r = await apply("lease.yaml", LEASE_ROLE);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await asSa("auth", "can-i", "create", "leases.coordination.k8s.io", "-n", "node-inventory")).stdout, "yes\n");
    assert.equal((await asSa("auth", "can-i", "create", "leases.coordination.k8s.io", "-n", "kube-system")).stdout, "no\n");
    assert.equal((await asSa("auth", "can-i", "delete", "leases.coordination.k8s.io", "-n", "node-inventory")).stdout, "no\n");
    const list = await asSa("auth", "can-i", "--list", "-n", "node-inventory");
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^leases\.coordination\.k8s\.io\s+\[\]\s+\[\]\s+\[get create update\]$/m);
    assert.match(list.stdout, /^nodes\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
  });

  test("a binding to a ClusterRole that does not exist grants nothing and the denial says why", async () => {
    const r = await kubectl("create", "clusterrolebinding", "dangling", "--clusterrole=not-there", `--serviceaccount=node-inventory:node-inventory`);
    assert.equal(r.code, 0, r.stderr);
    const denied = await asSa("get", "namespaces");
    assert.equal(
      denied.stderr,
      `Error from server (Forbidden): namespaces is forbidden: User "${SA}" cannot list resource "namespaces" in API group "" at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io "not-there" not found\n`,
    );
    await kubectl("delete", "clusterrolebinding", "dangling");
  });

  test("impersonation needs the impersonate verb: the administrator may, the ServiceAccount may not", async () => {
    const admin = await kubectl("get", "nodes", "--as", SA, "--no-headers");
    assert.equal(admin.code, 0, admin.stderr);
    const denied = await asSa("get", "nodes", "--as", "jane");
    assert.equal(denied.stderr, `Error from server (Forbidden): users "jane" is forbidden: User "${SA}" cannot impersonate resource "users" in API group "" at the cluster scope\n`);
    const groups = await kubectl("auth", "whoami", "--as", "jane", "--as-group", "platform", "-o", "jsonpath={.status.userInfo.groups}");
    assert.equal(groups.stdout, '["platform","system:authenticated"]');
    await apply(
      "impersonator.yaml",
      `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: impersonate-jane
rules:
- apiGroups: [""]
  resources: ["users"]
  verbs: ["impersonate"]
  resourceNames: ["jane"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: impersonate-jane
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: impersonate-jane}
subjects: [{kind: ServiceAccount, name: node-inventory, namespace: node-inventory}]
`,
    );
    const asJane = await asSa("get", "nodes", "--as", "jane");
    assert.equal(asJane.stderr, 'Error from server (Forbidden): nodes is forbidden: User "jane" cannot list resource "nodes" in API group "" at the cluster scope\n');
    const asJoe = await asSa("get", "nodes", "--as", "joe");
    assert.match(asJoe.stderr, /users "joe" is forbidden: User "system:serviceaccount:node-inventory:node-inventory" cannot impersonate resource "users"/);
  });

  test("a Role may only grant what its writer holds, a binding only bind what its writer holds (no escalation)", async () => {
    await apply(
      "role-writer.yaml",
      `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: role-writer, namespace: node-inventory}
rules:
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles, rolebindings]
  verbs: [create, get, update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: role-writer, namespace: node-inventory}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: role-writer}
subjects: [{kind: ServiceAccount, name: node-inventory}]
`,
    );
    const role = (name: string, resource: string) => ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name, namespace: "node-inventory" },
      rules: [{ apiGroups: [resource === "leases" ? "coordination.k8s.io" : ""], resources: [resource], verbs: ["get"] }],
    });
    const post = (path: string, body: object) => client.request("POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/node-inventory/${path}`, { token, body });
    assert.equal((await post("roles", role("lease-reader", "leases"))).status, 201);
    const escalating = await post("roles", role("secret-reader", "secrets"));
    assert.equal(escalating.status, 403);
    assert.deepEqual(JSON.parse(escalating.text), {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: `roles.rbac.authorization.k8s.io "secret-reader" is forbidden: user "${SA}" (groups=["system:serviceaccounts" "system:serviceaccounts:node-inventory" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`,
      reason: "Forbidden",
      details: { name: "secret-reader", group: "rbac.authorization.k8s.io", kind: "roles" },
      code: 403,
    });
    const binding = (name: string, kind: string, roleName: string) => ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name, namespace: "node-inventory" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind, name: roleName },
      subjects: [{ kind: "User", name: "jane" }],
    });
    assert.equal((await post("rolebindings", binding("jane-leases", "Role", "lease-reader"))).status, 201);
    const admin = await post("rolebindings", binding("jane-admin", "ClusterRole", "cluster-admin"));
    assert.equal(admin.status, 403);
    assert.match(
      JSON.parse(admin.text).message,
      /^rolebindings\.rbac\.authorization\.k8s\.io "jane-admin" is forbidden: user "system:serviceaccount:node-inventory:node-inventory" \(groups=\[.*\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\["\*"\], Resources:\["\*"\], Verbs:\["\*"\]\}\n\{NonResourceURLs:\["\*"\], Verbs:\["\*"\]\}$/,
    );
    // The administrator holds everything: it may grant anything.
    const granted = await kubectl("create", "rolebinding", "jane-admin", "--clusterrole=cluster-admin", "--user=jane", "-n", "node-inventory");
    assert.equal(granted.code, 0, granted.stderr);
  });

  test("a deleted namespace is Terminating, refuses new content, then goes with everything in it (and its tokens)", async () => {
    assert.equal((await kubectl("create", "namespace", "doomed")).code, 0);
    assert.equal((await kubectl("create", "serviceaccount", "app", "-n", "doomed")).code, 0);
    const appToken = (await kubectl("create", "token", "app", "-n", "doomed")).stdout.trim();
    assert.equal((await runKubectl(sim.kubeconfig, ["--token", appToken, "auth", "whoami", "-o", "name"])).code, 0);
    const gone = await kubectl("delete", "namespace", "doomed", "--wait=false");
    assert.equal(gone.stdout, 'namespace "doomed" deleted\n');
    assert.equal((await kubectl("get", "namespace", "doomed", "-o", "jsonpath={.status.phase}")).stdout, "Terminating");
    const late = await client.request("POST", "/api/v1/namespaces/doomed/configmaps", { body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "late" } } });
    assert.equal(late.status, 403);
    assert.equal(JSON.parse(late.text).message, "configmaps is forbidden: unable to create new content in namespace doomed because it is being terminated");
    assert.deepEqual(JSON.parse(late.text).details.causes, [{ reason: "NamespaceTerminating", message: "namespace doomed is being terminated", field: "metadata.namespace" }]);
    // kubectl delete waits for the namespace to go, as against a real cluster.
    const wait = await kubectl("wait", "--for=delete", "namespace/doomed", "--timeout=60s");
    assert.equal(wait.code, 0, wait.stderr);
    assert.equal((await kubectl("get", "serviceaccounts", "-n", "doomed", "-o", "name")).stdout, "");
    assert.equal((await runKubectl(sim.kubeconfig, ["--token", appToken, "get", "nodes"])).stderr, "error: You must be logged in to the server (Unauthorized)\n");
    const nowhere = await client.request("POST", "/api/v1/namespaces/nowhere/configmaps", { body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } } });
    assert.equal(nowhere.status, 404);
    assert.equal(JSON.parse(nowhere.text).message, 'namespaces "nowhere" not found');
  });

  test("deleting the ServiceAccount ends its tokens (401)", async () => {
    assert.equal((await asSa("auth", "whoami", "-o", "name")).code, 0);
    await kubectl("delete", "serviceaccount", "node-inventory", "-n", "node-inventory");
    const r = await asSa("get", "nodes");
    assert.equal(r.stderr, "error: You must be logged in to the server (Unauthorized)\n");
  });
});
