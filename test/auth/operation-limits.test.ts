import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { buildSchema, getIntrospectionQuery, getOperationAST, parse } from "graphql";
import { measureOperation } from "../../src/graphql/operation-limits.js";
import { SCHEMA_SDL } from "../../src/graphql/schema.js";

const schema = buildSchema(SCHEMA_SDL);

function measure(query: string, variables?: Record<string, unknown>) {
  const document = parse(query);
  return measureOperation(schema, document, getOperationAST(document)!, variables);
}

describe("measuring an operation's depth and cost", () => {
  const cases: [string, string, Record<string, unknown> | undefined, { depth: number; cost: number }][] = [
    ["a scalar at the root", "{ __typename }", undefined, { depth: 1, cost: 0 }],
    ["one object", "{ service { version } }", undefined, { depth: 2, cost: 1 }],
    ["a list without first counts 10", "{ clusters { name } }", undefined, { depth: 2, cost: 10 }],
    ["a connection's first applies to its edges", "{ nodes(first: 50) { totalCount edges { node { name } } } }", undefined, { depth: 4, cost: 1 + 50 + 50 }],
    ["a connection without first counts the default page, 100", "{ nodes { edges { cursor } } }", undefined, { depth: 3, cost: 1 + 100 }],
    ["lists inside lists multiply", "{ nodes(first: 20) { edges { node { pods { name } labels { key } } } } }", undefined, { depth: 5, cost: 1 + 20 + 20 + 200 + 200 }],
    ["a list field with first", '{ node(name: "a") { conditionTransitions(first: 7) { to } } }', undefined, { depth: 3, cost: 1 + 7 }],
    ["first from a variable", "query($n: Int) { nodes(first: $n) { edges { cursor } } }", { n: 3 }, { depth: 3, cost: 4 }],
    ["first from a variable's default", "query($n: Int = 2) { nodes(first: $n) { edges { cursor } } }", {}, { depth: 3, cost: 3 }],
    ["aliases count each", "{ a: service { version } b: service { version } }", undefined, { depth: 2, cost: 2 }],
    [
      "fragments and inline fragments are followed",
      "{ nodes(first: 2) { ...E } } fragment E on NodeConnection { edges { ... on NodeEdge { node { taints { key } } } } }",
      undefined,
      { depth: 5, cost: 1 + 2 + 2 + 20 },
    ],
    ["scalar lists cost nothing", '{ node(name: "a") { roles } }', undefined, { depth: 2, cost: 1 }],
    ["a connection's last applies as first does", "{ nodes(last: 4000) { edges { node { name } } } }", undefined, { depth: 4, cost: 1 + 4000 + 4000 }],
    ["a history connection's totalCount costs its count", "{ nodeChanges(first: 5) { totalCount } }", undefined, { depth: 2, cost: 1 + 1_000 }],
  ];
  for (const [what, query, variables, expected] of cases) {
    test(what, () => {
      const { depth, cost } = measure(query, variables);
      assert.deepEqual({ depth, cost }, expected);
    });
  }

  test("selections count fields as if every fragment were written out; spreads count as written", () => {
    const { selections, spreads } = measure("{ a: service { version } ...S ...S } fragment S on Query { service { version startedAt } }");
    assert.deepEqual({ selections, spreads }, { selections: 2 + 3 + 3, spreads: 2 });
  });

  test("each fragment is measured once: 40 doubling fragments (2^39 selections) measure without walking them", () => {
    const fragments = Array.from({ length: 40 }, (_, i) => `fragment F${i} on Query { ${i < 39 ? `...F${i + 1} ...F${i + 1}` : "service { version }"} }`);
    const size = measure(`{ ...F0 } ${fragments.join(" ")}`);
    assert.deepEqual(size, { depth: 2, cost: 2 ** 39, selections: 2 * 2 ** 39, spreads: 79 });
  });

  test("a fragment under different pages is measured for each", () => {
    const { cost } = measure("{ a: nodes(first: 2) { ...E } b: nodes(first: 3) { ...E } } fragment E on NodeConnection { edges { cursor } }");
    assert.equal(cost, 1 + 2 + 1 + 3);
  });

  test("introspection counts for cost only: tools' standard query is 1 deep", () => {
    const { depth, cost } = measure(getIntrospectionQuery());
    assert.equal(depth, 1);
    assert.ok(cost > 1_000 && cost < 100_000, String(cost));
  });

  test("the bench's query of all 5,000 nodes fits the default cost limit (500,000)", () => {
    const { cost } = measure(`{ nodes(first: 5000) { totalCount edges { node {
      name labels { key value } conditions { type status reason lastTransitionTime }
      nodeInfo { kubeletVersion containerRuntime } allocatable { cpuMillicores } requests { cpuMillicores }
      usage { cpuMillicores cpuPercent } } } } }`);
    // nodes, edges, node, labels and conditions (10 each), nodeInfo, allocatable, requests, usage.
    assert.equal(cost, 1 + 5000 + 5000 + 50_000 + 50_000 + 4 * 5000);
  });
});
