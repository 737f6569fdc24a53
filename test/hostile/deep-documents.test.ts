import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { MAX_DOCUMENT_NESTING } from "../../src/graphql/operation-limits.js";
import { graphql, startTestApp } from "../support/app.js";
import { runOverWs, wsClient } from "../auth/support.js";
import { servedMeanwhile } from "./support.js";

const STRICT = { accept: "application/graphql-response+json" };
const TOO_DEEP = {
  message: `The document nests more than ${MAX_DOCUMENT_NESTING} brackets deep (selections, inline fragments, argument values)`,
  extensions: { code: "BAD_USER_INPUT", reason: "QUERY_TOO_DEEP", maxNesting: MAX_DOCUMENT_NESTING },
};

/** The issue's three documents that reached "Maximum call stack size exceeded". */
const ATTACKS: [string, string][] = [
  ["a 4,990-deep selection", "{" + "a{".repeat(4_990) + "b" + "}".repeat(4_990) + "}"],
  ["deeply nested list arguments", `{ nodes(filter: { roles: ${"[".repeat(3_000)}"x"${"]".repeat(3_000)} }) { totalCount } }`],
  ["3,000 nested inline fragments", "{" + "... on Query {".repeat(3_000) + "__typename" + "}".repeat(3_000) + "}"],
];

describe("documents too deep for the engine are refused before it recurses (issue 13, finding 9)", () => {
  let app: App;
  let url: string;
  before(async () => ({ app, url } = await startTestApp()));
  after(() => app.stop());

  for (const [what, query] of ATTACKS) {
    test(`${what}: 400 BAD_USER_INPUT QUERY_TOO_DEEP over HTTP and graphql-ws`, async () => {
      const attack = graphql(url, query, undefined, STRICT);
      await servedMeanwhile(url);
      const { status, body } = await attack;
      assert.equal(status, 400);
      assert.deepEqual(body, { errors: [TOO_DEEP] });
      const client = wsClient(url);
      try {
        const { error } = await runOverWs(client, query);
        assert.deepEqual(error, [TOO_DEEP]);
        assert.deepEqual((await runOverWs(client, "{ __typename }")).result, { data: { __typename: "Query" } }, "the connection keeps serving");
      } finally {
        await client.dispose();
      }
    });
  }

  test("a GET's query string is checked too", async () => {
    // Short enough for a URL: just past the bound.
    const query = "{" + "a{".repeat(MAX_DOCUMENT_NESTING) + "b" + "}".repeat(MAX_DOCUMENT_NESTING) + "}";
    const get = await fetch(`${url}/graphql?query=${encodeURIComponent(query)}`, { headers: { ...STRICT, "apollo-require-preflight": "1" } });
    assert.equal(get.status, 400);
    assert.deepEqual(await get.json(), { errors: [TOO_DEEP] });
  });

  test("nesting up to the bound reaches the usual limits: the depth limit answers, not the engine", async () => {
    const deep = "{" + "... on Query {".repeat(MAX_DOCUMENT_NESTING - 2) + "service { version }" + "}".repeat(MAX_DOCUMENT_NESTING - 2) + "}";
    const { status, body } = await graphql(url, deep, undefined, STRICT);
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(typeof body.data.service.version, "string");
  });

  test("a chain of 999 fragments (no bracket nesting) runs without overflowing anything", async () => {
    const chain = Array.from({ length: 999 }, (_, i) => `fragment F${i} on Query { ${i < 998 ? `...F${i + 1}` : "__typename"} }`);
    const { status, body } = await graphql(url, `{ ...F0 } ${chain.join(" ")}`, undefined, STRICT);
    assert.equal(status, 200, JSON.stringify(body.errors));
    assert.deepEqual(body, { data: { __typename: "Query" } });
  });
});
