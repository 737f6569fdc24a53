import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { CachedNode, Taint } from "../../src/cluster/model.js";
import { AppError } from "../../src/graphql/errors.js";
import { sumPodResources } from "../../src/inventory/resources.js";
import { CapacityTally, nodeAmounts } from "../../src/reports/capacity-report.js";
import { compilePodShape, podsThatFit, toleratesNode, toleratesTaint, type PodShapeInput, type Toleration } from "../../src/reports/pod-fit.js";
import { Rng } from "../../src/sim/rng.js";
import { tolerates as simTolerates } from "../../src/sim/workloads.js";
import { cachedNode, cachedPod } from "../support/cached-objects.js";

const t = (key: string, operator: "Equal" | "Exists", value = "", effect = ""): Toleration => ({ key, operator, value, effect });

describe("toleration matching, as Kubernetes' Toleration.ToleratesTaint", () => {
  const gpu: Taint = { key: "gpu", value: "present", effect: "NoSchedule" };
  const cases: [string, Toleration, Taint, boolean][] = [
    ["Equal with the same key, value and effect", t("gpu", "Equal", "present", "NoSchedule"), gpu, true],
    ["Equal with another value", t("gpu", "Equal", "absent"), gpu, false],
    ["Equal with no value against a taint with one", t("gpu", "Equal"), gpu, false],
    ["Equal with no value against a taint without one", t("dedicated", "Equal"), { key: "dedicated", effect: "NoSchedule" }, true],
    ["Exists with the key, any value", t("gpu", "Exists"), gpu, true],
    ["Exists with another key", t("tpu", "Exists"), gpu, false],
    ["Exists with an empty key: every taint", t("", "Exists"), gpu, true],
    ["an effect given must be the taint's", t("gpu", "Exists", "", "NoExecute"), gpu, false],
    ["an empty effect matches every effect", t("gpu", "Exists", "", ""), { ...gpu, effect: "NoExecute" }, true],
    ["empty key and effect NoExecute: every NoExecute taint", t("", "Exists", "", "NoExecute"), { key: "x", effect: "NoExecute" }, true],
  ];
  for (const [name, toleration, taint, expected] of cases) {
    test(name, () => assert.equal(toleratesTaint(toleration, taint), expected));
  }

  test("a node is open to the shape when each NoSchedule and NoExecute taint is tolerated; PreferNoSchedule never blocks", () => {
    const taints: Taint[] = [
      { key: "a", effect: "NoSchedule" },
      { key: "b", effect: "NoExecute" },
      { key: "c", effect: "PreferNoSchedule" },
    ];
    assert.equal(toleratesNode([], [{ key: "c", effect: "PreferNoSchedule" }]), true);
    assert.equal(toleratesNode([t("a", "Exists")], taints), false, "b is not tolerated");
    assert.equal(toleratesNode([t("a", "Exists"), t("b", "Exists")], taints), true);
    assert.equal(toleratesNode([t("", "Exists")], taints), true);
    assert.equal(toleratesNode([], []), true);
  });
});

describe("pod shapes", () => {
  test("quantities are read as Kubernetes reads them; the default operator is Equal", () => {
    assert.deepEqual(
      compilePodShape({
        cpu: "1.5",
        memory: "1Gi",
        tolerations: [
          { key: "gpu", value: "x" },
          { operator: "Exists", effect: "NoSchedule" },
        ],
      }),
      {
        cpuMillicores: 1500,
        memoryBytes: 1024 ** 3,
        tolerations: [t("gpu", "Equal", "x"), t("", "Exists", "", "NoSchedule")],
      },
    );
    assert.deepEqual(compilePodShape({ cpu: "100m", memory: "1G" }), { cpuMillicores: 100, memoryBytes: 1e9, tolerations: [] });
    assert.equal(compilePodShape({ cpu: "0.0001", memory: "0" }).cpuMillicores, 1, "rounded up, as MilliValue");
  });

  const bad: [string, PodShapeInput, RegExp][] = [
    ["a cpu that is no quantity", { cpu: "two", memory: "1Gi" }, /podShape.cpu: "two"/],
    ["a negative memory", { cpu: "1", memory: "-1" }, /podShape.memory: "-1" must not be negative/],
    ["a malformed toleration key", { cpu: "1", memory: "1", tolerations: [{ key: "bad key!" }] }, /podShape.tolerations\[0\].key "bad key!"/],
    ["an unknown effect", { cpu: "1", memory: "1", tolerations: [{ key: "k", effect: "Never" }] }, /podShape.tolerations\[0\].effect/],
  ];
  for (const [name, input, message] of bad) {
    test(`${name} is BAD_USER_INPUT`, () => {
      assert.throws(
        () => compilePodShape(input),
        (error: unknown) => error instanceof AppError && error.extensions.code === "BAD_USER_INPUT" && message.test(error.message),
      );
    });
  }

  const fits: [string, { cpuMillicores: number; memoryBytes: number; pods: number }, { cpuMillicores: number; memoryBytes: number }, number][] = [
    ["cpu bounds", { cpuMillicores: 2050, memoryBytes: 100, pods: 50 }, { cpuMillicores: 500, memoryBytes: 1 }, 4],
    ["memory bounds", { cpuMillicores: 10_000, memoryBytes: 2.5 * 1024, pods: 50 }, { cpuMillicores: 1, memoryBytes: 1024 }, 2],
    ["pod slots bound", { cpuMillicores: 10_000, memoryBytes: 1e12, pods: 3 }, { cpuMillicores: 1, memoryBytes: 1 }, 3],
    ["a shape asking nothing takes only slots", { cpuMillicores: 0, memoryBytes: 0, pods: 7 }, { cpuMillicores: 0, memoryBytes: 0 }, 7],
    ["a resource not asked for never bounds, even overcommitted", { cpuMillicores: -300, memoryBytes: 4096, pods: 9 }, { cpuMillicores: 0, memoryBytes: 1024 }, 4],
    ["overcommitted free space fits nothing", { cpuMillicores: -300, memoryBytes: 4096, pods: 9 }, { cpuMillicores: 100, memoryBytes: 1 }, 0],
    ["no free slot fits nothing", { cpuMillicores: 1000, memoryBytes: 4096, pods: 0 }, { cpuMillicores: 1, memoryBytes: 1 }, 0],
    ["exact fit", { cpuMillicores: 1000, memoryBytes: 2048, pods: 2 }, { cpuMillicores: 500, memoryBytes: 1024 }, 2],
  ];
  for (const [name, free, shape, expected] of fits) {
    test(`podsThatFit: ${name}`, () => assert.equal(podsThatFit(free, shape), expected));
  }
});

/**
 * Brute force: place pods of the shape one at a time on any node the scheduler would accept
 * (its own rules, written out again here, and the simulator's toleration check) until no node
 * takes another. The count must equal the report's.
 */
function bruteForce(
  nodes: { node: CachedNode; cpu: number; memory: number; pods: number; usedCpu: number; usedMemory: number; usedPods: number }[],
  shape: { cpuMillicores: number; memoryBytes: number; tolerations: Toleration[] },
  rng: Rng,
): number[] {
  const state = nodes.map((n) => ({ ...n }));
  const placed = nodes.map(() => 0);
  const takes = (n: (typeof state)[number]) =>
    n.node.conditions.some((c) => c.type === "Ready" && c.status === "True") &&
    !n.node.unschedulable &&
    n.node.taints.every((taint) => taint.effect === "PreferNoSchedule" || simTolerates(shape.tolerations, taint)) &&
    n.usedPods + 1 <= n.pods &&
    (shape.cpuMillicores === 0 || n.usedCpu + shape.cpuMillicores <= n.cpu) &&
    (shape.memoryBytes === 0 || n.usedMemory + shape.memoryBytes <= n.memory);
  for (;;) {
    const open = state.map((n, i) => (takes(n) ? i : -1)).filter((i) => i >= 0);
    if (open.length === 0) return placed;
    const i = rng.pick(open);
    state[i]!.usedCpu += shape.cpuMillicores;
    state[i]!.usedMemory += shape.memoryBytes;
    state[i]!.usedPods += 1;
    placed[i]!++;
  }
}

describe("pods that fit agree with brute-force placement", () => {
  test("200 random clusters and shapes (seeded)", () => {
    const rng = new Rng(20261129);
    const TAINTS: Taint[] = [
      { key: "gpu", value: "present", effect: "NoSchedule" },
      { key: "spot", effect: "NoExecute" },
      { key: "batch", value: "yes", effect: "PreferNoSchedule" },
      { key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule" },
    ];
    const TOLERATIONS: NonNullable<PodShapeInput["tolerations"]> = [
      { key: "gpu", operator: "Exists" },
      { key: "gpu", value: "present", effect: "NoSchedule" },
      { key: "gpu", value: "absent" },
      { key: "spot", operator: "Exists", effect: "NoExecute" },
      { key: "spot", operator: "Exists", effect: "NoSchedule" },
      { operator: "Exists" },
      { key: "node-role.kubernetes.io/control-plane", operator: "Exists", effect: "NoSchedule" },
    ];
    let total = 0;
    for (let round = 0; round < 200; round++) {
      const nodes = Array.from({ length: rng.int(1, 12) }, (_, i) => {
        const cpu = rng.pick([1900, 3800, 7800, 15_800]);
        const memory = rng.pick([4, 15, 30, 60]) * 1024 ** 3;
        const slots = rng.pick([4, 10, 30, 110]);
        const pods = Array.from({ length: rng.int(0, Math.min(slots + 2, 12)) }, (_, j) =>
          cachedPod(`p${j}`, {
            phase: rng.pick(["Running", "Running", "Pending", "Succeeded", "Failed"]),
            requests: { cpu: rng.pick([0, 100, 250, 500, 1000, 2000]), memory: rng.pick([0, 128, 512, 2048]) * 1024 ** 2 },
          }),
        );
        const node = cachedNode(`n${i}`, {
          allocatable: { cpu: `${cpu}m`, memory: String(memory), pods: String(slots) },
          ready: rng.chance(0.85),
          unschedulable: rng.chance(0.1),
          taints: TAINTS.filter(() => rng.chance(0.2)),
        });
        const totals = sumPodResources(pods);
        return { node, totals, cpu, memory, pods: slots, usedCpu: totals.requests.cpu ?? 0, usedMemory: totals.requests.memory ?? 0, usedPods: totals.podCount };
      });
      const input: PodShapeInput = {
        cpu: rng.pick(["0", "50m", "100m", "250m", "500m", "1", "1500m", "3"]),
        memory: rng.pick(["0", "64Mi", "256Mi", "1Gi", "3Gi"]),
        tolerations: TOLERATIONS.filter(() => rng.chance(0.25)),
      };
      const shape = compilePodShape(input);
      const tally = new CapacityTally([], shape);
      for (const n of nodes) tally.add(n.node, nodeAmounts(n.node), n.totals, undefined);
      const report = tally.result().total.fit!;
      const placed = bruteForce(nodes, { ...shape, tolerations: [...shape.tolerations] }, rng);
      const context = JSON.stringify({ round, input });
      assert.equal(
        report.pods,
        placed.reduce((a, b) => a + b, 0),
        context,
      );
      assert.equal(report.nodesWithRoom, placed.filter((p) => p > 0).length, context);
      total += report.pods;
    }
    assert.ok(total > 1000, `the rounds placed pods at all (${total})`);
  });
});
