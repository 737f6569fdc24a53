import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { AppProbes } from "../../src/app/app-probes.js";
import type { App } from "../../src/app/create-app.js";
import { R } from "../../src/sim/index.js";
import { bearer, tokensFile, TOKENS } from "../auth/support.js";
import { startTestApp } from "../support/app.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

/**
 * The live inventory's answers reuse each node's JSON while its node object, its pods and its
 * metrics sample are unchanged (src/performance/answer-fragments.ts). What a caller sees must not
 * change: every answer is graphql-js's byte for byte, and a change is in the very next answer.
 * The reference is the same cluster served with the answer cache off (plain graphql-js).
 */
const FLEET = `{ nodes(first: 100) { totalCount edges { node {
  __typename id cluster name uid createdAt labels { key value } label(key: "kubernetes.io/arch") annotations { key value }
  taints { key value effect } roles zone region instanceType unschedulable ready status
  conditions { type status reason message lastHeartbeatTime lastTransitionTime } addresses { type address }
  nodeInfo { kubeletVersion containerRuntime containerRuntimeRelease osImage kernelVersion }
  capacity { cpuMillicores memoryBytes pods quantities { key value } } allocatable { cpuMillicores memoryBytes pods }
  requests { cpuMillicores memoryBytes } limits { cpuMillicores memoryBytes } podCount
  usage { cpuMillicores memoryBytes cpuPercent memoryPercent timestamp }
  pods { namespace name phase ownerKind requests { cpuMillicores } }
  providerID podCIDRs volumesInUse images(first: 2) { names sizeBytes } } } } }`;

interface Case {
  name: string;
  query: string;
  variables?: Record<string, unknown>;
}

const CASES: Case[] = [
  { name: "every cached Node field of every node", query: FLEET },
  { name: "aliases and a key asked twice", query: `{ nodes(first: 5) { edges { node { n: name name labels { key } labels { value } arch: label(key: "kubernetes.io/arch") } } } }` },
  {
    name: "variables read inside the node",
    query: `query($k: String!, $ns: String) { nodes(first: 5) { edges { node { label(key: $k) pods(namespace: $ns) { name } } } } }`,
    variables: { k: "kubernetes.io/os", ns: "kube-system" },
  },
  {
    name: "the same document with other variables",
    query: `query($k: String!, $ns: String) { nodes(first: 5) { edges { node { label(key: $k) pods(namespace: $ns) { name } } } } }`,
    variables: { k: "kubernetes.io/arch", ns: "default" },
  },
  {
    name: "directives and fragments below a node's fields",
    query: `query($x: Boolean!) { nodes(first: 3) { edges { node { name usage { cpuPercent @include(if: $x) ...U } } } } } fragment U on NodeUsage { memoryBytes }`,
    variables: { x: false },
  },
  { name: "one node, beside the clusters", query: `{ clusters { name nodeCount } node(name: "NODE") { name status podCount usage { cpuMillicores } } }` },
];

/** A pod bound to `node`, as a user would create it. */
function podManifest(node: string): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "answer-fragments-probe", namespace: "default" },
    spec: { nodeName: node, containers: [{ name: "c", image: "registry.k8s.io/pause:3.9", resources: { requests: { cpu: "250m", memory: "64Mi" } } }] },
  });
}

describe("answers from prerendered node fragments", () => {
  let cluster: SimWithKubeconfig;
  let app: App;
  let url: string;
  let probes: AppProbes;
  let plainUrl: string;
  let plain: App;
  const tokens = tokensFile();
  const dir = mkdtempSync(join(tmpdir(), "ni-answer-fragments-"));

  before(async () => {
    // A frozen clock and no churn: nothing changes unless a test changes it.
    cluster = await startSimWithKubeconfig({ nodes: 12, seed: 1, clockSpeed: 0, name: "sim" });
    const config = { auth: { tokensFile: tokens.path }, clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] } };
    ({ app, url, probes } = await startTestApp(config, { clusterTuning: { metricsIntervalMs: 100 } }));
    ({ app: plain, url: plainUrl } = await startTestApp({ ...config, answerCache: false }, { clusterTuning: { metricsIntervalMs: 100 } }));
    for (const to of [url, plainUrl])
      await eventually(async () => (await send("{ clusters { synced metricsAvailable } }", undefined, TOKENS.viewer, to)).json.data?.clusters[0]?.metricsAvailable, "sync", 30_000);
  });
  after(async () => {
    await app?.stop();
    await plain?.stop();
    await cluster?.stop();
    tokens.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  async function send(query: string, variables?: Record<string, unknown>, token = TOKENS.viewer, to = url) {
    const response = await fetch(`${to}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/graphql-response+json", ...bearer(token) },
      body: JSON.stringify({ query, variables }),
    });
    const body = await response.text();
    return { status: response.status, type: response.headers.get("content-type"), length: response.headers.get("content-length"), body, json: JSON.parse(body) };
  }
  /** The answer plain graphql-js gives now (the answer cache off). */
  const byGraphqlJs = (query: string, variables?: Record<string, unknown>) => send(query, variables, TOKENS.viewer, plainUrl);
  const strip = ({ json: _json, ...rest }: Awaited<ReturnType<typeof send>>) => rest;

  for (const c of CASES) {
    test(`${c.name}: graphql-js's answer, byte for byte, written and then reused`, async () => {
      const query = c.query.replace("NODE", cluster.sim.cluster.nodeNames()[4]!);
      const first = await byGraphqlJs(query, c.variables);
      const fromFragments = probes.answersFromFragments();
      const written = await send(query, c.variables);
      const reused = await send(query, c.variables);
      assert.equal(probes.answersFromFragments(), fromFragments + 2, "the first answer is written from fragments, the second reuses them");
      assert.equal(first.json.errors, undefined);
      assert.deepEqual(strip(written), strip(first));
      assert.deepEqual(strip(reused), strip(first));
    });
  }

  test("two sets of variables for one document get each their own nodes' answers", async () => {
    const [os, arch] = await Promise.all([send(CASES[2]!.query, CASES[2]!.variables), send(CASES[3]!.query, CASES[3]!.variables)]);
    assert.notDeepEqual(os.json, arch.json);
    assert.equal(os.body, (await byGraphqlJs(CASES[2]!.query, CASES[2]!.variables)).body);
    assert.equal(arch.body, (await byGraphqlJs(CASES[3]!.query, CASES[3]!.variables)).body);
  });

  test("a viewer and an admin both get the answer from fragments (each role its own store)", async () => {
    const before = probes.answersFromFragments();
    const viewer = await send(FLEET, undefined, TOKENS.viewer);
    const admin = await send(FLEET, undefined, TOKENS.admin);
    assert.equal(probes.answersFromFragments(), before + 2);
    assert.equal(admin.body, viewer.body);
  });

  /**
   * Waits until the watch cache holds a change (a query whose selection is never cached: a
   * fragment spread at the node's top), then asks the fleet's cached document: its very next
   * answer must hold the change and be graphql-js's answer of that moment.
   */
  async function nextAnswerHolds(what: string, seen: (node: any) => boolean, name: string): Promise<any> {
    const probe = `query($n: String!) { node(name: $n) { ...N } } fragment N on Node { labels { key value } podCount requests { cpuMillicores } usage { cpuMillicores memoryBytes } }`;
    for (const to of [url, plainUrl]) await eventually(async () => seen((await send(probe, { n: name }, TOKENS.viewer, to)).json.data?.node), what, 10_000);
    const before = probes.answersFromFragments();
    const next = await send(FLEET);
    assert.equal(probes.answersFromFragments(), before + 1, "answered from fragments");
    const node = next.json.data.nodes.edges.map((e: any) => e.node).find((n: any) => n.name === name);
    assert.ok(seen(node), `${what}: in the very next answer`);
    assert.equal(next.body, (await byGraphqlJs(FLEET)).body);
    return node;
  }

  test("a label change, a pod added and a new metrics sample each show up in the very next answer", async () => {
    const name = cluster.sim.cluster.nodeNames()[2]!;
    await send(FLEET);
    const warm = (await send(FLEET)).json.data.nodes.edges.map((e: any) => e.node).find((n: any) => n.name === name);

    cluster.sim.cluster.update(R.nodes, name, (copy: any) => void (copy.metadata.labels["answer-fragments"] = "changed"));
    await nextAnswerHolds("the label", (n) => n?.labels.some((l: any) => l.key === "answer-fragments" && l.value === "changed"), name);

    const manifest = join(dir, "pod.json");
    writeFileSync(manifest, podManifest(name));
    await cluster.kubectl("create", "-f", manifest);
    const withPod = await nextAnswerHolds("the pod", (n) => n?.podCount === warm.podCount + 1 && n.requests.cpuMillicores === warm.requests.cpuMillicores + 250, name);
    assert.ok(withPod.pods.some((p: any) => p.name === "answer-fragments-probe"));

    // Usage follows the simulated clock: ten minutes on, every node's sample is different.
    cluster.sim.cluster.advance(10 * 60_000);
    await nextAnswerHolds("the new sample", (n) => n?.usage && n.usage.cpuMillicores !== warm.usage.cpuMillicores, name);
  });
});
