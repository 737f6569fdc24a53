import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { escapeFieldValue, parseFieldSelector, type FieldRequirement } from "../../src/k8s/field-selector.js";
import { SelectorParseError } from "../../src/k8s/label-selector.js";

describe("parseFieldSelector accepts the apiserver grammar", () => {
  const cases: [string, FieldRequirement[]][] = [
    ["", []],
    ["spec.nodeName=node-1", [{ field: "spec.nodeName", operator: "=", value: "node-1" }]],
    ["spec.nodeName==node-1", [{ field: "spec.nodeName", operator: "=", value: "node-1" }]],
    ["status.phase!=Running", [{ field: "status.phase", operator: "!=", value: "Running" }]],
    ["spec.nodeName=", [{ field: "spec.nodeName", operator: "=", value: "" }]],
    ["metadata.name=a\\,b", [{ field: "metadata.name", operator: "=", value: "a,b" }]],
    ["a=x\\=y\\\\z", [{ field: "a", operator: "=", value: "x=y\\z" }]],
    ["a= b", [{ field: "a", operator: "=", value: " b" }]],
    [
      "b=2,a=1",
      [
        { field: "a", operator: "=", value: "1" },
        { field: "b", operator: "=", value: "2" },
      ],
    ],
    [
      "a=1,,b!=2,",
      [
        { field: "a", operator: "=", value: "1" },
        { field: "b", operator: "!=", value: "2" },
      ],
    ],
  ];
  for (const [text, requirements] of cases) {
    test(`${JSON.stringify(text)}`, () => {
      const s = parseFieldSelector(text);
      assert.deepEqual(s.requirements, requirements);
      assert.deepEqual(parseFieldSelector(s.toString()).requirements, requirements);
    });
  }
});

describe("FieldSelector.matches", () => {
  const pod: Record<string, string> = { "spec.nodeName": "node-1", "status.phase": "Running", "metadata.name": "a,b" };
  const get = (f: string): string | undefined => pod[f];
  const cases: [string, boolean][] = [
    ["", true],
    ["spec.nodeName=node-1", true],
    ["spec.nodeName=node-2", false],
    ["spec.nodeName!=node-2", true],
    ["spec.nodeName=node-1,status.phase!=Running", false],
    ["metadata.name=a\\,b", true],
    ["spec.schedulerName=", true],
    ["spec.schedulerName!=", false],
    ["spec.schedulerName!=x", true],
  ];
  for (const [text, expected] of cases) {
    test(`${JSON.stringify(text)} ${expected ? "matches" : "does not match"}`, () => {
      assert.equal(parseFieldSelector(text).matches(get), expected);
    });
  }
});

describe("parseFieldSelector reports what is wrong and where", () => {
  const cases: [string, string, number][] = [
    ["abc", "invalid selector: 'abc'; can't understand 'abc'", 0],
    ["a=b,cd", "invalid selector: 'a=b,cd'; can't understand 'cd'", 4],
    ["a=b=c", "invalid field selector: unescaped character in value: '='", 3],
    ["a=b\\", "invalid field selector: invalid escape sequence: \\", 3],
    ["a=b\\x", "invalid field selector: invalid escape sequence: \\x", 3],
  ];
  for (const [text, reason, position] of cases) {
    test(`${JSON.stringify(text)} fails at ${position}`, () => {
      assert.throws(
        () => parseFieldSelector(text),
        (err: unknown) => {
          assert.ok(err instanceof SelectorParseError);
          assert.equal(err.reason, reason);
          assert.equal(err.position, position);
          return true;
        },
      );
    });
  }
});

test("escapeFieldValue escapes backslash, comma and equals", () => {
  assert.equal(escapeFieldValue("a\\b,c=d"), "a\\\\b\\,c\\=d");
});
