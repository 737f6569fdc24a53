/**
 * Workloads run only when they could: a pod whose Secret or ConfigMap is
 * missing waits as the kubelet makes it wait (with its event), a pod whose
 * claim is not bound is not scheduled, and required node affinity is a filter.
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startSimulator, R, type Simulator } from "../../src/sim/index.js";

type Obj = Record<string, any>;

describe("workloads wait for what they need", () => {
  let sim: Simulator;
  const create = async (path: string, body: unknown) => {
    const res = await fetch(`${sim.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    assert.equal(res.status, 201, await res.clone().text());
    return res.json();
  };
  const pod = (name: string) => sim.cluster.get(R.pods, name, "default") as Obj;
  const podSpec = (spec: Obj) => ({ containers: [{ name: "app", image: "app:1", resources: { requests: { cpu: "10m", memory: "16Mi" } } }], ...spec });

  before(async () => {
    sim = await startSimulator({ nodes: 8, seed: 13, churn: 0, clockSpeed: 0 });
  });
  after(() => sim.stop());

  test("a pod mounting a missing Secret stays ContainerCreating with the kubelet's FailedMount event, and runs once it exists", async () => {
    await create("/api/v1/namespaces/default/pods", { apiVersion: "v1", kind: "Pod", metadata: { name: "mounts" }, spec: podSpec({ volumes: [{ name: "tokens", secret: { secretName: "app-tokens" } }] }) });
    sim.cluster.advance(5_000);
    assert.ok(pod("mounts").spec.nodeName, "scheduled");
    assert.equal(pod("mounts").status.phase, "Pending");
    assert.deepEqual(pod("mounts").status.containerStatuses.map((c: Obj) => c.state), [{ waiting: { reason: "ContainerCreating" } }]);
    const events = sim.cluster.list(R.events, "default").filter((e: Obj) => e.involvedObject.name === "mounts");
    assert.deepEqual(events.map((e: Obj) => [e.type, e.reason, e.message, e.source.component]), [["Warning", "FailedMount", 'MountVolume.SetUp failed for volume "tokens" : secret "app-tokens" not found', "kubelet"]]);
    await create("/api/v1/namespaces/default/secrets", { apiVersion: "v1", kind: "Secret", metadata: { name: "app-tokens" }, stringData: { t: "x" } });
    sim.cluster.advance(11_000);
    assert.equal(pod("mounts").status.phase, "Running");
  });

  test("a container whose environment names a missing ConfigMap waits with CreateContainerConfigError", async () => {
    await create("/api/v1/namespaces/default/pods", { apiVersion: "v1", kind: "Pod", metadata: { name: "envs" }, spec: podSpec({ containers: [{ name: "app", image: "app:1", env: [{ name: "MODE", valueFrom: { configMapKeyRef: { name: "app-config", key: "mode" } } }] }] }) });
    sim.cluster.advance(5_000);
    assert.deepEqual(pod("envs").status.containerStatuses[0].state, { waiting: { reason: "CreateContainerConfigError", message: 'configmap "app-config" not found' } });
    const event = sim.cluster.list(R.events, "default").find((e: Obj) => e.involvedObject.name === "envs") as Obj;
    assert.deepEqual([event.reason, event.message], ["Failed", 'Error: configmap "app-config" not found']);
  });

  test("a pod whose PersistentVolumeClaim is Pending is not scheduled, as VolumeBinding says", async () => {
    await create("/api/v1/namespaces/default/persistentvolumeclaims", { apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name: "data" }, spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } } });
    await create("/api/v1/namespaces/default/pods", { apiVersion: "v1", kind: "Pod", metadata: { name: "claims" }, spec: podSpec({ volumes: [{ name: "data", persistentVolumeClaim: { claimName: "data" } }] }) });
    sim.cluster.advance(5_000);
    const p = pod("claims");
    assert.equal(p.spec.nodeName, undefined);
    const n = sim.cluster.nodeNames().length;
    assert.deepEqual(p.status.conditions.map((c: Obj) => [c.type, c.status, c.reason, c.message]), [["PodScheduled", "False", "Unschedulable", `0/${n} nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/${n} nodes are available: ${n} Preemption is not helpful for scheduling.`]]);
  });

  test("required node affinity filters nodes: a zone no node is in leaves the pod Pending, an existing one places it there", async () => {
    const zoneOf = (name: string) => sim.cluster.get(R.nodes, name)!.metadata.labels!["topology.kubernetes.io/zone"];
    const zone = zoneOf(sim.cluster.nodeNames().find((n) => !n.startsWith("control"))!)!;
    const affinity = (values: string[]) => ({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: "topology.kubernetes.io/zone", operator: "In", values }] }] } } });
    await create("/api/v1/namespaces/default/pods", { apiVersion: "v1", kind: "Pod", metadata: { name: "nowhere" }, spec: podSpec({ affinity: affinity(["mars-1a"]) }) });
    await create("/api/v1/namespaces/default/pods", { apiVersion: "v1", kind: "Pod", metadata: { name: "zoned" }, spec: podSpec({ affinity: affinity([zone]) }) });
    sim.cluster.advance(5_000);
    assert.equal(pod("nowhere").spec.nodeName, undefined);
    assert.equal(pod("nowhere").status.conditions[0].reason, "Unschedulable");
    assert.equal(zoneOf(pod("zoned").spec.nodeName), zone);
  });
});
