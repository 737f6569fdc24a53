import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { CachedNode, NodeCondition } from "../../src/cluster/model.js";
import { AppError } from "../../src/graphql/errors.js";
import { nodeRoles } from "../../src/k8s/node-display.js";
import type { NodeFilter } from "../../src/graphql/generated/resolvers-types.js";
import { compileNodeFilter, readyStatus } from "../../src/inventory/node-filter.js";
import { cachedNode } from "../support/cached-objects.js";

function node(name: string, opts: { labels?: Record<string, string>; conditions?: NodeCondition[]; unschedulable?: boolean } = {}): CachedNode {
  return cachedNode(name, opts);
}

const cond = (type: string, status: string): NodeCondition => ({ type, status });

const NODES: CachedNode[] = [
  node("cp-1", {
    labels: { "node-role.kubernetes.io/control-plane": "", "topology.kubernetes.io/zone": "a", tier: "system" },
    conditions: [cond("Ready", "True"), cond("MemoryPressure", "False")],
  }),
  node("worker-1", {
    labels: { "node-role.kubernetes.io/worker": "true", "topology.kubernetes.io/zone": "a", gen: "3" },
    conditions: [cond("Ready", "True"), cond("MemoryPressure", "True")],
  }),
  node("worker-2", {
    labels: { "node-role.kubernetes.io/worker": "", "topology.kubernetes.io/zone": "b", gen: "5" },
    conditions: [cond("Ready", "False")],
    unschedulable: true,
  }),
  node("legacy-1", { labels: { "kubernetes.io/role": "worker", "topology.kubernetes.io/zone": "b" }, conditions: [cond("Ready", "Unknown")] }),
  node("bare-1", { labels: { gpu: "" } }),
  node("flappy-1", { conditions: [cond("Ready", "False"), cond("Ready", "True")], unschedulable: true }),
];

function names(filter: NodeFilter | null | undefined): string[] {
  const matches = compileNodeFilter(filter);
  return NODES.filter(matches).map((n) => n.name);
}

describe("readyStatus (Node.ready)", () => {
  const cases: [string, NodeCondition[], string][] = [
    ["Ready True", [cond("Ready", "True")], "TRUE"],
    ["Ready False", [cond("Ready", "False")], "FALSE"],
    ["Ready Unknown", [cond("Ready", "Unknown")], "UNKNOWN"],
    ["no Ready condition", [cond("DiskPressure", "False")], "UNKNOWN"],
    ["no conditions", [], "UNKNOWN"],
    ["Ready twice: the last wins, as kubectl", [cond("Ready", "True"), cond("Ready", "False")], "FALSE"],
  ];
  for (const [name, conditions, expected] of cases) {
    test(`${name} → ${expected}`, () => assert.equal(readyStatus(node("n", { conditions })), expected));
  }
});

describe("compileNodeFilter", () => {
  const ALL = NODES.map((n) => n.name);
  const cases: [string, NodeFilter | null | undefined, string[]][] = [
    ["no filter", undefined, ALL],
    ["null filter", null, ALL],
    ["an empty filter", {}, ALL],
    ["every field null", { labelSelector: null, names: null, ready: null, schedulable: null, roles: null, condition: null }, ALL],
    // labelSelector, in the full syntax
    ["an empty selector matches everything", { labelSelector: "" }, ALL],
    ["equality", { labelSelector: "topology.kubernetes.io/zone=a" }, ["cp-1", "worker-1"]],
    ["double equals", { labelSelector: "topology.kubernetes.io/zone==b" }, ["worker-2", "legacy-1"]],
    ["inequality includes nodes without the label", { labelSelector: "topology.kubernetes.io/zone!=a" }, ["worker-2", "legacy-1", "bare-1", "flappy-1"]],
    ["set membership", { labelSelector: "topology.kubernetes.io/zone in (b, c)" }, ["worker-2", "legacy-1"]],
    ["notin", { labelSelector: "topology.kubernetes.io/zone notin (a)" }, ["worker-2", "legacy-1", "bare-1", "flappy-1"]],
    ["exists", { labelSelector: "gpu" }, ["bare-1"]],
    ["does not exist", { labelSelector: "!topology.kubernetes.io/zone" }, ["bare-1", "flappy-1"]],
    ["greater than", { labelSelector: "gen>4" }, ["worker-2"]],
    ["less than", { labelSelector: "gen<4" }, ["worker-1"]],
    ["a conjunction", { labelSelector: "topology.kubernetes.io/zone=a,!tier" }, ["worker-1"]],
    // names
    ["names, exact", { names: ["worker-1", "cp-1", "nope"] }, ["cp-1", "worker-1"]],
    ["names are not prefixes", { names: ["worker"] }, []],
    ["an empty names list matches nothing", { names: [] }, []],
    // ready
    ["ready: true", { ready: true }, ["cp-1", "worker-1", "flappy-1"]],
    ["ready: false includes False, Unknown and missing", { ready: false }, ["worker-2", "legacy-1", "bare-1"]],
    // schedulable
    ["schedulable: true", { schedulable: true }, ["cp-1", "worker-1", "legacy-1", "bare-1"]],
    ["schedulable: false (cordoned)", { schedulable: false }, ["worker-2", "flappy-1"]],
    // roles
    ["one role, any label value, and the legacy label", { roles: ["worker"] }, ["worker-1", "worker-2", "legacy-1"]],
    ["any of several roles", { roles: ["control-plane", "worker"] }, ["cp-1", "worker-1", "worker-2", "legacy-1"]],
    ["an unknown role", { roles: ["gpu"] }, []],
    ["the empty role matches nothing", { roles: [""] }, []],
    ["an empty roles list matches nothing", { roles: [] }, []],
    // condition
    ["condition Ready TRUE", { condition: { type: "Ready", status: "TRUE" } }, ["cp-1", "worker-1", "flappy-1"]],
    ["condition Ready UNKNOWN: a missing condition does not match", { condition: { type: "Ready", status: "UNKNOWN" } }, ["legacy-1"]],
    ["condition MemoryPressure TRUE", { condition: { type: "MemoryPressure", status: "TRUE" } }, ["worker-1"]],
    ["condition MemoryPressure FALSE", { condition: { type: "MemoryPressure", status: "FALSE" } }, ["cp-1"]],
    ["a condition type nobody has", { condition: { type: "NetworkUnavailable", status: "UNKNOWN" } }, []],
    ["condition types are case-sensitive", { condition: { type: "ready", status: "TRUE" } }, []],
    // together
    [
      "all fields at once are ANDed",
      { labelSelector: "topology.kubernetes.io/zone", roles: ["worker"], ready: true, schedulable: true, names: ["worker-1", "worker-2"], condition: { type: "MemoryPressure", status: "TRUE" } },
      ["worker-1"],
    ],
    ["contradictory fields match nothing", { ready: true, condition: { type: "Ready", status: "FALSE" } }, []],
  ];
  for (const [name, filter, expected] of cases) test(name, () => assert.deepEqual(names(filter), expected));

  test("roles agree with nodeRoles (what Node.roles shows) on every node", () => {
    for (const role of ["worker", "control-plane", "gpu"]) {
      const expected = NODES.filter((n) => nodeRoles(n.labels).includes(role)).map((n) => n.name);
      assert.deepEqual(names({ roles: [role] }), expected, role);
    }
  });
});

describe("a malformed label selector is BAD_USER_INPUT saying where", () => {
  const cases: [string, string][] = [
    ["a in (x", "filter.labelSelector: unable to parse requirement: found '', expected: ',' or ')' at position 7"],
    ["a=b,", "filter.labelSelector: found '', expected: identifier after ',' at position 4"],
    ["=a", "filter.labelSelector: found '=', expected: !, identifier, or 'end of string' at position 0"],
    ["a b", "filter.labelSelector: unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt at position 2"],
    ["gen>x", `filter.labelSelector: unable to parse requirement: values[0]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer at position 4`],
  ];
  for (const [selector, message] of cases) {
    test(JSON.stringify(selector), () => {
      assert.throws(
        () => compileNodeFilter({ labelSelector: selector }),
        (err: unknown) => {
          assert.ok(err instanceof AppError);
          assert.equal(err.extensions.code, "BAD_USER_INPUT");
          assert.equal(err.message, message);
          return true;
        },
      );
    });
  }
});
