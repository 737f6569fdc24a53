/**
 * Server-side apply through the real kubectl against the standalone simulator
 * (`sim --rbac --tls`, as a user runs it): the HA overlay applies, applies
 * again unchanged, and a second field manager that would change a field
 * kubectl's apply owns gets the apiserver's conflict, until it forces.
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { kubeconfigClient, runKubectl, spawnSimulator, type SimProcess } from "./support.js";

const OVERLAY = fileURLToPath(new URL("../../../deploy/kubernetes/overlays/ha", import.meta.url));

describe("server-side apply of the deploy manifests", () => {
  let sim: SimProcess;
  const kubectl = (args: string[], input?: string) => runKubectl(sim.kubeconfig, args, input === undefined ? {} : { input });

  before(async () => {
    sim = await spawnSimulator(["--nodes", "6", "--seed", "4", "--rbac", "--tls"]);
  });
  after(() => sim?.stop());

  test("kubectl apply --server-side -k overlays/ha applies every object, and again unchanged", async () => {
    const first = await kubectl(["apply", "--server-side", "-k", OVERLAY]);
    assert.equal(first.stderr, "");
    assert.equal(first.code, 0);
    const lines = first.stdout.trim().split("\n");
    assert.ok(lines.length >= 10 && lines.every((l) => l.endsWith(" serverside-applied")), first.stdout);
    assert.ok(lines.includes("deployment.apps/node-inventory serverside-applied"));
    const deployment = await kubeconfigClient(sim.kubeconfigText).json("/apis/apps/v1/namespaces/node-inventory/deployments/node-inventory");
    assert.equal(deployment.spec.replicas, 2);
    const apply = deployment.metadata.managedFields.find((e: any) => e.manager === "kubectl" && e.operation === "Apply");
    assert.deepEqual(apply.fieldsV1["f:spec"]["f:replicas"], {});
    const again = await kubectl(["apply", "--server-side", "-k", OVERLAY]);
    assert.equal(again.code, 0, again.stderr);
    const after = await kubeconfigClient(sim.kubeconfigText).json("/apis/apps/v1/namespaces/node-inventory/deployments/node-inventory");
    // Controllers write the status meanwhile; the applied spec and its ownership are as they were.
    assert.equal(after.metadata.generation, deployment.metadata.generation, "an unchanged apply changes no spec");
    assert.deepEqual(after.metadata.managedFields.find((e: any) => e.manager === "kubectl" && e.operation === "Apply"), apply);
  });

  test("a second manager's conflicting apply gets the apiserver's conflict, and takes the field with --force-conflicts", async () => {
    const scaled = JSON.stringify({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "node-inventory", namespace: "node-inventory" }, spec: { replicas: 5 } });
    const refused = await kubectl(["apply", "--server-side", "--field-manager=autoscaler", "-f", "-"], scaled);
    assert.equal(refused.code, 1);
    assert.equal(refused.stderr.split("\n")[0], 'error: Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas');
    const forced = await kubectl(["apply", "--server-side", "--field-manager=autoscaler", "--force-conflicts", "-f", "-", "-o", "jsonpath={.spec.replicas}"], scaled);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(forced.stdout, "5");
    const deployment = await kubeconfigClient(sim.kubeconfigText).json("/apis/apps/v1/namespaces/node-inventory/deployments/node-inventory");
    const owners = deployment.metadata.managedFields.filter((e: any) => e.fieldsV1["f:spec"]?.["f:replicas"]).map((e: any) => e.manager);
    assert.deepEqual(owners, ["autoscaler"]);
  });
});
