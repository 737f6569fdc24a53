import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { R } from "../../src/sim/index.js";
import { Rng } from "../../src/sim/rng.js";
import { graphql, startTestApp } from "../support/app.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const GPU = "nvidia.com/gpu";
const FIGURES = "unit capacity allocatable requests limits headroom";
const REPORT = `query($s: PodShapeInput) { capacityReport(podShape: $s) {
  podShape { cpuMillicores memoryBytes extended { name value quantity } }
  total { pods { requests } extended { name figures { ${FIGURES} } } fit { pods nodesWithRoom nodesExcluded } } } }`;

describe("extended resources: GPUs in the nodes, the pods, the capacity report and the fit", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;

  const report = async (podShape?: unknown) => {
    const { body } = await graphql(url, REPORT, { s: podShape ?? null });
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    return body.data.capacityReport;
  };

  before(async () => {
    // Seed 11 with 12 nodes has two GPU nodes, and the demo's GPU inference pod on one of them.
    sim = await startSimWithKubeconfig({ nodes: 12, podsPerNode: 20, seed: 11, clockSpeed: 0 });
    ({ app, url } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] } }));
    await eventually(async () => (await graphql(url, "{ clusters { synced } }")).body.data?.clusters[0].synced, "sync", 20_000);
  });
  after(async () => {
    await app?.stop();
    await sim?.stop();
  });

  test("Resources.extended of the GPU nodes and of the pod that requests a GPU are what kubectl shows", async () => {
    const nodes = JSON.parse(await sim.kubectl("get", "nodes", "-o", "json")).items as any[];
    const gpuNodes = nodes.filter((n) => n.status.allocatable[GPU]);
    assert.equal(gpuNodes.length, 2);
    const gpuPod = (JSON.parse(await sim.kubectl("get", "pods", "-A", "-l", "app=model-serving", "-o", "json")).items as any[])[0];
    assert.equal(gpuPod.spec.containers[0].resources.requests[GPU], "1");
    for (const n of gpuNodes) {
      const { body } = await graphql(
        url,
        `query($n: String!) { node(name: $n) { capacity { extended { name value quantity } } allocatable { extended { name value quantity } } requests { extended { name value quantity } } } }`,
        { n: n.metadata.name },
      );
      assert.equal(body.errors, undefined);
      const expected = (list: Record<string, string>) =>
        Object.keys(list)
          .filter((k) => !["cpu", "memory", "pods", "ephemeral-storage"].includes(k))
          .sort()
          .map((k) => ({ name: k, value: k.startsWith("hugepages-") ? 0 : Number(list[k]), quantity: list[k] }));
      assert.deepEqual(body.data.node.capacity.extended, expected(n.status.capacity));
      assert.deepEqual(body.data.node.allocatable.extended, expected(n.status.allocatable));
      const requested = gpuPod.spec.nodeName === n.metadata.name ? [{ name: GPU, value: 1, quantity: "1" }] : [];
      assert.deepEqual(body.data.node.requests.extended, requested, n.metadata.name);
    }
  });

  test("capacityReport sums each extended resource: two GPUs, one requested", async () => {
    const gpu = (await report()).total.extended.find((e: any) => e.name === GPU);
    assert.deepEqual(gpu.figures, { unit: "count", capacity: 2, allocatable: 2, requests: 1, limits: 1, headroom: 1 });
    const hugepages = (await report()).total.extended.find((e: any) => e.name === "hugepages-2Mi");
    assert.equal(hugepages.figures.unit, "bytes");
  });

  test("for random GPU shapes (seeded), the report's fit is exactly how many pods the scheduler binds", async () => {
    const cluster = sim.sim.cluster;
    // One GPU node gets four GPUs, so shapes of one and two GPUs pack differently.
    const big = cluster.list(R.nodes).find((n: any) => n.status.allocatable[GPU])!.metadata.name;
    cluster.update(R.nodes, big, (n: any) => void ((n.status.capacity[GPU] = "4"), (n.status.allocatable[GPU] = "4")));
    cluster.tick();
    const bound = () => cluster.list(R.pods).filter((p: any) => p.spec.nodeName && p.status?.phase !== "Succeeded" && p.status?.phase !== "Failed").length;
    const settled = (shape: unknown, pods: number) =>
      eventually(
        async () => {
          const r = await report(shape);
          return r.total.pods.requests === pods && r.total.extended.find((e: any) => e.name === GPU)?.figures.allocatable === 5 && r.total.fit;
        },
        `the cache sees ${pods} pods and 5 GPUs`,
        10_000,
      );
    const rng = new Rng(1515);
    const baseline = bound();
    let checked = 0;
    for (let round = 0; round < 6; round++) {
      const gpus = rng.pick(["1", "2", "3"]);
      const cpu = rng.pick(["250m", "1", "3"]);
      const memory = rng.pick(["512Mi", "2Gi", "12Gi"]);
      const tolerations = round === 0 ? [] : [{ key: GPU, operator: "Exists" }];
      const shape = { cpu, memory, tolerations, extended: [{ name: GPU, quantity: gpus }] };
      const fit = await settled(shape, baseline);
      const created: string[] = [];
      for (let i = 0; i < fit.pods + 2; i++) {
        const name = `gpu-shape-${round}-${i}`;
        created.push(name);
        cluster.create(R.pods, {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name, namespace: "default" },
          spec: { tolerations, containers: [{ name: "app", image: "registry.example/cuda:1", resources: { requests: { cpu, memory, [GPU]: gpus }, limits: { [GPU]: gpus } } }] },
          status: { phase: "Pending" },
        } as any);
      }
      cluster.tick();
      const placed = created.filter((name) => (cluster.get(R.pods, name, "default") as any).spec.nodeName).length;
      assert.equal(placed, fit.pods, `${JSON.stringify(shape)}: the report said ${fit.pods} fit, the scheduler bound ${placed}`);
      if (round === 0) assert.equal(placed, 0, "without tolerating the GPU taint no GPU pod goes anywhere");
      for (const name of created) cluster.store.remove(R.pods, `default/${name}`);
      checked += placed;
    }
    assert.ok(checked > 0, "some GPU shapes fitted");
    const r = await report({ cpu: "1", memory: "1Gi", extended: [{ name: GPU, quantity: "2" }] });
    assert.deepEqual(r.podShape, { cpuMillicores: 1000, memoryBytes: 1024 ** 3, extended: [{ name: GPU, value: 2, quantity: "2" }] });
  });

  test("a bad extended resource in podShape is BAD_USER_INPUT naming it", async () => {
    const cases: [unknown, RegExp][] = [
      [[{ name: "cpu", quantity: "1" }], /podShape.extended\[0\].name: "cpu" is not an extended resource/],
      [[{ name: GPU, quantity: "0.5" }], /podShape.extended\[0\].quantity: "0.5" must be a whole number for nvidia.com\/gpu/],
      [[{ name: GPU, quantity: "-1" }], /must not be negative/],
      [[{ name: GPU, quantity: "lots" }], /is not a Kubernetes quantity/],
      [[{ name: "bad name!", quantity: "1" }], /is not a resource name/],
      [
        [
          { name: GPU, quantity: "1" },
          { name: GPU, quantity: "2" },
        ],
        /podShape.extended\[1\].name: "nvidia.com\/gpu" is named twice/,
      ],
    ];
    for (const [extended, message] of cases) {
      const { body } = await graphql(url, REPORT, { s: { cpu: "1", memory: "1Gi", extended } });
      assert.equal(body.errors?.[0]?.extensions?.code, "BAD_USER_INPUT", JSON.stringify(extended));
      assert.match(body.errors[0].message, message);
    }
    const hugepages = await report({ cpu: "1", memory: "1Gi", extended: [{ name: "hugepages-2Mi", quantity: "3Mi" }] });
    assert.equal(hugepages.total.fit.pods, 0, "no node has hugepages allocatable");
  });
});
