import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import type { AppProbes } from "../../src/app/app-probes.js";
import type { App } from "../../src/app/create-app.js";
import { graphql, startTestApp } from "../support/app.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";
import { OP } from "./operation-fields.js";

const DRAIN = `mutation($name: String!, $options: DrainOptions, $reason: String) { drainNode(name: $name, options: $options, reason: $reason) { ...Op } } ${OP}`;
const GET = `query($id: ID!) { drainOperation(id: $id) { ...Op } } ${OP}`;
const ALL_FLAGS = { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true };
/** Fast drains for tests: the simulated clock runs 30x, so a 30 s grace period passes in a second. */
const TUNING = { evictionRetryMs: 300, deletionPollMs: 100, heartbeatMs: 300, staleAfterMs: 1_500 };

const podsOn = (sim: SimWithKubeconfig, node: string) => sim.sim.cluster.podsOnNode(node) as any[];
const kindOf = (pod: any) => pod.metadata.ownerReferences?.find((r: any) => r.controller)?.kind as string | undefined;
const isMirror = (pod: any) => pod.metadata.annotations?.["kubernetes.io/config.mirror"] !== undefined;

/** A schedulable worker carrying evictable pods and no pod of the payments ledger, whose budget allows no eviction. */
function plainWorker(sim: SimWithKubeconfig, exclude: string[] = []): string {
  const ledgerNodes = new Set((sim.sim.cluster.list("pods", "payments") as any[]).filter((p) => p.metadata.labels?.app === "ledger").map((p) => p.spec.nodeName));
  const node = sim.sim.cluster
    .nodeNames()
    .find((n) => !n.startsWith("control-plane") && !ledgerNodes.has(n) && !exclude.includes(n) && !isCordoned(sim, n) && podsOn(sim, n).some((p) => kindOf(p) === "ReplicaSet"));
  assert.ok(node, "a plain worker node");
  return node;
}

function isCordoned(sim: SimWithKubeconfig, node: string): boolean {
  return (sim.sim.cluster.get("nodes", node) as any).spec.unschedulable === true;
}

function ledgerNode(sim: SimWithKubeconfig): { node: string; pod: string } {
  const pod = (sim.sim.cluster.list("pods", "payments") as any[]).find((p) => p.metadata.labels?.app === "ledger");
  return { node: pod.spec.nodeName, pod: pod.metadata.name };
}

async function waitFor(url: string, id: string, done: (op: any) => boolean, what: string, timeoutMs = 15_000): Promise<any> {
  return eventually(
    async () => {
      const op = (await graphql(url, GET, { id })).body.data?.drainOperation;
      return op && done(op) ? op : undefined;
    },
    what,
    timeoutMs,
  );
}

describe("drainNode against the simulator", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;
  let probes: AppProbes;

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 8, seed: 7, clockSpeed: 30 });
    ({ app, url, probes } = await startTestApp(
      // Many mutations in one app: the per-caller rate limit has its own tests.
      { clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] }, auth: { mutationRateLimit: 0 } },
      { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200 }, maintenanceTuning: TUNING },
    ));
  });
  after(async () => {
    await app.stop();
    await sim.stop();
  });

  test("the happy path: evictable pods gone and rescheduled elsewhere, DaemonSet and mirror pods left, events recorded with the actor", async () => {
    const node = plainWorker(sim);
    const before = podsOn(sim, node);
    const evictable = before.filter((p) => kindOf(p) !== "DaemonSet" && !isMirror(p));
    const staying = before
      .filter((p) => kindOf(p) === "DaemonSet" || isMirror(p))
      .map((p) => p.metadata.name)
      .sort();
    const evictionsBefore = sim.sim.stats()["create pods/eviction"] ?? 0;

    const started = await graphql(url, DRAIN, { name: node, options: ALL_FLAGS, reason: "kernel upgrade" });
    assert.equal(started.body.errors, undefined, JSON.stringify(started.body.errors));
    const op = started.body.data.drainNode;
    assert.equal(op.node, node);
    assert.equal(op.requestedBy, "local-admin");
    assert.equal(op.reason, "kernel upgrade");
    assert.ok(["PENDING", "RUNNING", "SUCCEEDED"].includes(op.status));
    assert.deepEqual(op.options, { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true, gracePeriodSeconds: -1, timeoutSeconds: 600, podSelector: null, disableEviction: false });

    const done = await waitFor(url, op.id, (o) => o.status !== "RUNNING" && o.status !== "PENDING", "the drain to end");
    assert.equal(done.status, "SUCCEEDED", done.message);
    assert.equal(done.progressPercent, 100);
    assert.equal(done.remainingPods, 0);
    assert.ok(done.finishedAt);
    assert.deepEqual(
      done.pods
        .filter((p: any) => p.status === "EVICTED")
        .map((p: any) => p.name)
        .sort(),
      evictable.map((p) => p.metadata.name).sort(),
    );
    assert.deepEqual(
      done.pods
        .filter((p: any) => p.status === "SKIPPED")
        .map((p: any) => p.name)
        .sort(),
      staying,
    );
    assert.ok(
      done.warnings.some((w: string) => w.startsWith("ignoring DaemonSet-managed Pods: ")),
      done.warnings.join("\n"),
    );
    // One eviction per pod, plus one per retry of a pod a budget held back for a moment.
    const attempts = done.pods.reduce((sum: number, p: any) => sum + p.attempts, 0);
    assert.ok(attempts >= evictable.length);
    assert.equal((sim.sim.stats()["create pods/eviction"] ?? 0) - evictionsBefore, attempts, "every eviction sent is counted in attempts");

    // In the cluster: only the DaemonSet and mirror pods remain, the node is cordoned with our note.
    assert.deepEqual(
      podsOn(sim, node)
        .map((p) => p.metadata.name)
        .sort(),
      staying,
    );
    const nodeObject = sim.sim.cluster.get("nodes", node) as any;
    assert.equal(nodeObject.spec.unschedulable, true);
    assert.deepEqual(JSON.parse(nodeObject.metadata.annotations["node-inventory.io/maintenance"]), { actor: "local-admin", reason: "kernel upgrade", unschedulable: true, operationId: op.id });
    // Every ReplicaSet that lost a pod has its replicas back, on other nodes.
    const replicaSets = new Set(evictable.filter((p) => kindOf(p) === "ReplicaSet").map((p) => `${p.metadata.namespace}/${p.metadata.ownerReferences[0].name}`));
    await eventually(() => {
      for (const key of replicaSets) {
        const [ns, name] = key.split("/") as [string, string];
        const rs = sim.sim.cluster.get("apps/replicasets", name, ns) as any;
        const owned = (sim.sim.cluster.list("pods", ns) as any[]).filter((p) => p.metadata.ownerReferences?.[0]?.uid === rs.metadata.uid && !p.metadata.deletionTimestamp);
        if (owned.length !== rs.spec.replicas || owned.some((p) => p.spec.nodeName === node)) return false;
      }
      return true;
    }, "the ReplicaSets to be whole again elsewhere");

    // History: started, cordoned (seen by the recorder, with our actor), each pod, succeeded.
    const events = await eventually(async () => {
      const r = await graphql(url, `query($node: String) { maintenanceEvents(filter: { node: $node }, first: 500) { edges { node { kind actor reason pod operationId detail } } } }`, { node });
      const list = r.body.data.maintenanceEvents.edges.map((e: any) => e.node);
      return list.some((e: any) => e.kind === "DRAIN_SUCCEEDED") && list.some((e: any) => e.kind === "CORDONED") ? list : undefined;
    }, "the drain's events");
    const kinds = events.map((e: any) => e.kind).reverse();
    assert.equal(kinds[0], "DRAIN_STARTED");
    assert.equal(kinds.at(-1), "DRAIN_SUCCEEDED");
    assert.equal(kinds.filter((k: string) => k === "POD_EVICTED").length, evictable.length);
    const cordoned = events.find((e: any) => e.kind === "CORDONED");
    assert.deepEqual([cordoned.actor, cordoned.reason], ["local-admin", "kernel upgrade"]);
    for (const e of events.filter((e: any) => e.kind !== "CORDONED")) {
      assert.equal(e.actor, "local-admin");
      assert.equal(e.operationId, op.id);
    }
    // Nothing active any more.
    const active = await graphql(url, `query($n: String!) { node(name: $n) { unschedulable activeDrain { id } } }`, { n: node });
    assert.deepEqual(active.body.data.node, { unschedulable: true, activeDrain: null });
  });

  test("kubectl's refusals: DaemonSet, emptyDir and unreplicated pods without the flags fail the drain, remove nothing, and leave the node cordoned", async () => {
    const node = sim.sim.cluster.nodeNames().find((n) => {
      if (isCordoned(sim, n)) return false;
      const pods = podsOn(sim, n);
      return pods.some((p) => p.spec.volumes?.some((v: any) => v.emptyDir) && kindOf(p) !== "DaemonSet") && pods.some((p) => !kindOf(p) && !isMirror(p));
    });
    assert.ok(node, "a node with emptyDir and bare pods");
    const before = podsOn(sim, node)
      .map((p) => p.metadata.uid)
      .sort();
    const evictionsBefore = sim.sim.stats()["create pods/eviction"] ?? 0;
    const r = await graphql(url, DRAIN, { name: node });
    const done = await waitFor(url, r.body.data.drainNode.id, (o) => o.status === "FAILED", "the refusal");
    assert.match(done.message, /cannot delete DaemonSet-managed Pods \(use --ignore-daemonsets to ignore\): /);
    assert.match(done.message, /cannot delete Pods with local storage \(use --delete-emptydir-data to override\): /);
    assert.match(done.message, /cannot delete Pods that declare no controller \(use --force to override\): /);
    assert.match(done.message, /the node stays cordoned/);
    assert.ok(done.pods.filter((p: any) => p.status === "FAILED").every((p: any) => /^(DaemonSet-managed|Pods with local storage|Pods that declare no controller)/.test(p.reason)));
    assert.equal((sim.sim.stats()["create pods/eviction"] ?? 0) - evictionsBefore, 0, "nothing evicted");
    assert.deepEqual(
      podsOn(sim, node)
        .map((p) => p.metadata.uid)
        .sort(),
      before,
    );
    assert.equal((sim.sim.cluster.get("nodes", node) as any).spec.unschedulable, true);
    await graphql(url, `mutation($n: String!) { uncordonNode(name: $n) { name } }`, { n: node });
  });

  test("a PodDisruptionBudget allowing no disruption: BLOCKED naming the budget, retried, then FAILED at the timeout with the node still cordoned", async () => {
    const { node, pod } = ledgerNode(sim);
    const progress: any[] = [];
    const client = createClient({ url: url.replace(/^http/, "ws") + "/graphql", webSocketImpl: WebSocket, retryAttempts: 0 });
    try {
      const r = await graphql(url, DRAIN, { name: node, options: { ...ALL_FLAGS, podSelector: "app=ledger", timeoutSeconds: 2 } });
      const id = r.body.data.drainNode.id;
      const completed = new Promise<void>((resolve, reject) =>
        client.subscribe(
          { query: `subscription($id: ID!) { drainProgress(id: $id) { ...Op } } ${OP}`, variables: { id } },
          { next: (v) => progress.push(v.data?.drainProgress), error: reject, complete: resolve },
        ),
      );
      await completed;
      const last = progress.at(-1);
      assert.equal(last.status, "FAILED");
      assert.match(last.message, /global timeout reached: 2s/);
      assert.match(last.message, /the node stays cordoned/);
      const blocked = progress.flatMap((o) => o.pods).find((p: any) => p.name === pod && p.status === "BLOCKED");
      assert.ok(blocked, `a BLOCKED state was streamed: ${JSON.stringify(progress.map((o) => o.pods))}`);
      assert.equal(blocked.blockedBy, "ledger");
      assert.match(blocked.reason, /The disruption budget ledger needs 2 healthy pods and has 2 currently/);
      const final = last.pods.find((p: any) => p.name === pod);
      assert.equal(final.status, "FAILED");
      assert.ok(final.attempts >= 3, `retried (${final.attempts} attempts)`);
      assert.equal(last.progressPercent, 0);
      assert.ok(sim.sim.cluster.get("pods", pod, "payments"), "the ledger pod is still there");
      assert.equal((sim.sim.cluster.get("nodes", node) as any).spec.unschedulable, true);
      const events = (
        await graphql(
          url,
          `query($id: ID!) { drainOperation(id: $id) { id } maintenanceEvents(filter: { kinds: [EVICTION_BLOCKED, DRAIN_FAILED] }, first: 50) { edges { node { kind pod operationId detail } } } }`,
          { id },
        )
      ).body.data.maintenanceEvents.edges
        .map((e: any) => e.node)
        .filter((e: any) => e.operationId === id);
      assert.deepEqual(events.map((e: any) => e.kind).sort(), ["DRAIN_FAILED", "EVICTION_BLOCKED"], "blocked recorded once, not once per retry");
    } finally {
      await client.dispose();
      await graphql(url, `mutation($n: String!) { uncordonNode(name: $n) { name } }`, { n: node });
    }
  });

  test("cancelDrain stops a blocked drain and leaves the node cordoned; a second drain of a node is CONFLICT", async () => {
    const { node } = ledgerNode(sim);
    const r = await graphql(url, DRAIN, { name: node, options: { ...ALL_FLAGS, podSelector: "app=ledger" }, reason: "rack move" });
    const id = r.body.data.drainNode.id;
    try {
      await waitFor(url, id, (o) => o.pods.some((p: any) => p.status === "BLOCKED"), "the drain to be blocked");

      const second = await graphql(url, DRAIN, { name: node, options: ALL_FLAGS });
      assert.equal(second.body.errors?.[0]?.extensions?.code, "CONFLICT");
      assert.match(second.body.errors[0].message, new RegExp(`already has a drain running \\(${id}`));
      const active = await graphql(url, `query($n: String!) { node(name: $n) { activeDrain { id status } } }`, { n: node });
      assert.deepEqual(active.body.data.node.activeDrain, { id, status: "RUNNING" });

      const cancelled = await graphql(url, `mutation($id: ID!) { cancelDrain(id: $id) { ...Op } } ${OP}`, { id });
      const attemptsAtCancel = sim.sim.stats()["create pods/eviction"] ?? 0;
      assert.equal(cancelled.body.errors, undefined, JSON.stringify(cancelled.body.errors));
      assert.equal(cancelled.body.data.cancelDrain.status, "CANCELLED");
      assert.match(cancelled.body.data.cancelDrain.message, /cancelled by local-admin; the node stays cordoned/);
      const again = await graphql(url, `mutation($id: ID!) { cancelDrain(id: $id) { status } }`, { id });
      assert.equal(again.body.data.cancelDrain.status, "CANCELLED", "cancelling twice is a no-op");
      // The runner stops, and at most the one eviction it had in flight went out after the cancel.
      await eventually(() => !probes.drainsRunning().includes(id) || undefined, "the drain's runner to stop");
      assert.ok((sim.sim.stats()["create pods/eviction"] ?? 0) - attemptsAtCancel <= 1, "no eviction after the cancel but the one in flight");
      const stored = (await graphql(url, GET, { id })).body.data.drainOperation;
      assert.equal(stored.status, "CANCELLED");
      assert.equal((sim.sim.cluster.get("nodes", node) as any).spec.unschedulable, true);
      const kinds = (await eventually(async () => {
        const list = (await graphql(url, `{ maintenanceEvents(filter: { kinds: [DRAIN_CANCELLED] }) { edges { node { operationId actor } } } }`)).body.data.maintenanceEvents.edges;
        return list.length ? list : undefined;
      }, "the cancel event")) as any[];
      assert.deepEqual(kinds[0].node, { operationId: id, actor: "local-admin" });
      // Now the node may be drained again.
      const third = await graphql(url, DRAIN, { name: node, options: { ...ALL_FLAGS, dryRun: true } });
      assert.equal(third.body.errors, undefined);
      await graphql(url, `mutation($n: String!) { uncordonNode(name: $n) { name } }`, { n: node });
    } finally {
      // Whatever failed above, this blocked drain must not go on into the next tests.
      await graphql(url, `mutation($id: ID!) { cancelDrain(id: $id) { id } }`, { id }).catch(() => {});
    }
  });

  test("dryRun returns the plan and changes nothing", async () => {
    const node = plainWorker(sim);
    const requestsBefore = sim.sim.requestLog().length;
    const r = await graphql(url, DRAIN, { name: node, options: { ...ALL_FLAGS, dryRun: true } });
    const plan = r.body.data.drainNode;
    assert.equal(plan.dryRun, true);
    assert.equal(plan.status, "SUCCEEDED");
    const pods = podsOn(sim, node);
    assert.deepEqual(
      plan.pods
        .filter((p: any) => p.action === "EVICT")
        .map((p: any) => p.name)
        .sort(),
      pods
        .filter((p) => kindOf(p) !== "DaemonSet" && !isMirror(p))
        .map((p) => p.metadata.name)
        .sort(),
    );
    assert.ok(plan.pods.filter((p: any) => p.action === null).every((p: any) => p.status === "SKIPPED" && p.reason));
    assert.match(plan.message, /^dry run: would evict \d+ pod\(s\) and leave \d+$/);
    // The service's own history Lease is renewed on its schedule whatever the drain does; any other write would be the drain's.
    const writes = sim.sim
      .requestLog()
      .slice(requestsBefore)
      .filter((q) => q.method !== "GET" && q.resource !== "leases");
    assert.deepEqual(writes, [], "no write reached the cluster");
    assert.notEqual((sim.sim.cluster.get("nodes", node) as any).spec.unschedulable, true);
    // A dry run is kept and can be read back, but is never a node's active drain.
    assert.equal((await graphql(url, GET, { id: plan.id })).body.data.drainOperation.status, "SUCCEEDED");
  });

  test("disableEviction deletes the pods instead, with the grace period asked for", async () => {
    const node = plainWorker(sim, []);
    const evictionsBefore = sim.sim.stats()["create pods/eviction"] ?? 0;
    const r = await graphql(url, DRAIN, { name: node, options: { ...ALL_FLAGS, disableEviction: true, gracePeriodSeconds: 0 } });
    const done = await waitFor(url, r.body.data.drainNode.id, (o) => o.status !== "RUNNING" && o.status !== "PENDING", "the drain to end");
    assert.equal(done.status, "SUCCEEDED", done.message);
    assert.ok(done.pods.some((p: any) => p.status === "DELETED"));
    assert.ok(done.pods.every((p: any) => p.status === "DELETED" || p.status === "SKIPPED"));
    assert.equal((sim.sim.stats()["create pods/eviction"] ?? 0) - evictionsBefore, 0, "no evictions");
    await graphql(url, `mutation($n: String!) { uncordonNode(name: $n) { name } }`, { n: node });
  });

  test("malformed input gets BAD_USER_INPUT or NOT_FOUND and starts nothing", async () => {
    const node = plainWorker(sim);
    const cases: [string, Record<string, unknown>, string, RegExp][] = [
      [DRAIN, { name: node, options: { timeoutSeconds: 0 } }, "BAD_USER_INPUT", /timeoutSeconds must be between 1 and 86400/],
      [DRAIN, { name: node, options: { podSelector: "app in (x" } }, "BAD_USER_INPUT", /podSelector/],
      [DRAIN, { name: node, reason: "x".repeat(1_001) }, "BAD_USER_INPUT", /reason is longer than 1000 characters/],
      [DRAIN, { name: "no-such-node" }, "NOT_FOUND", /node "no-such-node" not found/],
      [DRAIN, { name: node, options: { timeoutSeconds: "soon" } }, "BAD_USER_INPUT", /timeoutSeconds/],
      [GET, { id: "not-a-uuid" }, "BAD_USER_INPUT", /not a drain operation id/],
      [`mutation { cancelDrain(id: "00000000-0000-4000-8000-000000000000") { id } }`, {}, "NOT_FOUND", /not found/],
      [`mutation { cordonNode(cluster: "nope", name: "x") { name } }`, {}, "NOT_FOUND", /cluster "nope" is not configured/],
    ];
    for (const [query, variables, code, message] of cases) {
      const r = await graphql(url, query, variables);
      assert.equal(r.body.errors?.[0]?.extensions?.code, code, `${JSON.stringify(variables)}: ${JSON.stringify(r.body.errors)}`);
      assert.match(r.body.errors[0].message, message);
    }
    assert.equal((await graphql(url, `query($n: String!) { node(name: $n) { activeDrain { id } } }`, { n: node })).body.data.node.activeDrain, null);
    assert.notEqual((sim.sim.cluster.get("nodes", node) as any).spec.unschedulable, true);
  });
});
