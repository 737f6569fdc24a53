import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { getIntrospectionQuery } from "graphql";
import type { App } from "../../src/app/create-app.js";
import { graphql, outcome, ready, startTestApp, type CapturedLogs } from "../support/app.js";
import { bearer, runOverWs, tokensFile, TOKENS, wsClient } from "./support.js";

const STRICT = { accept: "application/graphql-response+json" };
const CORDON = `mutation { cordonNode(name: "x") { name } }`;

describe("limits on what an operation may ask", () => {
  let app: App;
  let url: string;
  let logs: CapturedLogs;
  const file = tokensFile();
  before(async () => ({ app, url, logs } = await startTestApp({ auth: { tokensFile: file.path, mutationRateLimit: 2 }, limits: { maxQueryDepth: 5, maxQueryCost: 500_000 } })));
  after(async () => (await app.stop(), file.remove()));

  const viewer = { ...bearer(TOKENS.viewer), ...STRICT };

  const DEEP = "{ nodes { edges { node { activeDrain { options { force } } } } } }";

  test("a query deeper than the limit is BAD_USER_INPUT with reason QUERY_TOO_DEEP; one at the limit runs", async () => {
    const deep = await graphql(url, DEEP, undefined, viewer);
    assert.equal(deep.status, 400);
    assert.deepEqual(deep.body.errors, [
      { message: "The operation nests 6 levels deep; at most 5 are allowed", extensions: { code: "BAD_USER_INPUT", reason: "QUERY_TOO_DEEP", depth: 6, maxDepth: 5 } },
    ]);
    const fragments = await graphql(url, "{ nodes { ...E } } fragment E on NodeConnection { edges { node { activeDrain { options { force } } } } }", undefined, viewer);
    assert.equal(fragments.body.errors![0].extensions.reason, "QUERY_TOO_DEEP", "fragments are followed");
    const atLimit = await graphql(url, "{ nodes { edges { node { conditionTransitions { to } } } } }", undefined, viewer);
    assert.equal(atLimit.status, 200);
    assert.equal(atLimit.body.data.nodes.edges.length, 3);
  });

  test("the standard introspection query is not held to the depth limit", async () => {
    const { status, body } = await graphql(url, getIntrospectionQuery(), undefined, viewer);
    assert.equal(status, 200);
    assert.ok(body.data.__schema.types.some((t: { name: string }) => t.name === "Whoami"));
  });

  test("a query whose lists multiply past the cost limit is BAD_USER_INPUT with reason QUERY_TOO_COSTLY, counting variables", async () => {
    const query = "query($n: Int) { nodes(first: 5000) { edges { node { maintenanceEvents(first: $n) { kind } } } } }";
    // 5000 nodes × 500 events each: 2.5 million objects.
    const refused = await graphql(url, query, { n: 500 }, viewer);
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body.errors![0].extensions, { code: "BAD_USER_INPUT", reason: "QUERY_TOO_COSTLY", cost: 2_510_001, maxCost: 500_000 });
    assert.match(refused.body.errors![0].message, /may resolve 2510001 objects; at most 500000/);
    assert.equal((await graphql(url, query, { n: 5 }, viewer)).status, 200);
    const sideBySide = "query($n: Int) { nodes(first: 5000) { edges { cursor } } conditionTransitions(first: $n) { edges { node { to } } } }";
    assert.equal((await graphql(url, sideBySide, { n: 5000 }, viewer)).status, 200, "big pages side by side add up, they do not multiply");
  });

  test("depth and cost hold over WebSocket too", async () => {
    const client = wsClient(url, { token: TOKENS.viewer });
    try {
      assert.equal((await runOverWs(client, DEEP)).error?.[0].extensions.reason, "QUERY_TOO_DEEP");
      const costly = await runOverWs(client, "{ nodes(first: 2000) { edges { node { conditionTransitions(first: 500) { to } } } } }");
      assert.equal(costly.error?.[0].extensions.reason, "QUERY_TOO_COSTLY");
    } finally {
      await client.dispose();
    }
  });

  test("a document of more than 10,000 tokens is refused before it is validated", async () => {
    const { body } = await graphql(url, `{ ${"__typename ".repeat(10_001)} }`, undefined, viewer);
    assert.equal(body.errors![0].extensions.code, "GRAPHQL_PARSE_FAILED");
    assert.match(body.errors![0].message, /Document contains more (than|that) 10000 tokens/);
  });

  test("a body over 1 MiB is 413, for an authenticated caller too", async () => {
    const response = await fetch(`${url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", ...bearer(TOKENS.admin) },
      body: JSON.stringify({ query: `{ __typename ${" ".repeat(1024 * 1024)} }` }),
    });
    assert.equal(response.status, 413);
    assert.deepEqual(await response.json(), { errors: [{ message: "The request body is larger than 1048576 bytes", extensions: { code: "BAD_USER_INPUT" } }] });
  });

  test("rateLimit says what the operation costs and what the caller's allowance holds, as GitHub's does", async () => {
    await ready(url);
    const admin = { ...bearer(TOKENS.admin), ...STRICT };
    const query = "{ rateLimit { cost maxCost limit remaining resetAt } nodes(first: 7) { edges { node { name } } } }";
    const before = (await graphql(url, query, undefined, admin)).body.data.rateLimit;
    // rateLimit 1, the connection 1, its 7 edges and their 7 nodes.
    assert.deepEqual(before, { cost: 1 + 1 + 7 + 7, maxCost: 500_000, limit: 2, remaining: 2, resetAt: null });
    assert.deepEqual(outcome(await graphql(url, CORDON, undefined, bearer(TOKENS.admin))), { status: 200, code: "NOT_FOUND" });
    const after = (await graphql(url, "{ rateLimit { remaining resetAt } }", undefined, admin)).body.data.rateLimit;
    assert.equal(after.remaining, 1);
    const refillsIn = Date.parse(after.resetAt) - Date.now();
    assert.ok(refillsIn > 0 && refillsIn <= 30_000, after.resetAt);
  });

  test("mutations are rate limited per subject: 429, Retry-After, RATE_LIMITED; others unaffected", async () => {
    const operator = bearer(TOKENS.operator);
    await ready(url);
    // Within the allowance, the cordon itself answers: there is no node "x".
    for (let i = 0; i < 2; i++) assert.deepEqual(outcome(await graphql(url, CORDON, undefined, operator)), { status: 200, code: "NOT_FOUND" });
    const response = await fetch(`${url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": "limited", ...operator },
      body: JSON.stringify({ query: CORDON }),
    });
    assert.equal(response.status, 429);
    assert.equal(response.headers.get("retry-after"), "30");
    assert.deepEqual(await response.json(), {
      errors: [
        {
          message: "Too many mutations: at most 2 a minute; try again in 30 s",
          extensions: { code: "RATE_LIMITED", reason: "RATE_LIMITED", retryAfterSeconds: 30 },
        },
      ],
    });
    assert.equal(logs.lines.find((l) => l.audit === "mutation" && l.requestId === "limited")?.outcome, "RATE_LIMITED");
    assert.equal((await graphql(url, "{ whoami { subject } }", undefined, operator)).status, 200, "queries are not limited");

    const overWs = wsClient(url, { token: TOKENS.operator });
    try {
      const refused = await runOverWs(overWs, CORDON);
      assert.equal(refused.error?.[0].extensions.reason, "RATE_LIMITED", "the same bucket over WebSocket");
    } finally {
      await overWs.dispose();
    }

    // Each mutation field counts: three aliases are three mutations, more than a bucket of 2.
    const admin = bearer(TOKENS.admin);
    const triple = await graphql(url, `mutation { a: cordonNode(name: "x") { name } b: cordonNode(name: "y") { name } c: cordonNode(name: "z") { name } }`, undefined, admin);
    assert.equal(triple.status, 429);
    assert.deepEqual(outcome(await graphql(url, CORDON, undefined, admin)), { status: 200, code: "NOT_FOUND" }, "the admin's own bucket is untouched");
  });
});

describe("CSRF prevention", () => {
  let app: App;
  let url: string;
  let logs: CapturedLogs;
  before(async () => ({ app, url, logs } = await startTestApp()));
  after(() => app.stop());

  test("a mutation in a simple request (what any web page can make a browser send) is refused and never runs", async () => {
    for (const contentType of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      const response = await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "content-type": contentType, "x-request-id": "csrf" },
        body: JSON.stringify({ query: CORDON }),
      });
      assert.equal(response.status, 400, contentType);
      const body = (await response.json()) as any;
      assert.equal(body.errors![0].extensions.code, "BAD_USER_INPUT");
      assert.match(body.errors[0].message, /Cross-Site Request Forgery/);
    }
    assert.deepEqual(logs.lines.filter((l) => l.audit === "mutation" && l.requestId === "csrf"), [], "nothing reached the mutation");
  });

  test("the same mutation as JSON reaches the policy (and is audited)", async () => {
    await graphql(url, CORDON, undefined, { "x-request-id": "json-mutation" });
    assert.equal(logs.lines.filter((l) => l.audit === "mutation" && l.requestId === "json-mutation").length, 1);
  });
});
