import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { CoreV1Api, CoordinationV1Api, makeInformer, type V1Node, type V1Pod } from "@kubernetes/client-node";
import { startSimulator, R, type Simulator } from "../../src/sim/index.js";
import { Agent, get, type IncomingMessage } from "node:http";
import { once } from "node:events";
import type { Socket } from "node:net";
import { kubeConfigFor, statusOf, eventually, readWatch } from "./support.js";

/** A GET through `agent`: its status, and whether it went on a connection the agent already had open. */
function getVia(agent: Agent, url: string): Promise<{ status: number; reused: boolean; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent }, (res: IncomingMessage) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode!, reused: req.reusedSocket, socket: req.socket as Socket }));
    });
    req.on("error", reject);
  });
}

/** A watch on its own connection: the events read so far, a wait for the first `n`, and its connection's close. */
function openWatch(url: string): { events: any[]; received(n: number): Promise<void>; closed: Promise<void> } {
  const events: any[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let buffered = "";
  let closed!: () => void;
  const closedPromise = new Promise<void>((resolve) => (closed = resolve));
  const req = get(url, { agent: false }, (res) => {
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      buffered += chunk;
      for (let i = buffered.indexOf("\n"); i >= 0; i = buffered.indexOf("\n")) {
        events.push(JSON.parse(buffered.slice(0, i)));
        buffered = buffered.slice(i + 1);
      }
      for (const w of waiters.filter((w) => events.length >= w.n)) w.resolve();
    });
    res.on("error", () => undefined);
  });
  req.on("error", () => undefined);
  req.on("socket", (socket) => socket.once("close", () => closed()));
  return {
    events,
    received: (n) => (events.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    closed: closedPromise,
  };
}

describe("client-node against the simulator", () => {
  let sim: Simulator;
  let core: CoreV1Api;

  before(async () => {
    sim = await startSimulator({ nodes: 20, seed: 3, churn: 0, clockSpeed: 0, historySize: 50, bookmarkIntervalMs: 200 });
    const kc = kubeConfigFor(sim);
    core = kc.makeApiClient(CoreV1Api);
  });
  after(() => sim.stop());

  test("a list+watch informer sees every add, modify and delete", async () => {
    const kc = kubeConfigFor(sim);
    const informer = makeInformer<V1Node>(kc, "/api/v1/nodes", () => core.listNode());
    const seen: string[] = [];
    informer.on("add", (n) => seen.push(`add ${n.metadata!.name}`));
    informer.on("update", (n) => seen.push(`update ${n.metadata!.name} ${n.status!.conditions!.find((c) => c.type === "DiskPressure")!.status}`));
    informer.on("delete", (n) => seen.push(`delete ${n.metadata!.name}`));
    await informer.start();
    try {
      assert.equal(informer.list().length, 20);
      seen.length = 0;
      const added = sim.cluster.addNode({ pool: "general", zone: "eu-west-1a", name: "informer-probe" });
      const victim = sim.cluster.nodeNames().find((n) => n.startsWith("general"))!;
      sim.cluster.setNodeCondition(victim, "DiskPressure", "True");
      sim.cluster.removeNode(added.metadata.name);
      await eventually(() => seen.length >= 3, "three informer events");
      assert.deepEqual(seen, ["add informer-probe", `update ${victim} True`, "delete informer-probe"]);
      assert.equal(informer.get(victim)!.status!.conditions!.find((c) => c.type === "DiskPressure")!.status, "True");
      sim.cluster.setNodeCondition(victim, "DiskPressure", "False");
    } finally {
      await informer.stop();
    }
  });

  test("a watch resumed from an expired resourceVersion gets 410 Expired and the informer relists", async () => {
    const kc = kubeConfigFor(sim);
    const informer = makeInformer<V1Node>(kc, "/api/v1/nodes", () => core.listNode());
    const deleted: string[] = [];
    informer.on("delete", (n) => deleted.push(n.metadata!.name!));
    await informer.start();
    await informer.stop();
    const staleRv = Number((informer as unknown as { latestResourceVersion(): string }).latestResourceVersion());
    // More node changes than the history keeps (50), and one node gone meanwhile.
    const target = sim.cluster.nodeNames().find((n) => n.startsWith("general"))!;
    for (let i = 0; i < 60; i++) {
      sim.cluster.setNodeCondition(target, "PIDPressure", i % 2 === 0 ? "True" : "False");
    }
    const gone = sim.cluster.nodeNames().filter((n) => !n.startsWith("control-plane"))[0]!;
    sim.cluster.removeNode(gone);
    const raw = await readWatch(`${sim.url}/api/v1/nodes?watch=true&resourceVersion=${staleRv}&timeoutSeconds=5`);
    assert.equal(raw.length, 1);
    assert.equal(raw[0].type, "ERROR");
    assert.equal(raw[0].object.kind, "Status");
    assert.equal(raw[0].object.code, 410);
    assert.equal(raw[0].object.reason, "Expired");
    assert.match(raw[0].object.message, /^too old resource version: \d+ \(\d+\)$/);

    const lists = () => sim.requestLog().filter((r) => r.verb === "list" && r.resource === "nodes").length;
    const before = lists();
    await informer.start();
    // start() resumed from the stale version: the 410 makes it list again and notice the deletion.
    await eventually(() => deleted.includes(gone), "the informer's relist to report the deleted node");
    assert.ok(lists() > before, "the informer relisted");
    assert.equal(informer.list().length, sim.cluster.nodeNames().length);
    await informer.stop();
  });

  // How soon after timeoutSeconds the stream ends is measured by bench/sim-scale.ts; the timeout here only stops a hang.
  test("watch sends BOOKMARK events when allowed and ends after timeoutSeconds", { timeout: 60_000 }, async () => {
    const rv = sim.cluster.store.resourceVersion;
    const events = await readWatch(`${sim.url}/api/v1/nodes?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=1`);
    assert.ok(events.length >= 1);
    assert.ok(events.every((e) => e.type === "BOOKMARK" && e.object.kind === "Node" && Number(e.object.metadata.resourceVersion) >= rv));
  });

  test("dropConnections ends open watches and closes idle keep-alive connections; the simulator goes on serving", { timeout: 60_000 }, async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      assert.equal((await getVia(agent, `${sim.url}/version`)).reused, false);
      const idle = await getVia(agent, `${sim.url}/version`);
      assert.equal(idle.reused, true, "the agent keeps its connection open between requests");
      const idleClosed = once(idle.socket, "close");
      const watch = openWatch(`${sim.url}/api/v1/nodes?watch=1&timeoutSeconds=300`);
      const names = sim.cluster.nodeNames();
      // The initial ADDED events are written before the watch is registered: once they are here, it is open.
      await watch.received(names.length);
      sim.dropConnections();
      await watch.closed;
      await idleClosed;
      assert.deepEqual(
        watch.events.map((e) => `${e.type} ${e.object.metadata.name}`),
        names.map((n) => `ADDED ${n}`),
      );
      const after = await getVia(agent, `${sim.url}/version`);
      assert.equal(after.status, 200);
      assert.equal(after.reused, false, "the next request needs a new connection");
    } finally {
      agent.destroy();
    }
  });

  test("limit and continue page through every pod exactly once", async () => {
    const names = new Set<string>();
    let token: string | undefined;
    let pages = 0;
    let firstRemaining: number | undefined;
    do {
      const page = await core.listPodForAllNamespaces({ limit: 100, ...(token ? { _continue: token } : {}) });
      if (pages === 0) firstRemaining = page.metadata!.remainingItemCount;
      for (const p of page.items) {
        const key = `${p.metadata!.namespace}/${p.metadata!.name}`;
        assert.ok(!names.has(key), `duplicate ${key}`);
        names.add(key);
      }
      token = page.metadata!._continue;
      pages++;
    } while (token);
    const total = sim.cluster.store.size(R.pods);
    assert.equal(names.size, total);
    assert.equal(pages, Math.ceil(total / 100));
    assert.equal(firstRemaining, total - 100);
  });

  test("an update with a stale resourceVersion is refused with 409 Conflict", async () => {
    const name = sim.cluster.nodeNames()[5]!;
    const node = await core.readNode({ name });
    node.metadata!.labels!["team"] = "a";
    await core.replaceNode({ name, body: node });
    node.metadata!.labels!["team"] = "b";
    await assert.rejects(core.replaceNode({ name, body: node }), (err) => {
      const s = statusOf(err);
      assert.equal((err as { code: number }).code, 409);
      assert.equal(s.reason, "Conflict");
      assert.equal(s.message, `Operation cannot be fulfilled on nodes "${name}": the object has been modified; please apply your changes to the latest version and try again`);
      return true;
    });
    const leases = kubeConfigFor(sim).makeApiClient(CoordinationV1Api);
    const lease = await leases.readNamespacedLease({ name, namespace: "kube-node-lease" });
    const renewed = { ...lease, spec: { ...lease.spec, renewTime: new Date() } };
    await leases.replaceNamespacedLease({ name, namespace: "kube-node-lease", body: renewed });
    await assert.rejects(leases.replaceNamespacedLease({ name, namespace: "kube-node-lease", body: renewed }), (err) => {
      assert.equal((err as { code: number }).code, 409);
      assert.equal(
        statusOf(err).message,
        `Operation cannot be fulfilled on leases.coordination.k8s.io "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
      return true;
    });
  });

  test("eviction answers 201 and the pod terminates; a PDB with no disruption left answers 429 naming it", async () => {
    const ledger = sim.cluster.list(R.pods, "payments").filter((p) => p.metadata.labels?.["app"] === "ledger");
    assert.equal(ledger.length, 2);
    const free = sim.cluster.list(R.pods, "shop").find((p) => (p.status as any).phase === "Running")!;
    await core.createNamespacedPodEviction({
      name: free.metadata.name,
      namespace: "shop",
      body: { apiVersion: "policy/v1", kind: "Eviction", metadata: { name: free.metadata.name, namespace: "shop" } },
    });
    const evicted = await core.readNamespacedPod({ name: free.metadata.name, namespace: "shop" });
    assert.ok(evicted.metadata!.deletionTimestamp, "the evicted pod is terminating");
    sim.cluster.advance(31_000);
    await assert.rejects(core.readNamespacedPod({ name: free.metadata.name, namespace: "shop" }), (err) => (err as { code: number }).code === 404);

    const pod = ledger[0]!;
    await assert.rejects(
      core.createNamespacedPodEviction({
        name: pod.metadata.name,
        namespace: "payments",
        body: { apiVersion: "policy/v1", kind: "Eviction", metadata: { name: pod.metadata.name, namespace: "payments" } },
      }),
      (err) => {
        const s = statusOf(err);
        assert.equal((err as { code: number }).code, 429);
        assert.equal(s.reason, "TooManyRequests");
        assert.equal(s.message, "Cannot evict pod as it would violate the pod's disruption budget.");
        assert.deepEqual(s.details.causes, [{ reason: "DisruptionBudget", message: "The disruption budget ledger needs 2 healthy pods and has 2 currently" }]);
        return true;
      },
    );
    // Older kubectl posts policy/v1beta1 Evictions to the same subresource.
    const res = await fetch(`${sim.url}/api/v1/namespaces/payments/pods/${pod.metadata.name}/eviction`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ apiVersion: "policy/v1beta1", kind: "Eviction", metadata: { name: pod.metadata.name, namespace: "payments" } }),
    });
    assert.equal(res.status, 429);
  });

  test("deleting a pod honours gracePeriodSeconds and its ReplicaSet replaces it", async () => {
    const pod = sim.cluster.list(R.pods, "data").find((p) => p.metadata.ownerReferences?.[0]?.kind === "ReplicaSet" && (p.status as any).phase === "Running")!;
    const rsName = pod.metadata.ownerReferences![0]!.name;
    const deleted = await core.deleteNamespacedPod({ name: pod.metadata.name, namespace: "data", gracePeriodSeconds: 10 });
    assert.equal(deleted.metadata!.deletionGracePeriodSeconds, 10);
    sim.cluster.advance(9_000);
    assert.ok(sim.cluster.get(R.pods, pod.metadata.name, "data"), "still terminating before the grace period ends");
    sim.cluster.advance(2_000);
    assert.equal(sim.cluster.get(R.pods, pod.metadata.name, "data"), undefined);
    const rs = sim.cluster.get(R.replicasets, rsName, "data")!;
    const owned = sim.cluster.list(R.pods, "data").filter((p) => p.metadata.ownerReferences?.[0]?.uid === rs.metadata.uid);
    assert.equal(owned.length, (rs.spec as any).replicas);
    assert.ok(owned.every((p) => (p.status as any).phase === "Running" && (p.spec as any).nodeName));
  });

  test("field and label selectors filter lists as the apiserver does", async () => {
    const node = sim.cluster.nodeNames().find((n) => n.startsWith("general"))!;
    const onNode = await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` });
    assert.deepEqual(
      onNode.items.map((p) => p.metadata!.name).sort(),
      sim.cluster
        .podsOnNode(node)
        .map((p) => p.metadata.name)
        .sort(),
    );
    assert.ok(onNode.items.length > 3);
    const ledger = await core.listNamespacedPod({ namespace: "payments", labelSelector: "app=ledger" });
    assert.equal(ledger.items.length, 2);
    const notRunning = await core.listPodForAllNamespaces({ fieldSelector: "status.phase!=Running" });
    assert.ok(notRunning.items.every((p: V1Pod) => p.status!.phase !== "Running"));
    const byName = await core.listNode({ fieldSelector: `metadata.name=${node}` });
    assert.deepEqual(
      byName.items.map((n) => n.metadata!.name),
      [node],
    );
    const ds = await core.listPodForAllNamespaces({ labelSelector: "app.kubernetes.io/name in (kube-proxy,cilium)" });
    assert.equal(ds.items.length, 2 * sim.cluster.nodeNames().length);
    await assert.rejects(core.listPodForAllNamespaces({ fieldSelector: "spec.bogus=1" }), (err) => {
      assert.equal((err as { code: number }).code, 400);
      assert.equal(statusOf(err).message, "field label not supported: spec.bogus");
      return true;
    });
  });

  test("unknown objects answer 404 Status shaped as the apiserver's", async () => {
    await assert.rejects(core.readNode({ name: "nope" }), (err) => {
      assert.equal((err as { code: number }).code, 404);
      assert.deepEqual(statusOf(err), {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: 'nodes "nope" not found',
        reason: "NotFound",
        details: { name: "nope", kind: "nodes" },
        code: 404,
      });
      return true;
    });
  });

  test("the Table form carries kubectl's node columns", async () => {
    const res = await fetch(`${sim.url}/api/v1/nodes`, { headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json" } });
    const table = await res.json();
    assert.equal(table.kind, "Table");
    assert.deepEqual(
      table.columnDefinitions.map((c: any) => `${c.name}:${c.priority}`),
      ["Name:0", "Status:0", "Roles:0", "Age:0", "Version:0", "Internal-IP:1", "External-IP:1", "OS-Image:1", "Kernel-Version:1", "Container-Runtime:1"],
    );
    assert.equal(table.rows.length, sim.cluster.nodeNames().length);
    assert.equal(table.rows[0].object.kind, "PartialObjectMetadata");
  });
});
