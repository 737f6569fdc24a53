import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { CachedPod } from "../../src/cluster/model.js";
import { stripPod } from "../../src/cluster/strip.js";
import { resourcesView, sumPodResources, usageView } from "../../src/inventory/resources.js";
import { cachedPod } from "../support/cached-objects.js";

function pod(name: string, phase: string, requests: Record<string, number>, limits: Record<string, number> = {}): CachedPod {
  return cachedPod(name, { nodeName: "n1", phase, requests, limits });
}

describe("sumPodResources counts what kubectl describe node counts", () => {
  test("terminated pods (Succeeded, Failed) are excluded; Pending, Unknown and phase-less pods count", () => {
    const totals = sumPodResources([
      pod("running", "Running", { cpu: 100, memory: 1024 }, { cpu: 200 }),
      pod("pending", "Pending", { cpu: 50 }),
      pod("unknown", "Unknown", { memory: 1024 }, { memory: 4096 }),
      pod("no-phase-yet", "", { cpu: 1 }),
      pod("done", "Succeeded", { cpu: 1000, memory: 1 << 30 }, { cpu: 1000 }),
      pod("crashed", "Failed", { cpu: 1000 }, { cpu: 1000 }),
    ]);
    assert.deepEqual(totals, {
      requests: { cpu: 151, memory: 2048 },
      limits: { cpu: 200, memory: 4096 },
      podCount: 4,
    });
  });

  test("no pods: empty sums and zero count", () => {
    assert.deepEqual(sumPodResources([]), { requests: {}, limits: {}, podCount: 0 });
  });

  test("a resource appears only if some counted pod has it", () => {
    const totals = sumPodResources([pod("a", "Running", { cpu: 1 }), pod("b", "Failed", { "nvidia.com/gpu": 1 })]);
    assert.deepEqual(totals.requests, { cpu: 1 });
  });

  test("kubectl describe node's Allocated resources for a real mix of pods", () => {
    // coredns (100m/70Mi, limit 170Mi), kube-proxy (nothing), an app with an init container
    // and a sidecar, and a completed job: kubectl shows cpu 900m, memory 326Mi; limits memory 426Mi.
    const raw = (name: string, phase: string, spec: object) => ({ metadata: { name }, spec, status: { phase } });
    const pods = [
      raw("coredns", "Running", { containers: [{ name: "c", resources: { requests: { cpu: "100m", memory: "70Mi" }, limits: { memory: "170Mi" } } }] }),
      raw("kube-proxy", "Running", { containers: [{ name: "c" }] }),
      raw("app", "Running", {
        initContainers: [
          { name: "mesh", restartPolicy: "Always", resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { memory: "128Mi" } } },
          { name: "migrate", resources: { requests: { cpu: "700m" } } },
        ],
        containers: [{ name: "c", resources: { requests: { cpu: "250m", memory: "128Mi" }, limits: { memory: "128Mi" } } }],
      }),
      raw("job", "Succeeded", { containers: [{ name: "c", resources: { requests: { cpu: "2" } } }] }),
    ].map((p) => stripPod("c1", p));
    const totals = sumPodResources(pods);
    assert.equal(totals.podCount, 3);
    const requests = resourcesView(totals.requests);
    const limits = resourcesView(totals.limits);
    // app: max(250 + 100, 100 + 700) = 800m; plus coredns 100m.
    assert.deepEqual(requests.quantities, [
      { key: "cpu", value: "900m" },
      { key: "memory", value: "326Mi" },
    ]);
    assert.deepEqual(limits.quantities, [{ key: "memory", value: "426Mi" }]);
  });
});

describe("resourcesView", () => {
  test("a node's capacity keeps Kubernetes' text verbatim, sorted by key", () => {
    const view = resourcesView({
      pods: "110",
      memory: "16374584Ki",
      cpu: "4",
      "hugepages-2Mi": "0",
      "ephemeral-storage": "101430960Ki",
    });
    assert.deepEqual(view, {
      cpuMillicores: 4000,
      memoryBytes: 16374584 * 1024,
      pods: 110,
      ephemeralStorageBytes: 101430960 * 1024,
      quantities: [
        { key: "cpu", value: "4" },
        { key: "ephemeral-storage", value: "101430960Ki" },
        { key: "hugepages-2Mi", value: "0" },
        { key: "memory", value: "16374584Ki" },
        { key: "pods", value: "110" },
      ],
      extended: [{ name: "hugepages-2Mi", value: 0, quantity: "0" }],
    });
  });

  test("allocatable with millicores and decimal memory", () => {
    const view = resourcesView({ cpu: "3800m", memory: "15.5G", pods: "58" });
    assert.equal(view.cpuMillicores, 3800);
    assert.equal(view.memoryBytes, 15_500_000_000);
    assert.equal(view.ephemeralStorageBytes, null);
    assert.deepEqual(view.quantities[0], { key: "cpu", value: "3800m" });
  });

  test("cpuMillicores rounds a sub-millicore quantity up, as Go's MilliValue", () => {
    assert.equal(resourcesView({ cpu: "0.0001" }).cpuMillicores, 1);
    assert.equal(resourcesView({ cpu: "1001u" }).cpuMillicores, 2);
  });

  test("computed sums are formatted canonically", () => {
    const view = resourcesView({ cpu: 1500, memory: 536870912, "ephemeral-storage": 1000, "nvidia.com/gpu": 2, "hugepages-1Gi": 2 * 1024 ** 3 });
    assert.deepEqual(view, {
      cpuMillicores: 1500,
      memoryBytes: 536870912,
      pods: null,
      ephemeralStorageBytes: 1000,
      quantities: [
        { key: "cpu", value: "1500m" },
        { key: "ephemeral-storage", value: "1000" },
        { key: "hugepages-1Gi", value: "2Gi" },
        { key: "memory", value: "512Mi" },
        { key: "nvidia.com/gpu", value: "2" },
      ],
      extended: [
        { name: "hugepages-1Gi", value: 2 * 1024 ** 3, quantity: "2Gi" },
        { name: "nvidia.com/gpu", value: 2, quantity: "2" },
      ],
    });
  });

  test("extended resources as a node writes them: values in base units, quantities verbatim", () => {
    const view = resourcesView({ cpu: "8", "nvidia.com/gpu": "4", "hugepages-2Mi": "1Gi", "example.com/fpga": "2k", pods: "110", "ephemeral-storage": "1Ti", memory: "1Gi" });
    assert.deepEqual(view.extended, [
      { name: "example.com/fpga", value: 2000, quantity: "2k" },
      { name: "hugepages-2Mi", value: 1024 ** 3, quantity: "1Gi" },
      { name: "nvidia.com/gpu", value: 4, quantity: "4" },
    ]);
  });

  const canonical: [string, Record<string, number>, string][] = [
    ["whole cores", { cpu: 2000 }, "2"],
    ["zero cpu", { cpu: 0 }, "0"],
    ["odd millicores", { cpu: 1 }, "1m"],
    ["memory not a multiple of 1024", { memory: 129_000_000 }, "129000000"],
    ["1536Mi", { memory: 1536 * 1024 * 1024 }, "1536Mi"],
  ];
  for (const [name, amounts, text] of canonical) {
    test(`canonical text: ${name} → ${text}`, () => assert.equal(resourcesView(amounts).quantities[0]!.value, text));
  }

  test("nothing at all: cpu and memory 0, pods and ephemeral storage null", () => {
    assert.deepEqual(resourcesView({}), { cpuMillicores: 0, memoryBytes: 0, pods: null, ephemeralStorageBytes: null, quantities: [], extended: [] });
  });
});

describe("usageView computes percentages as kubectl top node", () => {
  // [what, usage (millicores, bytes), allocatable, exact cpu %, kubectl cpu %, exact mem %, kubectl mem %]
  // The exact values are float64(usage milli) / float64(allocatable milli) * 100, kubectl's formula.
  const cases: [string, [number, number], Record<string, string>, number, number, number, number][] = [
    ["a typical worker", [250, 2147483648], { cpu: "3800m", memory: "15223608Ki" }, (250 / 3800) * 100, 6, ((2147483648 * 1000) / (15223608 * 1024 * 1000)) * 100, 13],
    ["exactly half", [2000, 8 * 1024 ** 3], { cpu: "4", memory: "16Gi" }, 50, 50, 50, 50],
    ["overcommitted beyond allocatable", [5000, 17 * 1024 ** 3], { cpu: "4", memory: "16Gi" }, 125, 125, 106.25, 106],
    ["idle", [0, 0], { cpu: "2", memory: "1Gi" }, 0, 0, 0, 0],
    // Go's float64 arithmetic gives 99.97500000000001 here; so do we, bit for bit.
    ["99.97% stays below 100 when truncated", [3999, 0], { cpu: "4000m", memory: "1Gi" }, 99.97500000000001, 99, 0, 0],
    ["no allocatable entry: kubectl prints none, we give 0", [100, 100], {}, 0, 0, 0, 0],
    ["zero allocatable: no division by zero", [100, 100], { cpu: "0", memory: "0" }, 0, 0, 0, 0],
  ];
  for (const [name, [cpu, memory], allocatable, cpuPct, kubectlCpu, memPct, kubectlMem] of cases) {
    test(name, () => {
      const view = usageView({ cpuMillicores: cpu, memoryBytes: memory, timestamp: "2026-01-01T00:00:30Z" }, allocatable);
      assert.deepEqual(view, {
        cpuMillicores: cpu,
        memoryBytes: memory,
        cpuPercent: cpuPct,
        memoryPercent: memPct,
        timestamp: new Date("2026-01-01T00:00:30Z"),
      });
      // We return the exact ratio; kubectl prints it truncated.
      assert.equal(Math.trunc(view.cpuPercent), kubectlCpu);
      assert.equal(Math.trunc(view.memoryPercent), kubectlMem);
    });
  }
});
