import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import type { App } from "../../src/app/create-app.js";
import type { AppProbes } from "../../src/app/app-probes.js";
import { graphql, startTestApp, subscribers } from "../support/app.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const OUTLOOK = `query($name: String!) { node(name: $name) { evictionOutlook { taint { key value effect } taintedSince pods { namespace name tolerationSeconds evictAt } } } }`;

/** A Deployment whose pods tolerate a NotReady node for 30 s instead of the default 300 s. */
const QUICK = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "quick", namespace: "default" },
  spec: {
    replicas: 4,
    selector: { matchLabels: { app: "quick" } },
    template: {
      metadata: { labels: { app: "quick" } },
      spec: {
        tolerations: [{ key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 30 }],
        containers: [{ name: "c", image: "busybox", resources: { requests: { cpu: "10m", memory: "16Mi" } } }],
      },
    },
  },
};

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

describe("the eviction outlook of a NotReady node, and the simulator's taint eviction", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;
  let probes: AppProbes;

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 4, seed: 32, clockSpeed: 0 });
    ({ app, url, probes } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] } }, { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200 } }));
    await eventually(async () => (await graphql(url, "{ clusters { synced } }")).body.data?.clusters[0].synced, "sync", 20_000);
  });
  after(async () => {
    await app?.stop();
    await sim?.stop();
  });

  test("a NotReady node shows its taint and each pod's evictAt, and the simulator evicts each pod then (300 s by default, 30 s by toleration, a DaemonSet pod never)", async () => {
    const cluster = sim.sim.cluster;
    cluster.create("apps/deployments", JSON.parse(JSON.stringify(QUICK)));
    cluster.advance(5_000);
    const quickPods = cluster.list("pods", "default").filter((p: any) => p.metadata.labels?.app === "quick" && p.spec.nodeName);
    assert.ok(quickPods.length === 4, `the quick pods run (${quickPods.length})`);
    const node = (quickPods[0]!.spec as any).nodeName as string;
    const onNode = cluster.podsOnNode(node);
    const daemonPods = onNode.filter((p) => p.metadata.ownerReferences?.[0]?.kind === "DaemonSet");
    const defaultPods = onNode.filter((p) => p.metadata.ownerReferences?.[0]?.kind !== "DaemonSet" && p.metadata.labels?.app !== "quick");
    assert.ok(daemonPods.length > 0 && defaultPods.length > 0, `the node has DaemonSet pods (${daemonPods.length}) and pods with the default tolerations (${defaultPods.length})`);

    cluster.setNodeCondition(node, "Ready", "False", "KubeletNotReady");
    const taint = ((cluster.get("nodes", node)!.spec as any).taints as any[]).find((t) => t.key === "node.kubernetes.io/not-ready" && t.effect === "NoExecute");
    const since = Date.parse(taint.timeAdded);
    const seconds = (p: any) => (p.metadata.ownerReferences?.[0]?.kind === "DaemonSet" ? null : p.metadata.labels?.app === "quick" ? 30 : 300);
    const expected = onNode
      .map((p) => ({
        namespace: p.metadata.namespace!,
        name: p.metadata.name,
        tolerationSeconds: seconds(p),
        evictAt: seconds(p) === null ? null : new Date(since + seconds(p)! * 1000).toISOString(),
      }))
      .sort((a, b) => cmp(a.evictAt ?? "~", b.evictAt ?? "~") || cmp(a.namespace, b.namespace) || cmp(a.name, b.name));

    const outlook = await eventually(async () => (await graphql(url, OUTLOOK, { name: node })).body.data?.node.evictionOutlook, "the outlook", 10_000);
    assert.deepEqual(outlook, { taint: { key: "node.kubernetes.io/not-ready", value: null, effect: "NoExecute" }, taintedSince: new Date(since).toISOString(), pods: expected });

    const counting = await graphql(url, `{ nodes(filter: { evictionCountdown: true }) { edges { node { name } } } }`);
    assert.deepEqual(
      counting.body.data.nodes.edges.map((e: any) => e.node.name),
      [node],
    );

    // Simulated time, second by second: when does each pod get its deletionTimestamp?
    const deletedAt = new Map<string, number>();
    for (let s = 0; s < 400; s++) {
      cluster.advance(1_000);
      for (const p of cluster.podsOnNode(node)) {
        const key = `${p.metadata.namespace}/${p.metadata.name}`;
        if (p.metadata.deletionTimestamp && !deletedAt.has(key)) deletedAt.set(key, cluster.clock.now());
      }
    }
    for (const pod of expected) {
      const key = `${pod.namespace}/${pod.name}`;
      if (pod.evictAt === null) {
        assert.equal(deletedAt.has(key), false, `${key} (DaemonSet) stays`);
        assert.ok(cluster.get("pods", pod.name, pod.namespace), `${key} is still there`);
        continue;
      }
      const at = deletedAt.get(key);
      assert.ok(at !== undefined, `${key} was evicted`);
      const late = (at - Date.parse(pod.evictAt)) / 1000;
      assert.ok(late >= 0 && late <= 2, `${key} evicted ${late} s after its evictAt`);
    }
    const replacements = cluster.list("pods", "default").filter((p: any) => p.metadata.labels?.app === "quick" && !p.metadata.deletionTimestamp);
    assert.equal(replacements.length, 4);
    assert.ok(
      replacements.every((p: any) => p.spec.nodeName && p.spec.nodeName !== node),
      "the ReplicaSet made them again on other nodes",
    );

    cluster.setNodeCondition(node, "Ready", "True");
    await eventually(async () => (await graphql(url, OUTLOOK, { name: node })).body.data?.node.evictionOutlook === null, "no outlook once Ready", 10_000);
  });

  test("a countdown taint added and taken off by hand is a nodeStatusChanged event each time", async () => {
    const cluster = sim.sim.cluster;
    const node = cluster.nodeNames().find((n) => !n.startsWith("control-plane"))!;
    const client = createClient({ url: url.replace(/^http/, "ws") + "/graphql", webSocketImpl: WebSocket, retryAttempts: 0, lazy: false });
    const received: any[] = [];
    try {
      const listening = probes.subscriberCount();
      client.subscribe(
        { query: `subscription($f: NodeFilter) { nodeStatusChanged(filter: $f) { name transition { type } node { evictionOutlook { taint { key } } } } }`, variables: { f: { names: [node] } } },
        { next: (v) => received.push(v), error: () => {}, complete: () => {} },
      );
      await subscribers(probes, listening + 1);
      await sim.kubectl("taint", "node", node, "node.kubernetes.io/unreachable:NoExecute");
      const started = await eventually(() => received[0], "the countdown's start", 10_000);
      assert.deepEqual(started.data.nodeStatusChanged, { name: node, transition: null, node: { evictionOutlook: { taint: { key: "node.kubernetes.io/unreachable" } } } });
      await sim.kubectl("taint", "node", node, "node.kubernetes.io/unreachable:NoExecute-");
      const ended = await eventually(() => received[1], "the countdown's end", 10_000);
      assert.deepEqual(ended.data.nodeStatusChanged, { name: node, transition: null, node: { evictionOutlook: null } });
    } finally {
      await client.dispose();
    }
  });
});
