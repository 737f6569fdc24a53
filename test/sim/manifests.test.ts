/**
 * An application's manifests through the real kubectl against `sim --rbac
 * --tls`: `kubectl apply -k` of a kustomize base (Namespace, ServiceAccount,
 * RBAC, ConfigMap and Secret generators, Deployment, PVC, Service, PDB,
 * NetworkPolicy) validates against the server's OpenAPI v3 as against a real
 * cluster (no --validate=false), stores every object with the apiserver's
 * defaults, and `kubectl explain` reads the same schemas.
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { kubeconfigClient, runKubectl, spawnSimulator, type Run, type SimProcess } from "./support.js";

/** The fixture is read from the source tree (tsc does not copy YAML). */
const APP = fileURLToPath(new URL("../../../test/sim/fixtures/app", import.meta.url));

describe("an application's manifests through kubectl against sim --rbac --tls", () => {
  let sim: SimProcess;
  let client: ReturnType<typeof kubeconfigClient>;
  const kubectl = (...args: string[]): Promise<Run> => runKubectl(sim.kubeconfig, args);

  before(async () => {
    sim = await spawnSimulator(["--nodes", "8", "--seed", "5", "--rbac", "--tls"]);
    client = kubeconfigClient(sim.kubeconfigText);
  });

  after(async () => {
    await sim?.stop();
  });

  test("the server publishes OpenAPI v3 per group-version, each operation tagged with its kind, PATCH taking fieldValidation", async () => {
    const index = await client.json("/openapi/v3");
    assert.deepEqual(Object.keys(index.paths).sort(), ["api/v1", "apis/apps/v1", "apis/authentication.k8s.io/v1", "apis/authorization.k8s.io/v1", "apis/coordination.k8s.io/v1", "apis/events.k8s.io/v1", "apis/networking.k8s.io/v1", "apis/policy/v1", "apis/policy/v1beta1", "apis/rbac.authorization.k8s.io/v1"]);
    const apps = await client.json(index.paths["apis/apps/v1"].serverRelativeURL);
    const patch = apps.paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"].patch;
    assert.deepEqual(patch["x-kubernetes-group-version-kind"], { group: "apps", kind: "Deployment", version: "v1" });
    assert.ok(patch.parameters.some((p: any) => p.name === "fieldValidation" && p.in === "query"));
    const deployment = Object.values(apps.components.schemas as Record<string, any>).find((s) => s["x-kubernetes-group-version-kind"]?.[0]?.kind === "Deployment");
    assert.equal(deployment.description, "Deployment enables declarative updates for Pods and ReplicaSets.");
    // A document without credentials is refused like any other request.
    assert.equal((await client.request("GET", "/openapi/v3", { token: null })).status, 401);
  });

  test("kubectl apply -k creates every object, validated by the server's OpenAPI; a second apply changes nothing", async () => {
    const first = await kubectl("apply", "-k", APP);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stderr, "");
    const created = first.stdout.trim().split("\n").map((l) => l.replace(/-[a-z0-9]{10} created$/, " created")).sort();
    assert.deepEqual(created, [
      "clusterrole.rbac.authorization.k8s.io/shop-nodes created",
      "clusterrolebinding.rbac.authorization.k8s.io/shop-nodes created",
      "configmap/shop-config created",
      "deployment.apps/shop created",
      "namespace/storefront created",
      "networkpolicy.networking.k8s.io/shop created",
      "persistentvolumeclaim/shop-data created",
      "poddisruptionbudget.policy/shop created",
      "role.rbac.authorization.k8s.io/shop-lease created",
      "rolebinding.rbac.authorization.k8s.io/shop-lease created",
      "secret/shop-db created",
      "service/shop created",
      "serviceaccount/shop created",
    ]);
    const second = await kubectl("apply", "-k", APP);
    assert.equal(second.code, 0, second.stderr);
    // kubectl re-sends a PodDisruptionBudget's selector every time (its patch strategy is replace), as against a real cluster.
    const changed = second.stdout.trim().split("\n").filter((l) => !l.endsWith(" unchanged"));
    assert.deepEqual(changed, ["poddisruptionbudget.policy/shop configured"]);
    const diff = await kubectl("diff", "-k", APP);
    assert.equal(diff.code, 0, diff.stdout);
  });

  test("stored objects carry the apiserver's defaults: a Service's cluster IP, a Secret's data, the namespace label", async () => {
    const svc = JSON.parse((await kubectl("get", "service", "shop", "-n", "storefront", "-o", "json")).stdout);
    assert.match(svc.spec.clusterIP, /^10\.96\.\d+\.\d+$/);
    assert.deepEqual(svc.spec.clusterIPs, [svc.spec.clusterIP]);
    assert.deepEqual(svc.spec.ports, [{ name: "http", port: 80, protocol: "TCP", targetPort: "http" }]);
    assert.equal(svc.spec.type, "ClusterIP");
    const secrets = JSON.parse((await kubectl("get", "secrets", "-n", "storefront", "-o", "json")).stdout).items;
    assert.equal(secrets.length, 1);
    assert.equal(secrets[0].type, "Opaque");
    assert.equal(Buffer.from(secrets[0].data.url, "base64").toString(), "postgres://shop@db/shop");
    const ns = await kubectl("get", "namespace", "storefront", "-o", "jsonpath={.metadata.labels.kubernetes\\.io/metadata\\.name} {.status.phase}");
    assert.equal(ns.stdout, "storefront Active");
    // The ServiceAccount the manifests bind may read nodes and nothing more.
    assert.equal((await kubectl("auth", "can-i", "list", "nodes", "--as", "system:serviceaccount:storefront:shop")).stdout, "yes\n");
    assert.equal((await kubectl("auth", "can-i", "update", "leases.coordination.k8s.io", "-n", "storefront", "--as", "system:serviceaccount:storefront:shop")).stdout, "yes\n");
    assert.equal((await kubectl("auth", "can-i", "get", "secrets", "-n", "storefront", "--as", "system:serviceaccount:storefront:shop")).stdout, "no\n");
  });

  test("kubectl get prints the apiserver's columns for the stored kinds", async () => {
    const rows = async (...args: string[]) => (await kubectl("get", ...args)).stdout.trim().split("\n").map((l) => l.trim().split(/\s{2,}/));
    const svc = JSON.parse((await kubectl("get", "service", "shop", "-n", "storefront", "-o", "json")).stdout);
    const services = await rows("service", "-n", "storefront");
    assert.deepEqual(services[0], ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]);
    assert.deepEqual(services.slice(1).map((r) => r.slice(0, 5)), [["shop", "ClusterIP", svc.spec.clusterIP, "<none>", "80/TCP"]]);
    assert.deepEqual((await rows("secrets", "-n", "storefront"))[0], ["NAME", "TYPE", "DATA", "AGE"]);
    assert.deepEqual((await rows("secrets", "-n", "storefront"))[1]!.slice(1, 3), ["Opaque", "1"]);
    assert.deepEqual((await rows("networkpolicy", "-n", "storefront"))[1]!.slice(0, 2), ["shop", "app=shop"]);
    assert.deepEqual((await rows("rolebinding", "shop-lease", "-n", "storefront", "-o", "wide"))[1]!.slice(0, 2), ["shop-lease", "Role/shop-lease"]);
    assert.match((await kubectl("get", "rolebinding", "shop-lease", "-n", "storefront", "-o", "wide")).stdout, /storefront\/shop\n$/);
  });

  test("kubectl create of secrets, configmaps, services, roles, bindings and PDBs (protobuf bodies) stores what was asked", async () => {
    const ns = ["-n", "storefront"];
    const created = [
      await kubectl("create", "secret", "generic", "db", "--from-literal=url=postgres://app@db/app", ...ns),
      await kubectl("create", "configmap", "settings", "--from-literal=mode=fast", ...ns),
      await kubectl("create", "service", "clusterip", "api", "--tcp=80:8080", ...ns),
      await kubectl("create", "role", "pod-reader", "--verb=get,list", "--resource=pods", "--resource-name=one", ...ns),
      await kubectl("create", "rolebinding", "pod-reader", "--role=pod-reader", "--user=jane", "--serviceaccount=storefront:shop", ...ns),
      await kubectl("create", "clusterrolebinding", "shop-view", "--clusterrole=shop-nodes", "--group=viewers"),
      await kubectl("create", "pdb", "api", "--selector=app=api", "--min-available=50%", ...ns),
    ];
    for (const r of created) assert.equal(r.code, 0, r.stderr);
    const get = async (what: string, path: string) => (await kubectl("get", what, "-n", "storefront", "-o", `jsonpath=${path}`)).stdout;
    assert.equal(Buffer.from(await get("secret/db", "{.data.url}"), "base64").toString(), "postgres://app@db/app");
    assert.equal(await get("secret/db", "{.type}"), "Opaque");
    assert.equal(await get("configmap/settings", "{.data}"), '{"mode":"fast"}');
    assert.equal(await get("service/api", "{.spec.ports}"), '[{"name":"80-8080","port":80,"protocol":"TCP","targetPort":8080}]');
    assert.equal(await get("role/pod-reader", "{.rules}"), '[{"apiGroups":[""],"resourceNames":["one"],"resources":["pods"],"verbs":["get","list"]}]');
    assert.equal(await get("rolebinding/pod-reader", "{.roleRef.kind}/{.roleRef.name} {.subjects}"), 'Role/pod-reader [{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"jane"},{"kind":"ServiceAccount","name":"shop","namespace":"storefront"}]');
    assert.equal((await kubectl("get", "clusterrolebinding", "shop-view", "-o", "jsonpath={.subjects}")).stdout, '[{"apiGroup":"rbac.authorization.k8s.io","kind":"Group","name":"viewers"}]');
    assert.equal(await get("pdb/api", "{.spec.minAvailable} {.spec.selector.matchLabels}"), '50% {"app":"api"}');
    assert.equal((await kubectl("auth", "can-i", "get", "pods/one", "-n", "storefront", "--as", "jane")).stdout, "yes\n");
    assert.equal((await kubectl("auth", "can-i", "get", "pods/two", "-n", "storefront", "--as", "jane")).stdout, "no\n");
  });

  test("a binding's roleRef cannot change, as the apiserver refuses it", async () => {
    const file = join(sim.dir, "rebind.yaml");
    await writeFile(file, "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: shop-lease, namespace: storefront}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: ServiceAccount, name: shop}]\n");
    const r = await kubectl("apply", "-f", file);
    assert.equal(r.code, 1);
    // kubectl words an Invalid Status from its details, as it does for a real apiserver's.
    assert.equal(r.stderr, 'The RoleBinding "shop-lease" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"cluster-admin"}: cannot change roleRef\n');
  });

  test("a field the schema does not declare fails kubectl apply (fieldValidation=Strict) and is a warning with --validate=warn", async () => {
    const file = join(sim.dir, "typo.yaml");
    await writeFile(file, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: typo, namespace: storefront}\nspec:\n  replicas: 1\n  replica: 2\n  selector: {matchLabels: {app: typo}}\n  template:\n    metadata: {labels: {app: typo}}\n    spec:\n      containers: [{name: a, image: x, resource: {}}]\n");
    const strict = await kubectl("apply", "-f", file);
    assert.equal(strict.code, 1);
    assert.equal(strict.stderr, `Error from server (BadRequest): error when creating "${file}": Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.replica", unknown field "spec.template.spec.containers[0].resource"\n`);
    assert.equal((await kubectl("get", "deployment", "typo", "-n", "storefront")).code, 1);
    const warn = await kubectl("create", "-f", file, "--validate=warn");
    assert.equal(warn.code, 0, warn.stderr);
    assert.equal(warn.stderr, 'Warning: unknown field "spec.replica"\nWarning: unknown field "spec.template.spec.containers[0].resource"\n');
  });

  test("kubectl create -f validates too, and explain reads the server's schemas", async () => {
    const file = join(sim.dir, "cm.yaml");
    await writeFile(file, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: storefront}\ndata: {a: b}\n");
    const r = await kubectl("create", "-f", file);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "configmap/extra created\n");
    const explain = await kubectl("explain", "deployment.spec.replicas");
    assert.equal(explain.code, 0, explain.stderr);
    assert.match(explain.stdout, /^GROUP:\s+apps\nKIND:\s+Deployment\nVERSION:\s+v1\n\nFIELD: replicas <integer>\n/);
    assert.match(explain.stdout, /Number of desired pods\./);
    const taints = await kubectl("explain", "node.spec.taints");
    assert.match(taints.stdout, /FIELD: taints <\[\]Taint>/);
    assert.match(taints.stdout, /^ {2}effect\t<string> -required-$/m);
    const rules = await kubectl("explain", "clusterrole.rules.verbs");
    assert.match(rules.stdout, /^GROUP:\s+rbac\.authorization\.k8s\.io\nKIND:\s+ClusterRole\n/);
  });

  test("kubectl delete -k uninstalls it all: the namespace goes with what the manifests did not list", async () => {
    const r = await kubectl("delete", "-k", APP);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^namespace "storefront" deleted$/m);
    assert.match(r.stdout, /^clusterrolebinding\.rbac\.authorization\.k8s\.io "shop-nodes" deleted$/m);
    assert.equal((await kubectl("get", "namespace", "storefront")).stderr, 'Error from server (NotFound): namespaces "storefront" not found\n');
    // The Secret and ConfigMap kubectl create made (not in the manifests) went with the namespace.
    assert.equal((await client.request("GET", "/api/v1/namespaces/storefront/secrets/db")).status, 404);
    assert.equal((await kubectl("get", "clusterrole", "shop-nodes", "-o", "name")).code, 1);
  });
});
