import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { CachedPod } from "../../src/cluster/model.js";
import { AppError } from "../../src/graphql/errors.js";
import type { DrainOptions as DrainOptionsInput } from "../../src/graphql/generated/resolvers-types.js";
import { drainOptions, planDrain, verdictFor } from "../../src/maintenance/drain-plan.js";

// kubectl's own words (k8s.io/kubectl/pkg/drain/filters.go), written out so that a change of
// wording in drain-plan.ts fails here. One difference on purpose: kubectl 1.32 prints the
// unmanaged refusal as "cannot delete cannot delete Pods that declare no controller …"; we say
// "cannot delete" once. The mirror-pod reason is ours: kubectl skips those silently.

function pod(name: string, fields: Partial<CachedPod> = {}): CachedPod {
  return {
    cluster: "c",
    namespace: "ns",
    name,
    uid: `uid-${name}`,
    resourceVersion: "1",
    nodeName: "n1",
    phase: "Running",
    labels: {},
    ownerKind: "ReplicaSet",
    ownerName: "rs",
    daemonSet: false,
    mirror: false,
    emptyDir: false,
    deletionTimestamp: undefined,
    terminationGracePeriodSeconds: 30,
    requests: {},
    limits: {},
    creationTimestamp: "2026-01-01T00:00:00Z",
    noExecuteTolerations: {},
    ...fields,
  };
}

const ds = (name: string, fields: Partial<CachedPod> = {}) => pod(name, { ownerKind: "DaemonSet", ownerName: "agent", daemonSet: true, ...fields });
const context = (input: DrainOptionsInput = {}, daemonSets = ["agent"]) => ({
  options: drainOptions(input),
  daemonSetExists: (_ns: string, name: string) => daemonSets.includes(name),
});

describe("drain pod filters (kubectl's filters.go)", () => {
  // [what, pod, options, existing DaemonSets, expected verdict]
  const cases: [string, CachedPod, DrainOptionsInput, string[], { remove: boolean; warning?: string; error?: string; unblockedBy?: string }][] = [
    ["a ReplicaSet pod is removed", pod("a"), {}, [], { remove: true }],
    ["a DaemonSet pod refuses the drain without ignoreDaemonSets", ds("d"), {}, ["agent"], { remove: false, error: "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)", unblockedBy: "IGNORE_DAEMON_SETS" }],
    ["a DaemonSet pod is skipped with ignoreDaemonSets", ds("d"), { ignoreDaemonSets: true }, ["agent"], { remove: false, warning: "ignoring DaemonSet-managed Pods" }],
    ["a finished DaemonSet pod is removed", ds("d", { phase: "Succeeded" }), {}, ["agent"], { remove: true }],
    ["an orphaned DaemonSet pod refuses without force", ds("d"), { ignoreDaemonSets: true }, [], { remove: false, error: 'daemonsets.apps "agent" not found', unblockedBy: "FORCE" }],
    ["an orphaned DaemonSet pod is removed with force", ds("d"), { force: true }, [], { remove: true, warning: 'daemonsets.apps "agent" not found' }],
    ["a mirror pod is skipped, whatever the options", pod("m", { mirror: true, ownerKind: "Node", ownerName: "n1" }), { force: true }, [], { remove: false, warning: "mirror pod of a static pod: the kubelet owns it" }],
    ["an emptyDir pod refuses without deleteEmptyDirData", pod("e", { emptyDir: true }), {}, [], { remove: false, error: "Pods with local storage (use --delete-emptydir-data to override)", unblockedBy: "DELETE_EMPTY_DIR_DATA" }],
    ["an emptyDir pod is removed with deleteEmptyDirData", pod("e", { emptyDir: true }), { deleteEmptyDirData: true }, [], { remove: true, warning: "deleting Pods with local storage" }],
    ["a finished emptyDir pod is removed", pod("e", { emptyDir: true, phase: "Failed" }), {}, [], { remove: true }],
    ["a bare pod refuses without force", pod("b", { ownerKind: undefined, ownerName: undefined }), {}, [], { remove: false, error: "Pods that declare no controller (use --force to override)", unblockedBy: "FORCE" }],
    ["a bare pod is removed with force", pod("b", { ownerKind: undefined, ownerName: undefined }), { force: true }, [], { remove: true, warning: "deleting Pods that declare no controller" }],
    ["a finished bare pod is removed", pod("b", { ownerKind: undefined, ownerName: undefined, phase: "Succeeded" }), {}, [], { remove: true }],
    // The first filter that stops a pod decides: a DaemonSet pod with emptyDir is a DaemonSet matter.
    ["filters run in kubectl's order", ds("d", { emptyDir: true }), {}, ["agent"], { remove: false, error: "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)", unblockedBy: "IGNORE_DAEMON_SETS" }],
    ["a bare emptyDir pod with only deleteEmptyDirData still needs force", pod("x", { emptyDir: true, ownerKind: undefined }), { deleteEmptyDirData: true }, [], { remove: false, error: "Pods that declare no controller (use --force to override)", unblockedBy: "FORCE" }],
  ];
  for (const [what, given, options, daemonSets, expected] of cases) {
    test(what, () => assert.deepEqual(verdictFor(given, context(options, daemonSets)), expected));
  }
});

describe("planDrain", () => {
  const pods = [
    pod("web-1"),
    ds("agent-x"),
    pod("cache-1", { emptyDir: true }),
    pod("debug", { ownerKind: undefined, ownerName: undefined }),
    pod("static", { mirror: true, ownerKind: "Node" }),
  ];

  test("refuses with kubectl's grouped messages, in kubectl's order, and marks the pods that refuse", () => {
    const plan = planDrain(pods, context());
    assert.deepEqual(plan.errors, [
      `cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): ns/agent-x`,
      `cannot delete Pods with local storage (use --delete-emptydir-data to override): ns/cache-1`,
      `cannot delete Pods that declare no controller (use --force to override): ns/debug`,
    ]);
    assert.deepEqual(
      plan.pods.filter((p) => p.refused).map((p) => p.name),
      ["agent-x", "cache-1", "debug"],
    );
  });

  test("with the flags, evicts what it may, skips DaemonSet and mirror pods, and warns as kubectl does", () => {
    const plan = planDrain(pods, context({ ignoreDaemonSets: true, deleteEmptyDirData: true, force: true }));
    assert.deepEqual(plan.errors, []);
    assert.deepEqual(
      plan.pods.map((p) => [p.name, p.action]),
      [
        ["agent-x", null],
        ["cache-1", "EVICT"],
        ["debug", "EVICT"],
        ["static", null],
        ["web-1", "EVICT"],
      ],
    );
    assert.deepEqual(plan.warnings, [`ignoring DaemonSet-managed Pods: ns/agent-x`, `deleting Pods with local storage: ns/cache-1`, `deleting Pods that declare no controller: ns/debug`]);
  });

  test("disableEviction deletes instead of evicting", () => {
    const plan = planDrain([pod("web-1")], context({ disableEviction: true }));
    assert.equal(plan.pods[0]!.action, "DELETE");
  });
});

describe("drainOptions", () => {
  test("fills in kubectl's defaults, with a bounded timeout", () => {
    assert.deepEqual(drainOptions(undefined), {
      ignoreDaemonSets: false,
      deleteEmptyDirData: false,
      force: false,
      gracePeriodSeconds: -1,
      timeoutSeconds: 600,
      podSelector: null,
      disableEviction: false,
    });
    assert.equal(drainOptions({ gracePeriodSeconds: -5 }).gracePeriodSeconds, -1);
  });

  test("the service's default timeout applies when the caller gives none", () => {
    assert.equal(drainOptions({}, 120).timeoutSeconds, 120);
    assert.equal(drainOptions({ timeoutSeconds: 30 }, 120).timeoutSeconds, 30);
  });

  for (const [input, message] of [
    [{ timeoutSeconds: 0 }, /timeoutSeconds must be between 1 and 86400, got 0/],
    [{ timeoutSeconds: 100_000 }, /timeoutSeconds/],
    [{ gracePeriodSeconds: 100_000 }, /gracePeriodSeconds must be at most/],
    [{ podSelector: "app in (a" }, /podSelector/],
  ] as const) {
    test(`rejects ${JSON.stringify(input)} as BAD_USER_INPUT`, () => {
      assert.throws(
        () => drainOptions(input),
        (error: unknown) => error instanceof AppError && error.extensions.code === "BAD_USER_INPUT" && message.test(error.message),
      );
    });
  }
});
