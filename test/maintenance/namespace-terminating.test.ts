import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { graphql, startTestApp } from "../support/app.js";
import { startNamespaceLifecycleProxy, type NamespaceLifecycleProxy } from "../support/namespace-lifecycle-proxy.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";
import { OP } from "./operation-fields.js";

const DRAIN = `mutation($name: String!, $options: DrainOptions) { drainNode(name: $name, options: $options) { ...Op } } ${OP}`;
const GET = `query($id: ID!) { drainOperation(id: $id) { ...Op } } ${OP}`;
const TUNING = { evictionRetryMs: 200, deletionPollMs: 100, heartbeatMs: 300, staleAfterMs: 1_500 };

const kindOf = (pod: any) => pod.metadata.ownerReferences?.find((r: any) => r.controller)?.kind as string | undefined;

/**
 * kubectl drain (pkg/drain, evictPods): an eviction refused with 403 Forbidden and the cause
 * NamespaceTerminating is retried every 5 s while the pod is not marked for deletion, and
 * once it is, kubectl stops evicting and waits for the pod to be gone.
 */
describe("a drain meeting a namespace being deleted", () => {
  let sim: SimWithKubeconfig;
  let proxy: NamespaceLifecycleProxy;
  let app: App;
  let url: string;

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 8, seed: 7, clockSpeed: 30 });
    proxy = await startNamespaceLifecycleProxy(sim.sim);
    ({ app, url } = await startTestApp(
      { clusters: { kubeconfigs: [proxy.kubeconfigPath], contexts: [] }, auth: { mutationRateLimit: 0 } },
      { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200 }, maintenanceTuning: TUNING },
    ));
  });
  after(async () => {
    await app.stop();
    await proxy.stop();
    await sim.stop();
  });

  test("keeps waiting while the namespace refuses evictions, and finishes once the namespace controller deletes the pod", async () => {
    const cluster = sim.sim.cluster;
    // A worker without a pod of the payments ledger (whose budget allows no eviction), with a ReplicaSet pod.
    const ledgerNodes = new Set((cluster.list("pods", "payments") as any[]).filter((p) => p.metadata.labels?.app === "ledger").map((p) => p.spec.nodeName));
    const candidates = cluster
      .nodeNames()
      .filter((n) => !n.startsWith("control-plane") && !ledgerNodes.has(n))
      .flatMap((node) => (cluster.podsOnNode(node) as any[]).filter((p) => kindOf(p) === "ReplicaSet").map((pod) => ({ node, pod })));
    assert.ok(candidates.length > 0, "a plain worker with a ReplicaSet pod");
    const { node, pod } = candidates[0]!;
    const namespace: string = pod.metadata.namespace;
    const doomed = (cluster.podsOnNode(node) as any[])
      .filter((p) => p.metadata.namespace === namespace)
      .map((p) => p.metadata.name as string)
      .sort();
    cluster.update("namespaces", namespace, (ns) => {
      ns.metadata.deletionTimestamp = new Date().toISOString();
      (ns.status as { phase: string }).phase = "Terminating";
    });

    const started = await graphql(url, DRAIN, { name: node, options: { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true } });
    assert.equal(started.body.errors, undefined, JSON.stringify(started.body.errors));
    const id = started.body.data.drainNode.id;

    // Each pod of the namespace is held, with the apiserver's words and no budget, and asked again.
    const held = await eventually(
      async () => {
        const op = (await graphql(url, GET, { id })).body.data.drainOperation;
        const mine = op.pods.filter((p: any) => p.namespace === namespace);
        return mine.every((p: any) => p.status === "BLOCKED" && p.attempts >= 2) ? op : undefined;
      },
      "every pod of the terminating namespace to be retried",
      15_000,
    );
    assert.equal(held.status, "RUNNING");
    for (const p of held.pods.filter((p: any) => p.namespace === namespace)) {
      assert.deepEqual(
        { status: p.status, blockedBy: p.blockedBy, reason: p.reason },
        { status: "BLOCKED", blockedBy: null, reason: `pods "${p.name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated` },
      );
    }

    // The namespace controller deletes the namespace's pods; the drain then only waits for them.
    for (const name of doomed) cluster.deletePod(`${namespace}/${name}`, undefined);
    const done = await eventually(
      async () => {
        const op = (await graphql(url, GET, { id })).body.data.drainOperation;
        return op.status !== "RUNNING" && op.status !== "PENDING" ? op : undefined;
      },
      "the drain to end",
      20_000,
    );
    assert.equal(done.status, "SUCCEEDED", done.message);
    assert.deepEqual(
      done.pods.filter((p: any) => p.namespace === namespace).map((p: any) => [p.name, p.status]),
      doomed.map((name) => [name, "EVICTED"]),
    );
  });
});
