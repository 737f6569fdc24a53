import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import type { AppProbes } from "../../src/app/app-probes.js";
import type { App } from "../../src/app/create-app.js";
import { startTestApp, subscribers } from "../support/app.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

/**
 * The same cluster served twice: with the answer cache (src/performance: compiled execution,
 * reused node fragments, bytes written directly) and with `answerCache: false` (plain
 * graphql-js, Apollo's and ws's own sends). Through churn both must give the same bytes over
 * HTTP and the same messages over graphql-ws. The two apps see each watch event a moment apart,
 * so a comparison is retried until they agree: an answer cache that kept a stale node never
 * agrees, and the test fails at its deadline.
 */
const NODE = `__typename id cluster name uid createdAt labels { key value } label(key: "kubernetes.io/arch") annotations { key value }
  taints { key value effect } roles zone region instanceType unschedulable ready status
  conditions { type status reason message lastHeartbeatTime lastTransitionTime } addresses { type address }
  nodeInfo { kubeletVersion containerRuntime osImage } capacity { cpuMillicores memoryBytes pods quantities { key value } }
  allocatable { cpuMillicores memoryBytes pods } requests { cpuMillicores memoryBytes } limits { cpuMillicores memoryBytes } podCount
  usage { cpuMillicores memoryBytes cpuPercent memoryPercent timestamp } pods { namespace name phase ownerKind requests { cpuMillicores } }
  providerID podCIDRs images(first: 2) { names sizeBytes }`;
const FLEET = `{ clusters { name nodeCount readyNodeCount synced } nodes(first: 100) { totalCount edges { cursor node { ${NODE} } } } }`;
const HEARTBEATS = `{ nodes(first: 100) { edges { node { name podCount heartbeatAgeSeconds } } } }`;
const STATUS = `subscription { nodeStatusChanged { cluster name unschedulable transition { type from to at } node { ${NODE} } } }`;

interface Served {
  app: App;
  url: string;
  probes: AppProbes;
  ws: Client;
}

function podManifest(name: string, node: string): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default" },
    spec: { nodeName: node, containers: [{ name: "c", image: "registry.k8s.io/pause:3.9", resources: { requests: { cpu: "300m", memory: "32Mi" } } }] },
  });
}

describe("the answer cache on and off give the same answers through churn", () => {
  let cluster: SimWithKubeconfig;
  let on: Served;
  let off: Served;
  const dir = mkdtempSync(join(tmpdir(), "ni-answer-cache-"));

  async function serve(answerCache: boolean): Promise<Served> {
    const { app, url, probes } = await startTestApp(
      { ...(answerCache ? {} : { answerCache: false }), clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] } },
      { clusterTuning: { metricsIntervalMs: 100 } },
    );
    const ws = createClient({ url: url.replace(/^http/, "ws") + "/graphql", webSocketImpl: WebSocket, retryAttempts: 0, lazy: false });
    return { app, url, probes, ws };
  }

  before(async () => {
    // A frozen clock: nothing changes unless a test changes it.
    cluster = await startSimWithKubeconfig({ nodes: 8, seed: 7, clockSpeed: 0, name: "sim" });
    [on, off] = await Promise.all([serve(true), serve(false)]);
    for (const s of [on, off]) await eventually(async () => (await post(s, "{ clusters { synced metricsAvailable } }")).json.data?.clusters[0]?.metricsAvailable, "sync", 30_000);
  });
  after(async () => {
    for (const s of [on, off]) {
      await s?.ws.dispose();
      await s?.app.stop();
    }
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function post(s: Served, query: string) {
    const response = await fetch(`${s.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/graphql-response+json" },
      body: JSON.stringify({ query }),
    });
    const body = await response.text();
    return { status: response.status, type: response.headers.get("content-type"), length: response.headers.get("content-length"), body, json: JSON.parse(body) };
  }

  function overWebSocket(s: Served, query: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      let result: unknown;
      s.ws.subscribe({ query }, { next: (value) => (result = value), error: reject, complete: () => resolve(result) });
    });
  }

  /** Retried until the two apps agree over HTTP (status, headers that matter, bytes), then once more over graphql-ws; returns the answer. */
  async function agree(what: string, holds: (data: any) => boolean = () => true): Promise<any> {
    const fromFragments = on.probes.answersFromFragments();
    let last: unknown;
    await eventually(
      async () => {
        const [a, b] = await Promise.all([post(on, FLEET), post(off, FLEET)]);
        last = { on: a.body.slice(0, 300), off: b.body.slice(0, 300) };
        return a.status === b.status && a.type === b.type && a.length === b.length && a.body === b.body && holds(a.json.data);
      },
      `${what}: both apps' answers agree (${JSON.stringify(last)})`,
      20_000,
    );
    assert.ok(on.probes.answersFromFragments() > fromFragments, "the cached app answered from fragments");
    assert.equal(off.probes.answersFromFragments(), 0, "the app with the cache off never did");
    assert.equal(off.probes.compiledOperations(), 0, "nor compiled anything");
    // Each app polls metrics on its own: a sample can land in one between the two reads, so agreeing is waited for too.
    let ws: unknown;
    await eventually(
      async () => {
        const [a, b] = await Promise.all([overWebSocket(on, FLEET), overWebSocket(off, FLEET)]);
        ws = { on: JSON.stringify(a).slice(0, 300), off: JSON.stringify(b).slice(0, 300) };
        return JSON.stringify(a) === JSON.stringify(b);
      },
      `${what}: both apps' answers agree over graphql-ws (${JSON.stringify(ws)})`,
      20_000,
    );
    return (await post(on, FLEET)).json.data;
  }

  const nodeOf = (data: any, name: string) => data.nodes.edges.map((e: any) => e.node).find((n: any) => n.name === name);

  test("at rest, warmed, and after a pod is deleted and created on another node", async () => {
    await agree("at rest");
    await agree("warmed");
    const [from, to] = cluster.sim.cluster.nodeNames();
    const manifest = join(dir, "moved.json");
    writeFileSync(manifest, podManifest("moved", from!));
    await cluster.kubectl("create", "-f", manifest);
    const before = await agree("the pod created", (data) => nodeOf(data, from!).pods.some((p: any) => p.name === "moved"));
    await cluster.kubectl("delete", "pod", "moved", "-n", "default", "--grace-period=0", "--force");
    writeFileSync(manifest, podManifest("moved", to!));
    await cluster.kubectl("create", "-f", manifest);
    const moved = await agree("the pod moved", (data) => !nodeOf(data, from!).pods.some((p: any) => p.name === "moved") && nodeOf(data, to!).pods.some((p: any) => p.name === "moved"));
    assert.equal(nodeOf(moved, from!).podCount, nodeOf(before, from!).podCount - 1);
  });

  test("after every watch is cut and the history compacted (a relist of nodes and pods)", async () => {
    await agree("before the relist");
    const names = cluster.sim.cluster.nodeNames();
    cluster.sim.dropConnections();
    cluster.sim.cluster.store.compactAll();
    cluster.sim.cluster.setNodeCondition(names[2]!, "Ready", "False", "KubeletNotReady");
    await agree("after the relist", (data) => nodeOf(data, names[2]!).status === "NotReady");
    cluster.sim.cluster.setNodeCondition(names[2]!, "Ready", "True", "KubeletReady");
    await agree("back to Ready", (data) => nodeOf(data, names[2]!).status === "Ready");
  });

  test("a new metrics sample for every node", async () => {
    const warm = await agree("before the sample");
    cluster.sim.cluster.advance(10 * 60_000);
    const name = cluster.sim.cluster.nodeNames()[1]!;
    await agree("the new sample", (data) => nodeOf(data, name).usage?.cpuMillicores !== nodeOf(warm, name).usage?.cpuMillicores);
  });

  test("a time-based field (heartbeatAgeSeconds) is as of each answer, never as of a reused one", async () => {
    const ages = async (s: Served) => new Map((await post(s, HEARTBEATS)).json.data.nodes.edges.map((e: any) => [e.node.name, e.node.heartbeatAgeSeconds]));
    await ages(on);
    const warm = await ages(on);
    const name = cluster.sim.cluster.nodeNames()[0]!;
    await eventually(async () => (await ages(off)).get(name) !== warm.get(name), "the heartbeat's age moves on", 20_000);
    const [a, b, c] = [await ages(off), await ages(on), await ages(off)];
    assert.notEqual(b.get(name), warm.get(name));
    for (const [node, age] of b) assert.ok((a.get(node) as number) <= (age as number) && (age as number) <= (c.get(node) as number), `${node}: ${a.get(node)} <= ${age} <= ${c.get(node)}`);
  });

  test("a subscription's events are the same messages from both apps", async () => {
    const received: Record<string, unknown[]> = { on: [], off: [] };
    const listening = [on.probes.subscriberCount(), off.probes.subscriberCount()];
    const stops = (
      [
        ["on", on],
        ["off", off],
      ] as const
    ).map(([key, s]) => s.ws.subscribe({ query: STATUS }, { next: (v) => received[key]!.push(v), error: () => {}, complete: () => {} }));
    try {
      await subscribers(on.probes, listening[0]! + 1);
      await subscribers(off.probes, listening[1]! + 1);
      const name = cluster.sim.cluster.nodeNames()[3]!;
      cluster.sim.cluster.advance(10_000);
      cluster.sim.cluster.setNodeCondition(name, "Ready", "False", "KubeletNotReady");
      await eventually(() => received.on!.length >= 1 && received.off!.length >= 1, "both apps' events", 20_000);
      assert.equal((received.on![0] as any).data.nodeStatusChanged.name, name);
      assert.deepEqual(received.on![0], received.off![0]);
    } finally {
      for (const stop of stops) stop();
    }
  });
});
