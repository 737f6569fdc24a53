import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { applyPatch } from "../../src/sim/apiserver/patch.js";
import { ApiError } from "../../src/sim/apiserver/status.js";

const node = () => ({
  metadata: { name: "n1", labels: { a: "1", b: "2" }, finalizers: ["x"] },
  spec: { taints: [{ key: "t1", effect: "NoSchedule" }] },
  status: {
    conditions: [
      { type: "MemoryPressure", status: "False", reason: "KubeletHasSufficientMemory" },
      { type: "Ready", status: "True", reason: "KubeletReady" },
    ],
    addresses: [
      { type: "InternalIP", address: "10.0.0.1" },
      { type: "Hostname", address: "n1" },
    ],
  },
});

const MERGE = "application/merge-patch+json";
const SMP = "application/strategic-merge-patch+json";
const JSONP = "application/json-patch+json";

describe("patch flavours", () => {
  const cases: { name: string; type: string; patch: unknown; expect: (r: any) => void }[] = [
    {
      name: "merge patch: null deletes a label, objects merge",
      type: MERGE,
      patch: { metadata: { labels: { a: null, c: "3" } } },
      expect: (r) => assert.deepEqual(r.metadata.labels, { b: "2", c: "3" }),
    },
    {
      name: "merge patch: a list replaces the whole list",
      type: MERGE,
      patch: { status: { conditions: [{ type: "Ready", status: "False" }] } },
      expect: (r) => assert.deepEqual(r.status.conditions, [{ type: "Ready", status: "False" }]),
    },
    {
      name: "strategic merge: conditions merge by type, keeping the others",
      type: SMP,
      patch: { status: { conditions: [{ type: "Ready", status: "False", reason: "KubeletNotReady" }] } },
      expect: (r) =>
        assert.deepEqual(r.status.conditions, [
          { type: "MemoryPressure", status: "False", reason: "KubeletHasSufficientMemory" },
          { type: "Ready", status: "False", reason: "KubeletNotReady" },
        ]),
    },
    {
      name: "strategic merge: a new condition type is appended",
      type: SMP,
      patch: { status: { conditions: [{ type: "DiskPressure", status: "True" }] } },
      expect: (r) =>
        assert.deepEqual(
          r.status.conditions.map((c: any) => c.type),
          ["MemoryPressure", "Ready", "DiskPressure"],
        ),
    },
    {
      name: "strategic merge: $patch delete removes a keyed element",
      type: SMP,
      patch: { status: { addresses: [{ type: "Hostname", $patch: "delete" }] } },
      expect: (r) => assert.deepEqual(r.status.addresses, [{ type: "InternalIP", address: "10.0.0.1" }]),
    },
    {
      name: "strategic merge: taints have no merge key and are replaced, as in the apiserver",
      type: SMP,
      patch: { spec: { taints: [{ key: "t2", effect: "NoExecute" }] } },
      expect: (r) => assert.deepEqual(r.spec.taints, [{ key: "t2", effect: "NoExecute" }]),
    },
    {
      name: "strategic merge: kubectl cordon's patch sets spec.unschedulable",
      type: SMP,
      patch: { spec: { unschedulable: true } },
      expect: (r) => assert.equal(r.spec.unschedulable, true),
    },
    {
      name: "strategic merge: finalizers merge as a set; $deleteFromPrimitiveList removes",
      type: SMP,
      patch: { metadata: { finalizers: ["y", "x"], "$deleteFromPrimitiveList/finalizers": ["x"] } },
      expect: (r) => assert.deepEqual(r.metadata.finalizers, ["y"]),
    },
    {
      name: "JSON patch: add, replace, remove, test",
      type: JSONP,
      patch: [
        { op: "test", path: "/metadata/name", value: "n1" },
        { op: "add", path: "/metadata/labels/zone~1x", value: "z" },
        { op: "replace", path: "/status/conditions/1/status", value: "Unknown" },
        { op: "remove", path: "/spec/taints/0" },
        { op: "add", path: "/status/addresses/-", value: { type: "ExternalIP", address: "1.2.3.4" } },
      ],
      expect: (r) => {
        assert.equal(r.metadata.labels["zone/x"], "z");
        assert.equal(r.status.conditions[1].status, "Unknown");
        assert.deepEqual(r.spec.taints, []);
        assert.equal(r.status.addresses[2].address, "1.2.3.4");
      },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const before = node();
      const r = applyPatch(c.type, before, c.patch);
      c.expect(r);
      assert.deepEqual(before, node(), "the input is not mutated");
    });
  }

  test("a failed JSON patch test is 422 Invalid; an unknown patch type is 415", () => {
    assert.throws(
      () => applyPatch(JSONP, node(), [{ op: "test", path: "/metadata/name", value: "other" }]),
      (e) => e instanceof ApiError && e.code === 422,
    );
    assert.throws(
      () => applyPatch("application/apply-patch+yaml", node(), {}),
      (e) => e instanceof ApiError && e.code === 415,
    );
  });
});
