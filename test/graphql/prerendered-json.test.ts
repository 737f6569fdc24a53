import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { markLargeAnswer, markPrerendered, PRERENDERED_FIELD, PrerenderedAnswers, PrerenderedJson, serialiseResult } from "../../src/performance/prerendered-json.js";

const bare = Object.assign(Object.create(null) as Record<string, unknown>, { b: 1, a: [null] });

/** Values a result can hold, each written as JSON.stringify writes it (with Apollo's newline). */
const CASES: [string, unknown][] = [
  ["nested objects and arrays", { data: { nodes: { totalCount: 2, edges: [{ node: { name: "a", labels: [{ key: "k", value: "v" }] } }, { node: null }] } } }],
  ["undefined keys left out, undefined items as null", { errors: undefined, data: { a: undefined, b: [undefined, () => 1, Symbol("s"), 0] }, extensions: undefined }],
  ["strings that need escaping, and beyond ASCII", { data: { s: 'quote " back \\ nl \n tab \t nul \u0000', u: "zoë 東京 🚀", lone: "\ud800 half" } }],
  ["numbers as JSON has them", { data: { z: -0, big: 1e21, small: 5e-7, f: 0.1 + 0.2, nan: NaN, inf: -Infinity } }],
  ["integer-like keys first, as property order has them", { data: { b: 1, 10: "ten", a: 2, 2: "two" } }],
  ["an object without a prototype, and one with toJSON", { data: { bare, at: new Date(Date.UTC(2026, 0, 15, 10, 30)) } }],
  ["an alias named like the prerendered field holds a plain value", { data: { [PRERENDERED_FIELD]: "a name" } }],
  ["booleans and null data", { data: null, errors: [{ message: "m", path: ["a", 0], extensions: { code: "X", ok: true } }] }],
];

describe("a result written by the serialiser is JSON.stringify's, byte for byte", () => {
  for (const [name, value] of CASES) {
    test(name, () => {
      assert.equal(serialiseResult(value as never).toString("utf8"), JSON.stringify(value) + "\n");
    });
  }

  test("a prerendered object's bytes stand in place of the object that holds them", () => {
    const node = new PrerenderedJson([Buffer.from('{"name":"n1"'), Buffer.from(',"zone":"zoë"}')]);
    const result = { data: { nodes: { totalCount: 2, edges: [{ node: { [PRERENDERED_FIELD]: node } }, { node: { [PRERENDERED_FIELD]: node } }] } } };
    assert.equal(serialiseResult(result).toString("utf8"), '{"data":{"nodes":{"totalCount":2,"edges":[{"node":{"name":"n1","zone":"zoë"}},{"node":{"name":"n1","zone":"zoë"}}]}}}\n');
    // Anything else that writes it with JSON.stringify sees the object too.
    assert.deepEqual(JSON.parse(JSON.stringify(node)), { name: "n1", zone: "zoë" });
  });
});

describe("prerendered answers between Apollo and the socket", () => {
  test("an ordinary result is Apollo's default text, and no token", () => {
    const answers = new PrerenderedAnswers();
    const text = answers.stringifyResult({ data: { a: 1 } });
    assert.equal(text, '{"data":{"a":1}}\n');
    assert.equal(answers.take(text, {}), undefined);
  });

  /** A result whose data holds one prerendered node named `name`, for the request whose context is `request`. */
  const prerenderedResult = (name: string, request: object) => {
    const data = { node: { [PRERENDERED_FIELD]: new PrerenderedJson([Buffer.from(`{"name":"${name}"}`)]) } };
    markPrerendered(data, request);
    return { data } as never;
  };

  test("a result holding prerendered bytes is handed over once, as those bytes", () => {
    const answers = new PrerenderedAnswers();
    const request = {};
    const token = answers.stringifyResult(prerenderedResult("n1", request));
    assert.notEqual(token[0], "{");
    assert.equal(answers.take(token, request)?.toString("utf8"), '{"data":{"node":{"name":"n1"}}}\n');
    assert.throws(() => answers.take(token, request), /taken twice or by another request/);
  });

  test("a live inventory answer without prerendered bytes is handed over once, as Apollo's default text in UTF-8", () => {
    const answers = new PrerenderedAnswers();
    const request = {};
    // Latin-1, beyond it, an astral character and a lone surrogate: each encoded as the socket would have.
    const data = { nodes: [{ name: "n1", labels: [{ key: "team", value: "çà ☃ 😀 \ud800" }] }] };
    markLargeAnswer(data, request);
    const token = answers.stringifyResult({ data, errors: [{ message: "partial", path: ["nodes"] }] } as never);
    assert.notEqual(token[0], "{");
    const expected = Buffer.from(JSON.stringify({ data, errors: [{ message: "partial", path: ["nodes"] }] }) + "\n", "utf8");
    assert.deepEqual(answers.take(token, request), expected);
    assert.throws(() => answers.take(token, request), /taken twice or by another request/);
  });

  test("any number of requests waiting at once each take their own answer", () => {
    const answers = new PrerenderedAnswers();
    // More than the 1,024 a shared table kept: the oldest were dropped, and their requests answered 500.
    const requests = Array.from({ length: 3000 }, () => ({}));
    // Every request stringifies before any of them takes, as when Apollo's work interleaves.
    const tokens = requests.map((request, i) => answers.stringifyResult(prerenderedResult(`n${i}`, request)));
    const taken = requests.map((request, i) => answers.take(tokens[i]!, request)?.toString("utf8"));
    assert.deepEqual(
      taken,
      Array.from({ length: 3000 }, (_, i) => `{"data":{"node":{"name":"n${i}"}}}\n`),
    );
  });

  test("a request cannot take another's answer", () => {
    const answers = new PrerenderedAnswers();
    const token = answers.stringifyResult(prerenderedResult("n1", {}));
    assert.throws(() => answers.take(token, {}), /taken twice or by another request/);
    assert.throws(() => answers.take(token, undefined), /taken twice or by another request/);
  });
});
