import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { graphql, startTestApp } from "../support/app.js";
import { runCli } from "../support/cli.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const DEBUG = `mutation($n: String!, $image: String!, $reason: String!, $ttl: Int) {
  debugNode(name: $n, image: $image, reason: $reason, ttlSeconds: $ttl) { namespace name image expiresAt requestedBy attachCommand } }`;
const SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}";

describe("debugNode makes the pod kubectl debug node/N makes, and it goes at its expiry", () => {
  let sim: SimWithKubeconfig;
  let app: App | undefined;
  let url: string;
  let node: string;

  const start = async () => {
    ({ app, url } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] } }, { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200 }, debugPodSweepMs: 200 }));
    await eventually(async () => (await graphql(url, "{ clusters { synced } }")).body.data?.clusters[0].synced, "sync", 20_000);
  };
  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 3, seed: 36, clockSpeed: 0 });
    node = sim.sim.cluster.nodeNames().find((n) => !n.startsWith("control-plane"))!;
    await start();
  });
  after(async () => {
    await app?.stop();
    await sim?.stop();
  });

  const debuggers = () => sim.sim.cluster.list("pods", "default").filter((p) => p.metadata.name.startsWith("node-debugger-"));

  test("the same pod spec as kubectl's, named as kubectl names it, recorded as DEBUGGED, listed on the node", async () => {
    const out = await sim.kubectl("debug", `node/${node}`, "--image", "busybox");
    const kubectlPod = debuggers()[0]!;
    assert.match(out, new RegExp(`^Creating debugging pod ${kubectlPod.metadata.name} with container debugger on node ${node}\\.`));
    assert.match(kubectlPod.metadata.name, new RegExp(`^node-debugger-${node}-${SUFFIX}$`));

    const before = Date.now();
    const { body } = await graphql(url, DEBUG, { n: node, image: "busybox", reason: "kubelet restarts: look at its journal on the host", ttl: 600 });
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    const made = body.data.debugNode;
    assert.match(made.name, new RegExp(`^node-debugger-${node}-${SUFFIX}$`));
    const ours = sim.sim.cluster.get("pods", made.name, "default")!;
    assert.deepEqual(ours.spec, kubectlPod.spec, "the spec kubectl debug node/N --image busybox makes");
    assert.equal(made.namespace, kubectlPod.metadata.namespace);
    assert.equal(made.image, "busybox");
    assert.equal(made.requestedBy, "local-admin");
    const ttl = (Date.parse(made.expiresAt) - before) / 1000;
    assert.ok(ttl > 595 && ttl <= 601, `expires ${ttl} s after the request`);
    assert.equal(made.attachCommand, `kubectl --context ${sim.sim.name} exec -it -n default ${made.name} -c debugger -- sh`);

    const events = await eventually(async () => {
      const r = await graphql(url, `{ maintenanceEvents(filter: { kinds: [DEBUGGED] }) { edges { node { node kind actor reason pod detail } } } }`);
      return r.body.data?.maintenanceEvents.edges.length ? r.body.data.maintenanceEvents.edges : undefined;
    }, "the DEBUGGED event");
    assert.deepEqual(events.map((e: any) => e.node), [
      { node, kind: "DEBUGGED", actor: "local-admin", reason: "kubelet restarts: look at its journal on the host", pod: `default/${made.name}`, detail: "image=busybox ttlSeconds=600" },
    ]);
    const listed = await graphql(url, `query($n: String!) { node(name: $n) { debugPods { name image expiresAt } } }`, { n: node });
    assert.deepEqual(listed.body.data.node.debugPods, [{ name: made.name, image: "busybox", expiresAt: made.expiresAt }]);
  });

  test("the CLI's debug prints kubectl's words and the kubectl exec -it line", async () => {
    const run = await runCli(["debug", node, "--image", "busybox", "--reason", "look at the host", "--ttl", "10m", "--url", url]);
    assert.equal(run.code, 0, run.stderr);
    const [first, second] = run.stdout.split("\n");
    const name = new RegExp(`^Creating debugging pod (node-debugger-${node}-${SUFFIX}) with container debugger on node ${node}; deleted at \\S+Z\\.$`).exec(first!)?.[1];
    assert.ok(name, run.stdout);
    assert.equal(second, `kubectl --context ${sim.sim.name} exec -it -n default ${name} -c debugger -- sh`);
    assert.ok(sim.sim.cluster.get("pods", name!, "default"));
  });

  test("a reason is required and the lifetime bounded", async () => {
    const noReason = await graphql(url, DEBUG, { n: node, image: "busybox", reason: " " });
    assert.equal(noReason.body.errors?.[0].extensions.code, "BAD_USER_INPUT");
    const tooLong = await graphql(url, DEBUG, { n: node, image: "busybox", reason: "x", ttl: 86_401 });
    assert.equal(tooLong.body.errors?.[0].message, "ttlSeconds: between 60 and 86400, got 86401");
  });

  test("a replica that did not make it deletes it once expired", async () => {
    const kubectlPod = debuggers().find((p) => !p.metadata.labels?.["node-inventory.io/debug-pod"])!;
    const { body } = await graphql(url, DEBUG, { n: node, image: "busybox", reason: "to be swept", ttl: 600 });
    const ours = sim.sim.cluster.get("pods", body.data.debugNode.name, "default")!;
    // The replica that made it goes away; its expiry passes while another replica runs.
    await app!.stop();
    app = undefined;
    await sim.kubectl("annotate", "pod", "-n", "default", ours.metadata.name, "--overwrite", `node-inventory.io/debug-expires-at=${new Date(Date.now() - 1000).toISOString()}`);
    await start();
    await eventually(() => !sim.sim.cluster.get("pods", ours.metadata.name, "default"), "the expired debugging pod deleted", 20_000);
    assert.ok(sim.sim.cluster.get("pods", kubectlPod.metadata.name, "default"), "kubectl's own debugging pod is not ours to delete");
  });
});
