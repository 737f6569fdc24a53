import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { formatAge, nodeExternalIP, nodeInternalIP, nodeRoles, nodeStatusColumn, type NodeLike } from "../../src/k8s/node-display.js";

const ready = (status: string) => ({ type: "Ready", status });

describe("nodeStatusColumn shows what kubectl get nodes shows", () => {
  const cases: [string, NodeLike, string][] = [
    ["a ready node", { status: { conditions: [ready("True")] } }, "Ready"],
    ["a not-ready node", { status: { conditions: [ready("False")] } }, "NotReady"],
    ["a node whose kubelet stopped posting", { status: { conditions: [ready("Unknown")] } }, "NotReady"],
    ["a node without a Ready condition", { status: { conditions: [{ type: "MemoryPressure", status: "True" }] } }, "Unknown"],
    ["a node without status", {}, "Unknown"],
    ["a ready node under memory pressure", { status: { conditions: [{ type: "MemoryPressure", status: "True" }, ready("True")] } }, "Ready"],
    ["a cordoned ready node", { spec: { unschedulable: true }, status: { conditions: [ready("True")] } }, "Ready,SchedulingDisabled"],
    ["a cordoned not-ready node", { spec: { unschedulable: true }, status: { conditions: [ready("False")] } }, "NotReady,SchedulingDisabled"],
    ["a cordoned node without status", { spec: { unschedulable: true } }, "Unknown,SchedulingDisabled"],
    ["an uncordoned node", { spec: { unschedulable: false }, status: { conditions: [ready("True")] } }, "Ready"],
    ["a node listing Ready twice (last wins)", { status: { conditions: [ready("True"), ready("False")] } }, "NotReady"],
  ];
  for (const [name, node, expected] of cases) test(`${name} is ${expected}`, () => assert.equal(nodeStatusColumn(node), expected));
});

describe("nodeRoles", () => {
  const cases: [string, Record<string, string> | undefined, string[]][] = [
    ["no labels", undefined, []],
    ["unrelated labels", { "kubernetes.io/hostname": "n1" }, []],
    ["a control plane", { "node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/master": "" }, ["control-plane", "master"]],
    ["a role label with a value", { "node-role.kubernetes.io/worker": "true" }, ["worker"]],
    ["the legacy role label", { "kubernetes.io/role": "node" }, ["node"]],
    ["an empty legacy role label", { "kubernetes.io/role": "" }, []],
    ["an empty role name", { "node-role.kubernetes.io/": "" }, []],
    ["both forms naming one role", { "kubernetes.io/role": "worker", "node-role.kubernetes.io/worker": "" }, ["worker"]],
    ["roles sorted", { "node-role.kubernetes.io/zeta": "", "node-role.kubernetes.io/alpha": "", "kubernetes.io/role": "mid" }, ["alpha", "mid", "zeta"]],
  ];
  for (const [name, labels, expected] of cases) test(`${name}: ${JSON.stringify(expected)}`, () => assert.deepEqual(nodeRoles(labels), expected));
});

describe("node addresses for -o wide", () => {
  const node: NodeLike = {
    status: {
      addresses: [
        { type: "Hostname", address: "n1" },
        { type: "InternalIP", address: "10.0.0.1" },
        { type: "InternalIP", address: "fd00::1" },
        { type: "ExternalIP", address: "203.0.113.7" },
      ],
    },
  };
  test("the first InternalIP", () => assert.equal(nodeInternalIP(node), "10.0.0.1"));
  test("the first ExternalIP", () => assert.equal(nodeExternalIP(node), "203.0.113.7"));
  test("none when absent", () => {
    assert.equal(nodeExternalIP({ status: { addresses: [{ type: "InternalIP", address: "10.0.0.1" }] } }), undefined);
    assert.equal(nodeInternalIP({}), undefined);
  });
});

describe("formatAge is duration.HumanDuration", () => {
  const m = 60;
  const h = 60 * m;
  const d = 24 * h;
  const y = 365 * d;
  const cases: [number, string][] = [
    [0, "0s"],
    [1, "1s"],
    [59, "59s"],
    [60, "60s"],
    [119, "119s"],
    [119.9, "119s"],
    [2 * m, "2m"],
    [2 * m + 1, "2m1s"],
    [9 * m + 59, "9m59s"],
    [10 * m, "10m"],
    [10 * m + 59, "10m"],
    [179 * m + 59, "179m"],
    [3 * h, "3h"],
    [3 * h + m, "3h1m"],
    [7 * h + 59 * m + 59, "7h59m"],
    [8 * h, "8h"],
    [47 * h + 59 * m, "47h"],
    [48 * h, "2d"],
    [49 * h, "2d1h"],
    [8 * d - h, "7d23h"],
    [8 * d, "8d"],
    [729 * d, "729d"],
    [2 * y, "2y"],
    [2 * y + d, "2y1d"],
    [8 * y - d, "7y364d"],
    [8 * y, "8y"],
    [20 * y + 100 * d, "20y"],
    [-1, "0s"],
    [-1.5, "0s"],
    [-2, "<invalid>"],
    [Number.NaN, "<invalid>"],
  ];
  for (const [seconds, expected] of cases) test(`${seconds}s is ${expected}`, () => assert.equal(formatAge(seconds), expected));
});
