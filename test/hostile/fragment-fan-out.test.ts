import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { MAX_EXPANDED_SELECTIONS, MAX_FRAGMENT_SPREADS } from "../../src/graphql/operation-limits.js";
import { graphql, startTestApp } from "../support/app.js";
import { bearer, runOverWs, tokensFile, TOKENS, wsClient } from "../auth/support.js";
import { fanOutDocument, servedMeanwhile } from "./support.js";

describe("fragment fan-out (issue 13, finding 1)", () => {
  let app: App;
  let url: string;
  const file = tokensFile();
  before(async () => ({ app, url } = await startTestApp({ auth: { tokensFile: file.path } })));
  after(async () => (await app.stop(), file.remove()));
  // The GraphQL-over-HTTP media type, under which a refused request is a 4xx.
  const viewer = { ...bearer(TOKENS.viewer), accept: "application/graphql-response+json" };

  test("a viewer's 26 doubling fragments are refused before execution as QUERY_TOO_COMPLEX, and others are served meanwhile", async () => {
    // Ten at once: before the fix each one froze every request for tens of seconds.
    const attacks = Array.from({ length: 10 }, () => graphql(url, fanOutDocument(26), undefined, viewer));
    await servedMeanwhile(url, viewer);
    for (const { status, body } of await Promise.all(attacks)) {
      assert.equal(status, 400);
      assert.deepEqual(body.errors, [
        {
          message: `The operation amounts to ${2 ** 25} field selections once its fragments are spread; at most ${MAX_EXPANDED_SELECTIONS} are allowed`,
          extensions: { code: "BAD_USER_INPUT", reason: "QUERY_TOO_COMPLEX", selections: 2 ** 25, maxSelections: MAX_EXPANDED_SELECTIONS },
        },
      ]);
    }
  });

  test("a fragment spread many times at one level is measured once: 1,000 spreads of a big fragment run", async () => {
    const spreadEverywhere = `{ ${Array.from({ length: MAX_FRAGMENT_SPREADS }, () => "...S").join(" ")} } fragment S on Query { service { version } }`;
    const { status, body } = await graphql(url, spreadEverywhere, undefined, viewer);
    assert.equal(status, 200, JSON.stringify(body.errors));
    assert.equal(typeof body.data.service.version, "string");
  });

  test("more fragment spreads than allowed are refused with how many there were", async () => {
    const spreads = MAX_FRAGMENT_SPREADS + 1;
    const many = `{ ${Array.from({ length: spreads }, () => "...S").join(" ")} } fragment S on Query { __typename }`;
    const { status, body } = await graphql(url, many, undefined, viewer);
    assert.equal(status, 400);
    assert.deepEqual(body.errors![0].extensions, { code: "BAD_USER_INPUT", reason: "QUERY_TOO_COMPLEX", spreads, maxSpreads: MAX_FRAGMENT_SPREADS });
  });

  test("a mutation's fan-out is refused too (its audit never walks it exponentially)", async () => {
    const operator = { ...bearer(TOKENS.operator), accept: "application/graphql-response+json" };
    const { status, body } = await graphql(url, fanOutDocument(26, "Mutation"), undefined, operator);
    assert.equal(status, 400);
    assert.equal(body.errors![0].extensions.reason, "QUERY_TOO_COMPLEX");
    await servedMeanwhile(url, viewer);
  });

  test("over graphql-ws the same document is refused on its subscribe, and the connection keeps serving", async () => {
    const client = wsClient(url, { token: TOKENS.viewer });
    try {
      const attacks = Array.from({ length: 10 }, () => runOverWs(client, fanOutDocument(26)));
      await servedMeanwhile(url, viewer);
      for (const { error } of await Promise.all(attacks)) {
        assert.equal(error?.[0].extensions.code, "BAD_USER_INPUT");
        assert.equal(error?.[0].extensions.reason, "QUERY_TOO_COMPLEX");
      }
      assert.deepEqual((await runOverWs(client, "{ __typename }")).result, { data: { __typename: "Query" } });
    } finally {
      await client.dispose();
    }
  });
});
