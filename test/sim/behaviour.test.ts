import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { CoreV1Api } from "@kubernetes/client-node";
import { startSimulator, R, type Simulator } from "../../src/sim/index.js";
import { METRIC_RESOLUTION_MS } from "../../src/sim/metrics.js";
import type { StoreEvent } from "../../src/sim/store.js";
import { kubeConfigFor } from "./support.js";

describe("simulated cluster behaviour", () => {
  let sim: Simulator;
  before(async () => {
    sim = await startSimulator({ nodes: 20, seed: 9, churn: 0, clockSpeed: 0 });
  });
  after(() => sim.stop());

  test("with churn 0, an hour of simulated time changes no node; leases keep renewing", () => {
    const events: StoreEvent[] = [];
    const off = sim.cluster.store.subscribe((e) => events.push(e));
    const lease = sim.cluster.get(R.leases, sim.cluster.nodeNames()[0]!, "kube-node-lease")!;
    sim.cluster.advance(60 * 60_000);
    off();
    assert.deepEqual(
      events.filter((e) => e.resource === R.nodes),
      [],
    );
    const renewed = sim.cluster.get(R.leases, sim.cluster.nodeNames()[0]!, "kube-node-lease")!;
    assert.ok(Date.parse((renewed.spec as any).renewTime) - Date.parse((lease.spec as any).renewTime) >= 59 * 60_000);
  });

  test("a node whose kubelet stops goes Unknown with unreachable taints after 40s, and back when it restarts", () => {
    const node = sim.cluster.nodeNames().find((n) => n.startsWith("general"))!;
    sim.cluster.stopKubelet(node);
    sim.cluster.advance(30_000);
    const ready = () => (sim.cluster.get(R.nodes, node)!.status as any).conditions.find((c: any) => c.type === "Ready");
    assert.equal(ready().status, "True", "still Ready within the grace period");
    sim.cluster.advance(15_000);
    assert.equal(ready().status, "Unknown");
    assert.equal(ready().reason, "NodeStatusUnknown");
    assert.deepEqual(
      ((sim.cluster.get(R.nodes, node)!.spec as any).taints ?? []).map((t: any) => `${t.key}:${t.effect}`),
      ["node.kubernetes.io/unreachable:NoSchedule", "node.kubernetes.io/unreachable:NoExecute"],
    );
    sim.cluster.startKubelet(node);
    assert.equal(ready().status, "True");
    assert.equal((sim.cluster.get(R.nodes, node)!.spec as any).taints, undefined);
  });

  test("replacement pods avoid cordoned and tainted nodes; daemon pods come to new nodes", () => {
    const nodes = sim.cluster.nodeNames();
    const rs = sim.cluster.list(R.replicasets, "shop").find((r) => (r.spec as any).replicas >= 2)!;
    const owned = () => sim.cluster.list(R.pods, "shop").filter((p) => p.metadata.ownerReferences?.[0]?.uid === rs.metadata.uid);
    const victim = owned()[0]!;
    const allowed = nodes.filter((n) => n.startsWith("general") || n.startsWith("memory")).slice(0, 2);
    // Cordon every other worker; taint one of the two left NoSchedule.
    for (const n of nodes) if (!allowed.includes(n)) sim.cluster.update(R.nodes, n, (o) => void ((o.spec as any).unschedulable = true));
    sim.cluster.update(R.nodes, allowed[1]!, (o) => void ((o.spec as any).taints = [{ key: "dedicated", value: "db", effect: "NoSchedule" }]));
    sim.cluster.deletePod(`shop/${victim.metadata.name}`, 0);
    sim.cluster.advance(5_000);
    assert.equal(owned().length, (rs.spec as any).replicas, "the ReplicaSet is whole again");
    const newest = owned().sort((x, y) => Date.parse(y.metadata.creationTimestamp!) - Date.parse(x.metadata.creationTimestamp!))[0]!;
    assert.notEqual(newest.metadata.name, victim.metadata.name);
    assert.equal((newest.spec as any).nodeName, allowed[0], "the only schedulable node without an untolerated taint");
    assert.equal((newest.status as any).phase, "Running");

    const added = sim.cluster.addNode({ pool: "general" });
    sim.cluster.update(R.nodes, added.metadata.name, (o) => void ((o.spec as any).unschedulable = true));
    sim.cluster.advance(5_000);
    const daemons = sim.cluster.podsOnNode(added.metadata.name).filter((p) => p.metadata.ownerReferences?.[0]?.kind === "DaemonSet");
    assert.equal(daemons.length, 3, "every DaemonSet runs a pod on the new, cordoned node");
    assert.ok(daemons.every((p) => (p.status as any).phase === "Running"));
  });

  test("churn above 0 flaps conditions, restarts kubelets and adds or removes nodes", async () => {
    const churny = await startSimulator({ nodes: 20, seed: 4, churn: 20, clockSpeed: 0 });
    try {
      const kinds = new Set<string>();
      churny.cluster.store.subscribe((e) => {
        if (e.resource === R.nodes) kinds.add(e.type);
        if (e.resource === R.events) kinds.add(`event:${(e.entry.obj as any).reason}`);
      });
      churny.cluster.advance(20 * 60_000);
      assert.ok(kinds.has("MODIFIED"));
      assert.ok(kinds.has("ADDED") || kinds.has("DELETED"), [...kinds].join(","));
      assert.ok(
        [...kinds].some((k) => k === "event:NodeNotReady" || k === "event:NodeReady"),
        [...kinds].join(","),
      );
    } finally {
      await churny.stop();
    }
  });

  test("node metrics move with time and follow what is scheduled", async () => {
    const a = await (await fetch(`${sim.url}/apis/metrics.k8s.io/v1beta1/nodes`)).json();
    sim.cluster.advance(10 * 60_000);
    const b = await (await fetch(`${sim.url}/apis/metrics.k8s.io/v1beta1/nodes`)).json();
    assert.equal(a.kind, "NodeMetricsList");
    const cpu = (m: any) => Number(m.usage.cpu.slice(0, -1));
    const moved = a.items.filter((m: any) => {
      const o = b.items.find((x: any) => x.metadata.name === m.metadata.name);
      return o && cpu(o) !== cpu(m);
    });
    assert.ok(moved.length > a.items.length / 2, "usage changes over ten minutes");
    // The busiest node by requests uses more CPU than the emptiest.
    const byReq = sim.cluster
      .nodeNames()
      .filter((n) => b.items.some((m: any) => m.metadata.name === n))
      .sort((x, y) => sim.cluster.allocated(x).cpu - sim.cluster.allocated(y).cpu);
    const usage = (n: string) => cpu(b.items.find((m: any) => m.metadata.name === n));
    assert.ok(usage(byReq[byReq.length - 1]!) > usage(byReq[0]!));
  });

  test("node metrics are what metrics-server scraped: the same within a resolution, scraped again at once when a pod on the node changes", async () => {
    const read = async (name: string) => {
      const list = await (await fetch(`${sim.url}/apis/metrics.k8s.io/v1beta1/nodes`)).json();
      return list.items.find((m: any) => m.metadata.name === name);
    };
    const cpu = (m: any) => Number(m.usage.cpu.slice(0, -1));
    const node = sim.cluster.nodeNames().find((n) => n.startsWith("general"))!;
    const first = await read(node);
    sim.cluster.advance(10_000);
    const within = await read(node);
    assert.deepEqual([within.timestamp, within.usage], [first.timestamp, first.usage], "ten seconds on, the same scrape");
    sim.cluster.create(R.pods, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "metrics-probe", namespace: "default" },
      spec: { nodeName: node, containers: [{ name: "app", image: "registry.example/app:1", resources: { requests: { cpu: "2", memory: "1Gi" } } }] },
      status: { phase: "Running" },
    } as any);
    try {
      const withPod = await read(node);
      assert.equal(withPod.timestamp, sim.cluster.clock.iso(sim.cluster.clock.now() - 7_000), "scraped again now");
      assert.ok(cpu(withPod) > cpu(first), `${withPod.usage.cpu} > ${first.usage.cpu}`);
      sim.cluster.advance(2 * METRIC_RESOLUTION_MS);
      const later = await read(node);
      assert.ok(Date.parse(later.timestamp) - Date.parse(withPod.timestamp) >= METRIC_RESOLUTION_MS, `${later.timestamp} a resolution after ${withPod.timestamp}`);
    } finally {
      sim.cluster.store.remove(R.pods, "default/metrics-probe");
    }
  });

  test("HTTPS with a self-signed certificate works through the kubeconfig's CA", async () => {
    const secure = await startSimulator({ nodes: 3, seed: 2, tls: true });
    try {
      assert.match(secure.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      assert.match(secure.kubeconfig(), /certificate-authority-data: /);
      const core = kubeConfigFor(secure).makeApiClient(CoreV1Api);
      const nodes = await core.listNode();
      assert.equal(nodes.items.length, 3);
    } finally {
      await secure.stop();
    }
  });

  test("stop is idempotent", async () => {
    const s = await startSimulator({ nodes: 2, seed: 1 });
    await Promise.all([s.stop(), s.stop()]);
    await s.stop();
    await assert.rejects(fetch(`${s.url}/version`));
  });
});

describe("scheduling retries", () => {
  test("a pod no node can take stays Pending as Unschedulable, then runs once a node frees up", async () => {
    const sim = await startSimulator({ nodes: 6, seed: 12, churn: 0, clockSpeed: 0 });
    try {
      const workers = sim.cluster.nodeNames().filter((n) => !n.startsWith("control-plane"));
      for (const n of workers) sim.cluster.update(R.nodes, n, (o) => void ((o.spec as any).unschedulable = true));
      const res = await fetch(`${sim.url}/api/v1/namespaces/default/pods`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "waiting" }, spec: { containers: [{ name: "c", image: "busybox", resources: { requests: { cpu: "100m" } } }] } }),
      });
      assert.equal(res.status, 201);
      sim.cluster.advance(5_000);
      const pending = sim.cluster.get(R.pods, "waiting", "default")!;
      assert.equal((pending.status as any).phase, "Pending");
      assert.equal((pending.status as any).conditions[0].reason, "Unschedulable");
      sim.cluster.update(R.nodes, workers[0]!, (o) => void delete (o.spec as any).unschedulable);
      sim.cluster.advance(15_000);
      const running = sim.cluster.get(R.pods, "waiting", "default")!;
      assert.equal((running.spec as any).nodeName, workers[0]);
      assert.equal((running.status as any).phase, "Running");
    } finally {
      await sim.stop();
    }
  });
});
