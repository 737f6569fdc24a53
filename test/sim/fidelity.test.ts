/**
 * Every object the simulator serves validates against the official Kubernetes
 * OpenAPI schemas (kubernetes-models), both as generated and after churn and
 * controller activity have rewritten them.
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Node, Pod, Namespace, Event } from "kubernetes-models/v1";
import { Deployment, ReplicaSet, DaemonSet } from "kubernetes-models/apps/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { PodDisruptionBudget as PodDisruptionBudgetV1beta1 } from "kubernetes-models/policy/v1beta1";
import { Lease } from "kubernetes-models/coordination.k8s.io/v1";
import { startSimulator, type Simulator } from "../../src/sim/index.js";

const MODELS: [string, string, new (data: any) => { validate(): void }][] = [
  ["/api/v1/nodes", "NodeList", Node],
  ["/api/v1/pods", "PodList", Pod],
  ["/api/v1/namespaces", "NamespaceList", Namespace],
  ["/api/v1/events", "EventList", Event],
  ["/apis/apps/v1/deployments", "DeploymentList", Deployment],
  ["/apis/apps/v1/replicasets", "ReplicaSetList", ReplicaSet],
  ["/apis/apps/v1/daemonsets", "DaemonSetList", DaemonSet],
  ["/apis/policy/v1/poddisruptionbudgets", "PodDisruptionBudgetList", PodDisruptionBudget],
  ["/apis/policy/v1beta1/poddisruptionbudgets", "PodDisruptionBudgetList", PodDisruptionBudgetV1beta1],
  ["/apis/coordination.k8s.io/v1/leases", "LeaseList", Lease],
];

async function validateAll(sim: Simulator): Promise<number> {
  let checked = 0;
  for (const [path, listKind, Model] of MODELS) {
    const res = await fetch(`${sim.url}${path}`);
    assert.equal(res.status, 200, path);
    const list = await res.json();
    assert.equal(list.kind, listKind);
    assert.ok(list.items.length > 0, `${path} has items`);
    const listRv = Number(list.metadata.resourceVersion);
    const seen = new Set<string>();
    for (const item of list.items) {
      assert.equal(item.apiVersion, path.startsWith("/api/") ? "v1" : path.split("/").slice(2, 4).join("/"), `${path} apiVersion`);
      try {
        new Model(item).validate();
      } catch (err) {
        assert.fail(`${path} ${item.metadata?.namespace ?? ""}/${item.metadata?.name}: ${(err as Error).message}`);
      }
      const rv = Number(item.metadata.resourceVersion);
      assert.ok(rv > 0 && rv <= listRv, "item resourceVersion within the list's");
      assert.ok(!seen.has(item.metadata.uid), "uids are unique");
      seen.add(item.metadata.uid);
      checked++;
    }
  }
  return checked;
}

describe("served objects match the Kubernetes OpenAPI schemas", () => {
  let sim: Simulator;
  before(async () => {
    sim = await startSimulator({ nodes: 30, seed: 5, churn: 0, clockSpeed: 0 });
  });
  after(() => sim.stop());

  test("every generated object of every kind validates", async () => {
    const n = await validateAll(sim);
    assert.ok(n > 900, `validated ${n} objects`);
  });

  test("objects rewritten by churn, evictions and controllers still validate", async () => {
    sim.cluster.churn = 40;
    const pod = sim.cluster.list("pods", "shop")[0]!;
    sim.cluster.evict("shop", pod.metadata.name, undefined);
    sim.cluster.stopKubelet(sim.cluster.nodeNames().find((n) => n.startsWith("general"))!);
    sim.cluster.advance(10 * 60_000);
    sim.cluster.churn = 0;
    const unknown = sim.cluster.list("nodes").filter((n) => (n.status as any).conditions.some((c: any) => c.type === "Ready" && c.status !== "True"));
    assert.ok(unknown.length >= 1, "churn left some node not Ready");
    await validateAll(sim);
  });

  test("the same seed generates the same cluster", async () => {
    const again = await startSimulator({ nodes: 30, seed: 5, churn: 0, clockSpeed: 0, startTime: 1_700_000_000_000 });
    const third = await startSimulator({ nodes: 30, seed: 5, churn: 0, clockSpeed: 0, startTime: 1_700_000_000_000 });
    try {
      const a = again.cluster.list("pods").map((p) => `${p.metadata.namespace}/${p.metadata.name}@${(p.spec as any).nodeName}`);
      const b = third.cluster.list("pods").map((p) => `${p.metadata.namespace}/${p.metadata.name}@${(p.spec as any).nodeName}`);
      assert.deepEqual(a, b);
      assert.deepEqual(
        again.cluster.list("nodes").map((n) => n.metadata),
        third.cluster.list("nodes").map((n) => n.metadata),
      );
    } finally {
      await again.stop();
      await third.stop();
    }
  });

  test("discovery lists pods/eviction as policy/v1 Eviction and serves both policy versions", async () => {
    const v1 = await (await fetch(`${sim.url}/api/v1`)).json();
    assert.deepEqual(
      v1.resources.find((r: any) => r.name === "pods/eviction"),
      { name: "pods/eviction", singularName: "", namespaced: true, group: "policy", version: "v1", kind: "Eviction", verbs: ["create"] },
    );
    const groups = await (await fetch(`${sim.url}/apis`)).json();
    const policy = groups.groups.find((g: any) => g.name === "policy");
    assert.deepEqual(
      policy.versions.map((v: any) => v.groupVersion),
      ["policy/v1", "policy/v1beta1"],
    );
    assert.equal(policy.preferredVersion.groupVersion, "policy/v1");
    assert.ok(groups.groups.some((g: any) => g.name === "metrics.k8s.io"));
    const version = await (await fetch(`${sim.url}/version`)).json();
    assert.match(version.gitVersion, /^v1\.\d+\.\d+$/);
  });
});
