/**
 * The APIs real clients call beyond the stored kinds: events.k8s.io/v1 over
 * the same Events as core v1, OpenAPI v2, pod logs and port-forward, and Pod
 * Security admission, through kubectl and plain HTTP as the apiserver answers them.
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSimulator, R, type Simulator } from "../../src/sim/index.js";
import { runKubectl } from "./support.js";

describe("events.k8s.io, OpenAPI v2, logs, port-forward and Pod Security admission", () => {
  let sim: Simulator;
  let dir: string;
  const kubectl = (...args: string[]) => runKubectl(join(dir, "kubeconfig"), args);
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${sim.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };

  before(async () => {
    sim = await startSimulator({ nodes: 6, seed: 8, churn: 0, clockSpeed: 0 });
    dir = await mkdtemp(join(tmpdir(), "fidelity-apis-"));
    await sim.writeKubeconfig(join(dir, "kubeconfig"));
  });
  after(async () => {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test("an Event created as events.k8s.io/v1 is the core v1 Event it is stored as, and back", async () => {
    const node = sim.cluster.nodeNames()[0]!;
    const created = await post("/apis/events.k8s.io/v1/namespaces/default/events", {
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { name: "drain.1" },
      eventTime: "2026-01-01T00:00:00.000000Z",
      reportingController: "node-inventory",
      reportingInstance: "node-inventory-0",
      action: "Drain",
      reason: "Drained",
      regarding: { kind: "Node", name: node, apiVersion: "v1" },
      note: "drained by node-inventory",
      type: "Normal",
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.apiVersion, "events.k8s.io/v1");
    assert.deepEqual(created.body.regarding, { kind: "Node", name: node, apiVersion: "v1" });
    const core = await (await fetch(`${sim.url}/api/v1/namespaces/default/events/drain.1`)).json();
    assert.deepEqual([core.apiVersion, core.involvedObject.name, core.message, core.reportingComponent, core.reportingInstance, core.action], ["v1", node, "drained by node-inventory", "node-inventory", "node-inventory-0", "Drain"]);
    const list = await (await fetch(`${sim.url}/apis/events.k8s.io/v1/events?fieldSelector=regarding.name=${node}`)).json();
    assert.equal(list.kind, "EventList");
    assert.equal(list.apiVersion, "events.k8s.io/v1");
    assert.deepEqual(list.items.map((e: any) => [e.metadata.name, e.note, e.reportingController]), [["drain.1", "drained by node-inventory", "node-inventory"]]);
    const r = await kubectl("get", "events.v1.events.k8s.io", "-n", "default", "-o", "jsonpath={.items[*].note}");
    assert.equal(r.stdout, "drained by node-inventory", r.stderr);
  });

  test("/openapi/v2 is a Swagger 2.0 document of the served kinds, refs into its definitions", async () => {
    const res = await fetch(`${sim.url}/openapi/v2`, { headers: { accept: "application/json" } });
    assert.equal(res.status, 200);
    const text = await res.text();
    const doc = JSON.parse(text);
    assert.equal(doc.swagger, "2.0");
    assert.deepEqual(doc.definitions["io.k8s.api.core.v1.Pod"]["x-kubernetes-group-version-kind"], [{ group: "", kind: "Pod", version: "v1" }]);
    assert.deepEqual(doc.definitions["io.k8s.api.events.v1.Event"]["x-kubernetes-group-version-kind"], [{ group: "events.k8s.io", kind: "Event", version: "v1" }]);
    const patch = doc.paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"].patch;
    assert.deepEqual(patch["x-kubernetes-group-version-kind"], { group: "apps", kind: "Deployment", version: "v1" });
    assert.deepEqual(patch.parameters.find((p: any) => p.in === "body").schema, { $ref: "#/definitions/io.k8s.api.apps.v1.Deployment" });
    assert.ok(!text.includes("#/components/"), "every $ref points into definitions");
    const protobufOnly = await fetch(`${sim.url}/openapi/v2`, { headers: { accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf" } });
    assert.equal(protobufOnly.status, 406);
  });

  test("kubectl logs reads a running container's log; a pod of two containers needs one named", async () => {
    const pod = sim.cluster.list(R.pods, "shop").find((p) => (p.status as any).phase === "Running")!;
    const container = (pod.spec as any).containers[0].name;
    const r = await kubectl("logs", "-n", "shop", pod.metadata.name, "--tail=2");
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split("\n");
    assert.equal(lines.length, 2);
    assert.match(lines[1]!, new RegExp(`^${container} serving \\(uptime \\d+m\\)$`));
    const started = await kubectl("logs", "-n", "shop", pod.metadata.name, "--timestamps", "--limit-bytes=200");
    assert.match(started.stdout.split("\n")[0]!, new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.000000000Z (starting \\S+ on ${(pod.spec as any).nodeName}|${container} serving)`));
    const node = sim.cluster.nodeNames()[0]!;
    const two = await post("/api/v1/namespaces/default/pods", { apiVersion: "v1", kind: "Pod", metadata: { name: "two" }, spec: { nodeName: node, containers: [{ name: "app", image: "app:1" }, { name: "sidecar", image: "proxy:1" }] } });
    assert.equal(two.status, 201);
    const unnamed = await (await fetch(`${sim.url}/api/v1/namespaces/default/pods/two/log`)).json();
    assert.deepEqual([unnamed.code, unnamed.reason, unnamed.message], [400, "BadRequest", "a container name must be specified for pod two, choose one of: [app sidecar]"]);
    // kubectl picks the first container itself; the kubelet has not started it (simulated time stands still here).
    const waiting = await kubectl("logs", "-n", "default", "two");
    assert.equal(waiting.stderr.trim(), 'Defaulted container "app" out of: app, sidecar\nError from server (BadRequest): container "app" in pod "two" is waiting to start: ContainerCreating');
  });

  test("Pod Security admission: the enforce level refuses a pod, warn answers a warning, a Deployment's template is warned about", async () => {
    assert.equal((await kubectl("create", "namespace", "psa")).code, 0);
    assert.equal((await kubectl("label", "namespace", "psa", "pod-security.kubernetes.io/enforce=restricted")).code, 0);
    const restricted = await kubectl("run", "priv", "-n", "psa", "--image=nginx", "--privileged", "--dry-run=server");
    assert.equal(
      restricted.stderr.trim(),
      'Error from server (Forbidden): pods "priv" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "priv" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "priv" must set securityContext.capabilities.drop=["ALL"]), privileged (container "priv" must not set securityContext.privileged=true), runAsNonRoot != true (pod or container "priv" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "priv" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
    await kubectl("label", "namespace", "psa", "pod-security.kubernetes.io/enforce=baseline", "pod-security.kubernetes.io/warn=restricted", "--overwrite");
    const baseline = await kubectl("run", "priv", "-n", "psa", "--image=nginx", "--privileged", "--dry-run=server");
    assert.equal(baseline.stderr.trim(), 'Error from server (Forbidden): pods "priv" is forbidden: violates PodSecurity "baseline:latest": privileged (container "priv" must not set securityContext.privileged=true)');
    const warned = await kubectl("create", "deployment", "web", "-n", "psa", "--image=nginx");
    assert.equal(warned.code, 0);
    assert.equal(warned.stdout.trim(), "deployment.apps/web created");
    assert.match(warned.stderr, /^Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false \(container "nginx" must set securityContext\.allowPrivilegeEscalation=false\), /);
    const compliant = await post("/api/v1/namespaces/psa/pods", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "compliant" },
      spec: { securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } }, containers: [{ name: "app", image: "app:1", securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } } }] },
    });
    assert.equal(compliant.status, 201);
  });

  test("kubectl port-forward gets the apiserver's error for a node whose kubelet does not answer", async () => {
    const pod = sim.cluster.list(R.pods, "shop").find((p) => (p.status as any).phase === "Running")!;
    const node = sim.cluster.get(R.nodes, (pod.spec as any).nodeName)!;
    const ip = ((node.status as any).addresses as any[]).find((a) => a.type === "InternalIP").address;
    const r = await kubectl("port-forward", "-n", "shop", pod.metadata.name, "0:8080");
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim(), `error: error upgrading connection: error dialing backend: dial tcp ${ip}:10250: connect: connection refused`);
  });
});
