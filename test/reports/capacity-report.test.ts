import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { bytes, cpuMillicores } from "../../src/k8s/quantity.js";
import { R } from "../../src/sim/index.js";
import { nodeMetrics } from "../../src/sim/metrics.js";
import { graphql, startTestApp } from "../support/app.js";
import { Rng } from "../../src/sim/rng.js";
import { deadClusterKubeconfig, eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";
import { defineNode, definePod, emptySim } from "./known-cluster.js";

const Gi = 1024 ** 3;
const Mi = 1024 ** 2;

const RESOURCE = `unit capacity allocatable requests limits usage headroom requestRatio overcommitRatio usageRatio`;
const GROUP = `key { dimension value } nodeCount readyNodeCount schedulableNodeCount
  cpu { ${RESOURCE} } memory { ${RESOURCE} } pods { ${RESOURCE} } ephemeralStorage { ${RESOURCE} }
  fit { pods nodesWithRoom nodesExcluded }`;
const REPORT = `query($cluster: String, $filter: NodeFilter, $groupBy: [ReportGrouping!], $podShape: PodShapeInput, $since: DateTime, $until: DateTime) {
  capacityReport(cluster: $cluster, filter: $filter, groupBy: $groupBy, podShape: $podShape, trendsSince: $since, trendsUntil: $until) {
    generatedAt groupBy incompleteClusters podShape { cpuMillicores memoryBytes }
    total { ${GROUP} } groups { ${GROUP} } } }`;

const m6 = { capacity: { cpu: "4", memory: "16Gi", pods: "10", "ephemeral-storage": "100Gi" }, allocatable: { cpu: "3800m", memory: "15Gi", pods: "10", "ephemeral-storage": "90Gi" } };

/**
 * Five nodes, each different in one way that matters:
 *   general-a-1  Ready, schedulable, a PreferNoSchedule taint (does not keep pods off)
 *   general-b-1  cordoned
 *   gpu-a-1      a NoSchedule taint nvidia.com/gpu=present
 *   general-a-2  NotReady (so no metrics either)
 *   cp-a-1       control plane: its NoSchedule taint, and no node-pool label
 */
function buildKnownCluster(sim: SimWithKubeconfig): void {
  const c = sim.sim.cluster;
  defineNode(c, { name: "general-a-1", pool: "general", zone: "eu-west-1a", instanceType: "m.large", role: "worker", ...m6, taints: [{ key: "example.com/prefer-not", effect: "PreferNoSchedule" }] });
  defineNode(c, { name: "general-b-1", pool: "general", zone: "eu-west-1b", instanceType: "m.large", role: "worker", ...m6, unschedulable: true });
  defineNode(c, {
    name: "gpu-a-1",
    pool: "gpu",
    zone: "eu-west-1a",
    instanceType: "g.xlarge",
    role: "worker",
    capacity: { cpu: "8", memory: "32Gi", pods: "20", "ephemeral-storage": "200Gi" },
    allocatable: { cpu: "7800m", memory: "30Gi", pods: "20", "ephemeral-storage": "180Gi" },
    taints: [{ key: "nvidia.com/gpu", value: "present", effect: "NoSchedule" }],
  });
  defineNode(c, { name: "general-a-2", pool: "general", zone: "eu-west-1a", instanceType: "m.large", role: "worker", ...m6, notReady: true });
  defineNode(c, {
    name: "cp-a-1",
    zone: "eu-west-1a",
    instanceType: "m.medium",
    role: "control-plane",
    capacity: { cpu: "2", memory: "8Gi", pods: "10", "ephemeral-storage": "50Gi" },
    allocatable: { cpu: "1800m", memory: "6Gi", pods: "10", "ephemeral-storage": "45Gi" },
    taints: [{ key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule" }],
  });
  definePod(c, { name: "p1", node: "general-a-1", requests: { cpu: "1", memory: "2Gi" }, limits: { cpu: "2", memory: "4Gi" } });
  definePod(c, { name: "p2", node: "general-a-1", phase: "Pending", requests: { cpu: "500m", memory: "1Gi" } });
  definePod(c, { name: "p3", node: "general-a-1", phase: "Succeeded", requests: { cpu: "2", memory: "8Gi" } });
  definePod(c, { name: "p4", node: "general-a-1", requests: { cpu: "250m", memory: "512Mi", "ephemeral-storage": "1Gi" }, limits: { "ephemeral-storage": "2Gi" } });
  definePod(c, { name: "p5", node: "general-b-1", requests: { cpu: "1", memory: "1Gi" }, limits: { cpu: "1", memory: "1Gi" } });
  definePod(c, { name: "p6", node: "gpu-a-1", requests: { cpu: "4", memory: "4Gi" }, limits: { cpu: "8", memory: "16Gi" } });
  definePod(c, { name: "p7", node: "cp-a-1", requests: { cpu: "500m", memory: "1Gi" } });
  definePod(c, { name: "p8", node: "general-a-2", phase: "Failed", requests: { cpu: "100m", memory: "100Mi" } });
}

/** Usage as the simulator's metrics API serves it (frozen clock: it does not move), summed over `nodes`. */
function simUsage(sim: SimWithKubeconfig, nodes: string[]): { cpu: number; memory: number } | null {
  let sum: { cpu: number; memory: number } | null = null;
  for (const name of nodes) {
    const metrics = nodeMetrics(sim.sim.cluster, sim.sim.cluster.get(R.nodes, name)!) as { usage: { cpu: string; memory: string } } | undefined;
    if (!metrics) continue;
    sum ??= { cpu: 0, memory: 0 };
    sum.cpu += cpuMillicores(metrics.usage.cpu);
    sum.memory += bytes(metrics.usage.memory);
  }
  return sum;
}

/** A ResourceCapacity computed from its parts, as the schema documents it. */
function resource(unit: string, capacity: number, allocatable: number, requests: number, limits: number, usage: number | null) {
  return {
    unit,
    capacity,
    allocatable,
    requests,
    limits,
    usage,
    headroom: allocatable - requests,
    requestRatio: allocatable ? requests / allocatable : null,
    overcommitRatio: allocatable ? limits / allocatable : null,
    usageRatio: usage === null || !allocatable ? null : usage / allocatable,
  };
}

describe("capacity report of a known cluster", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;
  const report = async (variables: Record<string, unknown> = {}) => {
    const { body } = await graphql(url, REPORT, variables);
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    return body.data.capacityReport;
  };
  const errorOf = async (variables: Record<string, unknown>) => {
    const { body } = await graphql(url, REPORT, variables);
    assert.equal(body.errors?.length, 1, JSON.stringify(body));
    return { code: body.errors![0].extensions.code, message: body.errors![0].message as string };
  };

  before(async () => {
    sim = await emptySim();
    buildKnownCluster(sim);
    ({ app, url } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] } }, { clusterTuning: { metricsIntervalMs: 100 } }));
    await eventually(async () => {
      const { body } = await graphql(url, "{ clusters { synced metricsAvailable nodeCount } }");
      const c = body.data?.clusters[0];
      return c?.synced && c.metricsAvailable && c.nodeCount === 5;
    }, "sync");
  });
  after(async () => {
    await app.stop();
    await sim.stop();
  });

  test("the total: node counts, capacity, allocatable, requests, limits, usage, headroom and ratios of each resource", async () => {
    const r = await report();
    const all = ["general-a-1", "general-b-1", "gpu-a-1", "general-a-2", "cp-a-1"];
    const usage = simUsage(sim, all)!;
    assert.ok(usage.cpu > 0, "the simulator reports usage");
    // Requests count the non-terminated pods: p1 + p2 (Pending, bound) + p4 on general-a-1, p5, p6, p7; not p3 (Succeeded) or p8 (Failed).
    const expected = {
      key: [],
      nodeCount: 5,
      readyNodeCount: 4,
      schedulableNodeCount: 4,
      cpu: resource("millicores", 3 * 4000 + 8000 + 2000, 3 * 3800 + 7800 + 1800, 1000 + 500 + 250 + 1000 + 4000 + 500, 2000 + 1000 + 8000, usage.cpu),
      memory: resource("bytes", (3 * 16 + 32 + 8) * Gi, (3 * 15 + 30 + 6) * Gi, 2 * Gi + 1 * Gi + 512 * Mi + 1 * Gi + 4 * Gi + 1 * Gi, 4 * Gi + 1 * Gi + 16 * Gi, usage.memory),
      pods: resource("pods", 3 * 10 + 20 + 10, 3 * 10 + 20 + 10, 6, 6, null),
      ephemeralStorage: resource("bytes", (3 * 100 + 200 + 50) * Gi, (3 * 90 + 180 + 45) * Gi, 1 * Gi, 2 * Gi, null),
      fit: null,
    };
    assert.deepEqual(r.total, expected);
    assert.deepEqual(r.groups, [expected], "without groupBy there is one group: everything");
    assert.deepEqual(r.groupBy, []);
    assert.deepEqual(r.incompleteClusters, []);
    assert.equal(r.podShape, null);
  });

  test("grouped by node pool: a node without the label is in the null group, listed last", async () => {
    const r = await report({ groupBy: [{ by: "NODE_POOL" }] });
    assert.deepEqual(r.groupBy, ["NODE_POOL"]);
    assert.deepEqual(
      r.groups.map((g: any) => [g.key, g.nodeCount, g.readyNodeCount, g.schedulableNodeCount, g.cpu.allocatable, g.cpu.requests, g.memory.limits, g.pods.requests, g.cpu.usage]),
      [
        [[{ dimension: "NODE_POOL", value: "general" }], 3, 2, 2, 3 * 3800, 1750 + 1000, 4 * Gi + 1 * Gi, 4, simUsage(sim, ["general-a-1", "general-b-1", "general-a-2"])!.cpu],
        [[{ dimension: "NODE_POOL", value: "gpu" }], 1, 1, 1, 7800, 4000, 16 * Gi, 1, simUsage(sim, ["gpu-a-1"])!.cpu],
        [[{ dimension: "NODE_POOL", value: null }], 1, 1, 1, 1800, 500, 0, 1, simUsage(sim, ["cp-a-1"])!.cpu],
      ],
    );
  });

  test("grouped by zone then role, by instance type, by cluster, and by a label key", async () => {
    const keys = async (groupBy: unknown[]) => (await report({ groupBy })).groups.map((g: any) => [g.key.map((k: any) => k.value), g.nodeCount]);
    assert.deepEqual(await keys([{ by: "ZONE" }, { by: "ROLE" }]), [
      [["eu-west-1a", "control-plane"], 1],
      [["eu-west-1a", "worker"], 3],
      [["eu-west-1b", "worker"], 1],
    ]);
    assert.deepEqual(await keys([{ by: "INSTANCE_TYPE" }]), [
      [["g.xlarge"], 1],
      [["m.large"], 3],
      [["m.medium"], 1],
    ]);
    assert.deepEqual(await keys([{ by: "CLUSTER" }]), [[["sim"], 5]]);
    const byLabel = await report({ groupBy: [{ by: "LABEL", labelKey: "node-pool" }] });
    assert.deepEqual(byLabel.groupBy, ["label:node-pool"]);
    assert.deepEqual(
      byLabel.groups.map((g: any) => g.key),
      [[{ dimension: "label:node-pool", value: "general" }], [{ dimension: "label:node-pool", value: "gpu" }], [{ dimension: "label:node-pool", value: null }]],
    );
  });

  test("a filter narrows the nodes covered", async () => {
    const r = await report({ filter: { ready: true, labelSelector: "node-pool" } });
    assert.equal(r.total.nodeCount, 3);
    assert.equal(r.total.cpu.allocatable, 2 * 3800 + 7800);
  });

  test("pods that fit: only Ready, schedulable nodes whose NoSchedule/NoExecute taints the shape tolerates, counted on each node's free space", async () => {
    const shape = { cpu: "500m", memory: "1Gi" };
    // general-a-1: free cpu 3800-1750 = 2050 -> 4, memory 15Gi-3.5Gi -> 11, slots 10-3 = 7: 4 fit.
    // gpu-a-1 (when tolerated): cpu 7800-4000 = 3800 -> 7, memory 26Gi -> 26, slots 19: 7 fit.
    // cp-a-1 (when tolerated): cpu 1800-500 = 1300 -> 2, memory 5Gi -> 5, slots 9: 2 fit.
    const fit = async (podShape: unknown, groupBy?: unknown[]) => await report({ podShape, ...(groupBy ? { groupBy } : {}) });
    const plain = await fit(shape);
    assert.deepEqual(plain.podShape, { cpuMillicores: 500, memoryBytes: Gi });
    assert.deepEqual(plain.total.fit, { pods: 4, nodesWithRoom: 1, nodesExcluded: 4 });

    const gpu = await fit({ ...shape, tolerations: [{ key: "nvidia.com/gpu", operator: "Exists" }] });
    assert.deepEqual(gpu.total.fit, { pods: 4 + 7, nodesWithRoom: 2, nodesExcluded: 3 });
    const wrongValue = await fit({ ...shape, tolerations: [{ key: "nvidia.com/gpu", value: "absent" }] });
    assert.deepEqual(wrongValue.total.fit, { pods: 4, nodesWithRoom: 1, nodesExcluded: 4 }, "Equal needs the taint's value");
    const otherEffect = await fit({ ...shape, tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoExecute" }] });
    assert.deepEqual(otherEffect.total.fit, { pods: 4, nodesWithRoom: 1, nodesExcluded: 4 }, "a NoExecute toleration does not cover a NoSchedule taint");

    // Tolerating everything still leaves out the cordoned node and the NotReady one.
    const everything = await fit({ ...shape, tolerations: [{ operator: "Exists" }] }, [{ by: "NODE_POOL" }]);
    assert.deepEqual(everything.total.fit, { pods: 4 + 7 + 2, nodesWithRoom: 3, nodesExcluded: 2 });
    assert.deepEqual(
      everything.groups.map((g: any) => g.fit),
      [
        { pods: 4, nodesWithRoom: 1, nodesExcluded: 2 },
        { pods: 7, nodesWithRoom: 1, nodesExcluded: 0 },
        { pods: 2, nodesWithRoom: 1, nodesExcluded: 0 },
      ],
    );

    // Pod slots bound: general-a-1 has 7 free slots, tiny pods fill them before cpu or memory.
    const tiny = await fit({ cpu: "1m", memory: "1Mi" });
    assert.deepEqual(tiny.total.fit, { pods: 7, nodesWithRoom: 1, nodesExcluded: 4 });
    // Too big for any free space: no node has room, none is excluded for that.
    const huge = await fit({ cpu: "3", memory: "1Gi", tolerations: [{ operator: "Exists" }] });
    assert.deepEqual(huge.total.fit, { pods: 1, nodesWithRoom: 1, nodesExcluded: 2 }, "only gpu-a-1 has 3 cores free");
  });

  test("bad input is BAD_USER_INPUT, an unknown cluster NOT_FOUND", async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ podShape: { cpu: "lots", memory: "1Gi" } }, "BAD_USER_INPUT", /podShape.cpu: "lots" is not a Kubernetes quantity/],
      [{ podShape: { cpu: "1", memory: "-1Gi" } }, "BAD_USER_INPUT", /podShape.memory: "-1Gi" must not be negative/],
      [{ podShape: { cpu: "1", memory: "1Gi", tolerations: [{ key: "a", operator: "Exists", value: "b" }] } }, "BAD_USER_INPUT", /operator Exists takes no value/],
      [{ podShape: { cpu: "1", memory: "1Gi", tolerations: [{ value: "b" }] } }, "BAD_USER_INPUT", /an empty key needs operator Exists/],
      [{ podShape: { cpu: "1", memory: "1Gi", tolerations: [{ key: "a", operator: "Lt" }] } }, "BAD_USER_INPUT", /"Lt" is not Equal or Exists/],
      [{ podShape: { cpu: "1", memory: "1Gi", tolerations: [{ key: "a", effect: "NoWay" }] } }, "BAD_USER_INPUT", /"NoWay" is not NoSchedule/],
      [{ groupBy: [{ by: "LABEL" }] }, "BAD_USER_INPUT", /groupBy LABEL needs a labelKey/],
      [{ groupBy: [{ by: "ZONE" }, { by: "ZONE" }] }, "BAD_USER_INPUT", /names ZONE twice/],
      [{ filter: { labelSelector: "a in (" } }, "BAD_USER_INPUT", /filter.labelSelector/],
      [{ since: "2026-01-02T00:00:00Z", until: "2026-01-01T00:00:00Z" }, "BAD_USER_INPUT", /trendsUntil .* is before trendsSince/],
      [{ until: "2026-01-01T00:00:00Z" }, "BAD_USER_INPUT", /trendsUntil needs trendsSince/],
      [{ cluster: "nope" }, "NOT_FOUND", /cluster "nope" is not configured/],
    ];
    for (const [variables, code, message] of cases) {
      const error = await errorOf(variables);
      assert.equal(error.code, code, JSON.stringify(variables));
      assert.match(error.message, message);
    }
  });
});

describe("capacity report with an unreachable cluster", () => {
  test("its name is in incompleteClusters and the other cluster's figures are served", async () => {
    const sim = await emptySim("east");
    buildKnownCluster(sim);
    const dead = deadClusterKubeconfig();
    const { app, url } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath, dead], contexts: [] } });
    try {
      await eventually(async () => (await graphql(url, "{ clusters { synced lastError } }")).body.data?.clusters.every((c: any) => c.synced || c.lastError), "east synced, dead failed");
      const all = (await graphql(url, REPORT, { groupBy: [{ by: "CLUSTER" }] })).body;
      assert.equal(all.errors, undefined);
      assert.deepEqual(all.data.capacityReport.incompleteClusters, ["dead"]);
      assert.deepEqual(
        all.data.capacityReport.groups.map((g: any) => [g.key[0].value, g.nodeCount]),
        [["east", 5]],
      );
      const one = (await graphql(url, REPORT, { cluster: "dead" })).body;
      assert.equal(one.errors, undefined, "asking for the unreachable cluster is not an error");
      assert.deepEqual(one.data.capacityReport.incompleteClusters, ["dead"]);
      assert.equal(one.data.capacityReport.total.nodeCount, 0);
    } finally {
      await app.stop();
      await sim.stop();
    }
  });
});

describe("pods that fit agree with the simulator's scheduler placing them", () => {
  test("for random shapes (seeded), the report's count is exactly how many pods the scheduler binds", async () => {
    const sim = await startSimWithKubeconfig({ nodes: 10, seed: 77, clockSpeed: 0 });
    const cluster = sim.sim.cluster;
    const workers = cluster.nodeNames().filter((name) => !name.startsWith("control-plane"));
    cluster.update(R.nodes, workers[0]!, (n: any) => void (n.spec.unschedulable = true));
    cluster.setNodeCondition(workers[1]!, "Ready", "False");
    cluster.tick();
    const { app, url } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] } });
    const bound = () => cluster.list(R.pods).filter((p: any) => p.spec.nodeName && p.status?.phase !== "Succeeded" && p.status?.phase !== "Failed").length;
    const fitOf = async (podShape: unknown) => {
      const { body } = await graphql(url, `query($s: PodShapeInput) { capacityReport(podShape: $s) { total { pods { requests } fit { pods nodesWithRoom nodesExcluded } } } }`, { s: podShape });
      assert.equal(body.errors, undefined, JSON.stringify(body.errors));
      return body.data.capacityReport.total as { pods: { requests: number }; fit: { pods: number; nodesWithRoom: number; nodesExcluded: number } };
    };
    /** The report once the service's cache holds exactly `pods` bound pods. */
    const settled = (podShape: unknown, pods: number) =>
      eventually(
        async () => {
          const total = await fitOf(podShape);
          return total.pods.requests === pods && total.fit;
        },
        `the cache sees ${pods} pods`,
        10_000,
      );
    try {
      await eventually(async () => (await graphql(url, "{ clusters { synced } }")).body.data?.clusters[0].synced, "sync");
      const rng = new Rng(4242);
      const TOLERATIONS = [{ operator: "Exists" }, { key: "nvidia.com/gpu", operator: "Exists" }, { key: "node-role.kubernetes.io/control-plane", operator: "Exists", effect: "NoSchedule" }];
      const baseline = bound();
      let checked = 0;
      for (let round = 0; round < 5; round++) {
        const cpu = rng.pick(["250m", "500m", "1", "2"]);
        const memory = rng.pick(["256Mi", "1Gi", "4Gi"]);
        const tolerations = TOLERATIONS.filter(() => rng.chance(0.4));
        const shape = { cpu, memory, tolerations };
        const fit = await settled(shape, baseline);
        assert.equal(fit.nodesExcluded >= 2, true, "the cordoned and the NotReady node are left out");
        const extra = 3;
        const created: string[] = [];
        for (let i = 0; i < fit.pods + extra; i++) {
          const name = `shape-${round}-${i}`;
          created.push(`default/${name}`);
          cluster.create(R.pods, {
            apiVersion: "v1",
            kind: "Pod",
            metadata: { name, namespace: "default" },
            spec: { tolerations, containers: [{ name: "app", image: "registry.example/app:1", resources: { requests: { cpu, memory } } }] },
            status: { phase: "Pending" },
          } as any);
        }
        cluster.tick();
        const placed = created.filter((key) => (cluster.get(R.pods, key.split("/")[1]!, "default") as any).spec.nodeName).length;
        assert.equal(placed, fit.pods, `${JSON.stringify(shape)}: the report said ${fit.pods} fit, the scheduler bound ${placed}`);
        assert.deepEqual((await settled(shape, baseline + placed)).pods, 0, "once they are placed, no more fit");
        for (const key of created) cluster.store.remove(R.pods, key);
        checked += placed;
      }
      assert.ok(checked > 0, "some shapes fitted somewhere");
    } finally {
      await app.stop();
      await sim.stop();
    }
  });
});
