import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { NOTHING_SELECTOR, SelectorParseError, labelSelectorFromMatchLabels, parseLabelSelector, type Requirement } from "../../src/k8s/label-selector.js";

describe("parseLabelSelector accepts the apimachinery grammar", () => {
  // [text, canonical toString(), requirements]
  const cases: [string, string, Requirement[]][] = [
    ["", "", []],
    ["   ", "", []],
    ["a=b", "a=b", [{ key: "a", operator: "=", values: ["b"] }]],
    ["a==b", "a=b", [{ key: "a", operator: "=", values: ["b"] }]],
    ["a!=b", "a!=b", [{ key: "a", operator: "!=", values: ["b"] }]],
    ["a=", "a=", [{ key: "a", operator: "=", values: [""] }]],
    ["a", "a", [{ key: "a", operator: "exists", values: [] }]],
    ["!a", "!a", [{ key: "a", operator: "!", values: [] }]],
    ["a>5", "a>5", [{ key: "a", operator: "gt", values: ["5"] }]],
    ["a<5", "a<5", [{ key: "a", operator: "lt", values: ["5"] }]],
    ["a in (y,x,y)", "a in (x,y)", [{ key: "a", operator: "in", values: ["x", "y"] }]],
    ["a in(x)", "a in (x)", [{ key: "a", operator: "in", values: ["x"] }]],
    ["a notin (x, y)", "a notin (x,y)", [{ key: "a", operator: "notin", values: ["x", "y"] }]],
    ["a in ()", "a in ()", [{ key: "a", operator: "in", values: [""] }]],
    [
      "x in (foo,,baz),y,z notin ()",
      "x in (,baz,foo),y,z notin ()",
      [
        { key: "x", operator: "in", values: ["", "baz", "foo"] },
        { key: "y", operator: "exists", values: [] },
        { key: "z", operator: "notin", values: [""] },
      ],
    ],
    ["in in (in,notin)", "in in (in,notin)", [{ key: "in", operator: "in", values: ["in", "notin"] }]],
    [
      " b = 1 ,\ta\n",
      "a,b=1",
      [
        { key: "a", operator: "exists", values: [] },
        { key: "b", operator: "=", values: ["1"] },
      ],
    ],
    [
      "example.com/app=web,node-role.kubernetes.io/worker",
      "example.com/app=web,node-role.kubernetes.io/worker",
      [
        { key: "example.com/app", operator: "=", values: ["web"] },
        { key: "node-role.kubernetes.io/worker", operator: "exists", values: [] },
      ],
    ],
    [`${"k".repeat(63)}=${"v".repeat(63)}`, `${"k".repeat(63)}=${"v".repeat(63)}`, [{ key: "k".repeat(63), operator: "=", values: ["v".repeat(63)] }]],
  ];
  for (const [text, canonical, requirements] of cases) {
    test(`${JSON.stringify(text)} parses to ${JSON.stringify(canonical)}`, () => {
      const s = parseLabelSelector(text);
      assert.deepEqual(s.requirements, requirements);
      assert.equal(s.toString(), canonical);
      assert.deepEqual(parseLabelSelector(canonical).requirements, requirements);
    });
  }
});

describe("LabelSelector.matches", () => {
  const nine = "a in (v1,v2,v3,v4,v5,v6,v7,v8,v9)";
  const cases: [string, Record<string, string> | undefined, boolean][] = [
    ["", undefined, true],
    ["", { a: "b" }, true],
    ["a=b", { a: "b" }, true],
    ["a=b", { a: "c" }, false],
    ["a=b", {}, false],
    ["a=b", undefined, false],
    ["a=", { a: "" }, true],
    ["a=", {}, false],
    ["a!=b", {}, true],
    ["a!=b", undefined, true],
    ["a!=b", { a: "b" }, false],
    ["a!=b", { a: "c" }, true],
    ["a in (x,y)", { a: "y" }, true],
    ["a in (x,y)", { a: "z" }, false],
    ["a in (x,y)", {}, false],
    ["a notin (x,y)", {}, true],
    ["a notin (x,y)", { a: "x" }, false],
    ["a notin (x,y)", { a: "z" }, true],
    [nine, { a: "v9" }, true],
    [nine, { a: "v10" }, false],
    ["a", { a: "" }, true],
    ["a", {}, false],
    ["!a", {}, true],
    ["!a", { a: "" }, false],
    ["constructor", {}, false],
    ["!toString", {}, true],
    ["a>5", { a: "6" }, true],
    ["a>5", { a: "5" }, false],
    ["a>5", { a: "+6" }, true],
    ["a>5", { a: "06" }, true],
    ["a>5", { a: "x" }, false],
    ["a>5", { a: "" }, false],
    ["a>5", { a: "6.5" }, false],
    ["a>5", {}, false],
    ["a<5", { a: "-10" }, true],
    ["a<5", { a: "5" }, false],
    ["a>9007199254740993", { a: "9007199254740994" }, true],
    ["a>9007199254740993", { a: "9007199254740993" }, false],
    ["a<9007199254740993", { a: "9007199254740992" }, true],
    ["a>1", { a: "9223372036854775807" }, true],
    ["a>1", { a: "9223372036854775808" }, false],
    ["a=b,c", { a: "b", c: "" }, true],
    ["a=b,c", { a: "b" }, false],
    ["a=b,!c", { a: "b", c: "d" }, false],
  ];
  for (const [text, labels, expected] of cases) {
    test(`${JSON.stringify(text)} ${expected ? "matches" : "does not match"} ${JSON.stringify(labels)}`, () => {
      assert.equal(parseLabelSelector(text).matches(labels), expected);
    });
  }
});

describe("parseLabelSelector reports what is wrong and where", () => {
  const keyDetail = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  // [text, reason (exact, or a prefix when it ends with "…"), position]
  const cases: [string, string, number][] = [
    ["a in (x", "unable to parse requirement: found '', expected: ',' or ')'", 7],
    ["a in (x y)", "unable to parse requirement: found 'y', expected: ',' or ')'", 8],
    ["a in ((", "unable to parse requirement: found '(', expected: ',', ')' or identifier", 6],
    ["a in x", "unable to parse requirement: found 'x' expected: '('", 5],
    ["a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt", 2],
    ["a=(b)", "unable to parse requirement: found '(', expected: identifier", 2],
    ["!!a", "unable to parse requirement: found '!', expected: identifier", 1],
    ["a=b,", "found '', expected: identifier after ','", 4],
    ["a,,b", "found ',', expected: identifier after ','", 2],
    ["a=b c", "found 'c', expected: ',' or 'end of string'", 4],
    ["a=b=c", "found '=', expected: ',' or 'end of string'", 3],
    ["!a=b", "found '=', expected: ',' or 'end of string'", 2],
    ["=a", "found '=', expected: !, identifier, or 'end of string'", 0],
    ["!=a", "found '!=', expected: !, identifier, or 'end of string'", 0],
    [")", "found ')', expected: !, identifier, or 'end of string'", 0],
    ["a>b", `unable to parse requirement: values[0]: Invalid value: "b": for 'Gt', 'Lt' operators, the value must be an integer`, 2],
    ["a<", `unable to parse requirement: values[0]: Invalid value: "": for 'Gt', 'Lt' operators, the value must be an integer`, 2],
    ["a>-1", `unable to parse requirement: values[0][a]: Invalid value: "-1": a valid label must be an empty string…`, 2],
    ["x=1,a=b_", `unable to parse requirement: values[0][a]: Invalid value: "b_": a valid label must be an empty string…`, 6],
    ["a in (ok,-bad)", `unable to parse requirement: values[0][a]: Invalid value: "-bad": a valid label…`, 9],
    [`a=${"v".repeat(64)}`, `unable to parse requirement: values[0][a]: Invalid value: "${"v".repeat(64)}": must be no more than 63 characters`, 2],
    ["-a=b", `unable to parse requirement: <nil>: Invalid value: "-a": ${keyDetail}…`, 0],
    ["x, a_", `unable to parse requirement: <nil>: Invalid value: "a_": ${keyDetail}…`, 3],
    [`${"k".repeat(64)}`, `unable to parse requirement: <nil>: Invalid value: "${"k".repeat(64)}": name part must be no more than 63 characters`, 0],
    ["a/b/c=d", `unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name must consist of…`, 0],
    ["Example.com/a=b", `unable to parse requirement: <nil>: Invalid value: "Example.com/a": prefix part a lowercase RFC 1123 subdomain…`, 0],
    ["/a", `unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty`, 0],
  ];
  for (const [text, reason, position] of cases) {
    test(`${JSON.stringify(text)} fails at ${position}`, () => {
      assert.throws(
        () => parseLabelSelector(text),
        (err: unknown) => {
          assert.ok(err instanceof SelectorParseError);
          assert.equal(err.position, position);
          if (reason.endsWith("…")) assert.ok(err.reason.startsWith(reason.slice(0, -1)), err.reason);
          else assert.equal(err.reason, reason);
          assert.equal(err.message, `${err.reason} at position ${position}`);
          return true;
        },
      );
    });
  }
});

describe("labelSelectorFromMatchLabels builds metav1.LabelSelector selectors", () => {
  test("matchLabels and matchExpressions are ANDed and printed sorted by key", () => {
    const s = labelSelectorFromMatchLabels({ app: "web" }, [
      { key: "tier", operator: "In", values: ["b", "a"] },
      { key: "canary", operator: "DoesNotExist" },
      { key: "env", operator: "NotIn", values: ["dev"] },
      { key: "zone", operator: "Exists", values: [] },
    ]);
    assert.equal(s.toString(), "app=web,!canary,env notin (dev),tier in (a,b),zone");
    assert.equal(s.matches({ app: "web", tier: "a", zone: "z1" }), true);
    assert.equal(s.matches({ app: "web", tier: "a", zone: "z1", canary: "" }), false);
    assert.equal(s.matches({ app: "web", tier: "c", zone: "z1" }), false);
    assert.equal(s.matches({ app: "web", tier: "a", zone: "z1", env: "dev" }), false);
  });

  test("an empty selector matches everything", () => {
    assert.equal(labelSelectorFromMatchLabels().matches(undefined), true);
    assert.equal(labelSelectorFromMatchLabels({}, []).matches({ a: "b" }), true);
  });

  test("the null selector matches nothing", () => {
    assert.equal(NOTHING_SELECTOR.matches({}), false);
    assert.equal(NOTHING_SELECTOR.matches(undefined), false);
  });

  const invalid: [Parameters<typeof labelSelectorFromMatchLabels>, string][] = [
    [[undefined, [{ key: "a", operator: "Gt", values: ["1"] }]], `"Gt" is not a valid label selector operator`],
    [[undefined, [{ key: "a", operator: "In", values: [] }]], "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty"],
    [[undefined, [{ key: "a", operator: "Exists", values: ["x"] }]], `values: Invalid value: ["x"]: values set must be empty for exists and does not exist`],
    [[{ "a b": "c" }], `key: Invalid value: "a b": ${"name part must consist of"}`],
    [[{ a: "b c" }], `values[0][a]: Invalid value: "b c": a valid label`],
  ];
  for (const [args, reason] of invalid) {
    test(`refuses ${JSON.stringify(args)}`, () => {
      assert.throws(
        () => labelSelectorFromMatchLabels(...args),
        (err: unknown) => {
          assert.ok(err instanceof SelectorParseError);
          assert.equal(err.position, -1);
          assert.ok(err.message.startsWith(reason), err.message);
          return true;
        },
      );
    });
  }
});

describe("matching is fast enough for 150,000 pods", () => {
  test("one selector over 150,000 label sets", () => {
    const s = parseLabelSelector("app in (web,api),tier!=db,!canary,gen>3");
    const pods = Array.from({ length: 150_000 }, (_, i) => ({
      app: i % 3 === 0 ? "web" : "batch",
      tier: i % 5 === 0 ? "db" : "front",
      gen: String(i % 10),
    }));
    let matched = 0;
    for (const labels of pods) if (s.matches(labels)) matched++;
    // Its speed is bench:node-filter's to measure.
    assert.equal(matched, pods.filter((p, i) => i % 3 === 0 && i % 5 !== 0 && Number(p.gen) > 3).length);
  });
});
