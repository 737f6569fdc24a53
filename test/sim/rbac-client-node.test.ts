/**
 * @kubernetes/client-node (what the service uses) against `startSimulator({
 * rbac: true, tls: true })`: the administrator's kubeconfig works as is, lists
 * and watches included; a ServiceAccount token works as far as its bindings
 * go, and a refusal carries the apiserver's Forbidden Status.
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api, makeInformer, type V1Node } from "@kubernetes/client-node";
import { startSimulator, R, type Simulator } from "../../src/sim/index.js";
import { kubeConfigFor, statusOf, eventually } from "./support.js";

/** A kubeconfig for the simulator's server and CA with another bearer token. */
function withToken(sim: Simulator, token: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(sim.kubeconfig().replace(/^(\s+token: ).*$/m, `$1${JSON.stringify(token)}`));
  return kc;
}

describe("client-node against a simulator with --rbac --tls", () => {
  let sim: Simulator;

  before(async () => {
    sim = await startSimulator({ nodes: 4, seed: 2, rbac: true, tls: true });
  });

  after(async () => {
    await sim?.stop();
  });

  test("the administrator's kubeconfig lists and watches nodes over verified TLS", async () => {
    assert.match(sim.url, /^https:/);
    const kc = kubeConfigFor(sim);
    const core = kc.makeApiClient(CoreV1Api);
    const list = await core.listNode();
    assert.equal(list.items.length, 4);
    const informer = makeInformer<V1Node>(kc, "/api/v1/nodes", () => core.listNode());
    const seen = new Set<string>();
    informer.on("add", (n) => seen.add(n.metadata!.name!));
    await informer.start();
    try {
      await eventually(() => seen.size >= 4 || undefined, "the informer's adds");
    } finally {
      await informer.stop();
    }
    assert.equal(
      sim
        .requestLog()
        .filter((r) => r.resource === "nodes")
        .every((r) => r.user === "kubernetes-admin"),
      true,
    );
  });

  test("a ServiceAccount token is the ServiceAccount: refused until bound, then allowed", async () => {
    const admin = kubeConfigFor(sim);
    const core = admin.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: "node-inventory" } } });
    await core.createNamespacedServiceAccount({ namespace: "node-inventory", body: { metadata: { name: "node-inventory" } } });
    const sa = withToken(sim, sim.createToken("node-inventory", "node-inventory")).makeApiClient(CoreV1Api);
    const err = await sa.listNode().then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.equal((err as { code?: number }).code, 403);
    assert.equal(statusOf(err).message, 'nodes is forbidden: User "system:serviceaccount:node-inventory:node-inventory" cannot list resource "nodes" in API group "" at the cluster scope');
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createClusterRole({ body: { metadata: { name: "nodes-read" }, rules: [{ apiGroups: [""], resources: ["nodes"], verbs: ["list", "watch"] }] } });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: "nodes-read" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "nodes-read" },
        subjects: [{ kind: "ServiceAccount", name: "node-inventory", namespace: "node-inventory" }],
      },
    });
    assert.ok((await sa.listNode()).items.length >= 4);
    assert.ok(sim.cluster.store.get(R.clusterrolebindings, "nodes-read"));
  });

  test("an expired or unknown token is 401 Unauthorized", async () => {
    // Bound for 1 s in the past: signed by the simulator, expired.
    for (const token of ["nope", sim.createToken("node-inventory", "node-inventory", -1)]) {
      const err = await withToken(sim, token)
        .makeApiClient(CoreV1Api)
        .listNode()
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      assert.equal((err as { code?: number }).code, 401, token);
      // client-node keeps no body for a 401, only the status line's reason.
      assert.match((err as Error).message, /^HTTP-Code: 401\nMessage: Unauthorized\n/);
    }
  });
});
