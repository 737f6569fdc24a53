import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { UnexpectedErrors } from "../../src/graphql/unexpected-errors.js";
import { createLogger } from "../../src/log/logger.js";

function captured() {
  const lines: Record<string, any>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, errors: new UnexpectedErrors(createLogger("info", sink, "json")) };
}

test("the unexpected errors of one request are one log line: the first and how many", async () => {
  const { lines, errors } = captured();
  await errors.perRequest(async () => {
    for (let i = 0; i < 20_000; i++) errors.report(new TypeError(`broken ${i}`));
  });
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(lines.map((l) => ({ msg: l.msg, errors: l.errors, first: l.err?.message })), [{ msg: "unexpected error in a GraphQL operation", errors: 20_000, first: "broken 0" }]);
});

test("outside a request (a WebSocket operation) each error is its own line; a request without any logs nothing", async () => {
  const { lines, errors } = captured();
  await errors.perRequest(async () => {});
  errors.report(new Error("a"));
  errors.report(new Error("b"));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(lines.map((l) => l.err?.message), ["a", "b"]);
});
