import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { graphql, ready, startTestApp, type CapturedLogs } from "../support/app.js";
import { eventually } from "../support/sim-cluster.js";
import { servedMeanwhile } from "./support.js";

const STRICT = { "content-type": "application/json", accept: "application/graphql-response+json" };

async function subgraph(url: string, query: string, variables?: Record<string, unknown>): Promise<{ status: number; body: { data?: any; errors?: any[] } }> {
  const response = await fetch(`${url}/subgraph`, { method: "POST", headers: STRICT, body: JSON.stringify({ query, variables }) });
  return { status: response.status, body: (await response.json()) as { data?: any; errors?: any[] } };
}

const ENTITIES = "query($r: [_Any!]!) { _entities(representations: $r) { ... on Node { name pods { name namespace } events(first: 500) { reason } } } }";
const nodes = (n: number) => Array.from({ length: n }, (_, i) => ({ __typename: "Node", id: `sim/general-a-${i}` }));


/** A request to /subgraph whose body never ends: it holds its in-flight slot until `end()`. */
function held(url: string): Promise<{ end(): void }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/subgraph`, { method: "POST", headers: { "content-type": "application/json", "content-length": "100" } });
    req.on("error", () => {});
    req.write("{", (error) => (error ? reject(error) : resolve({ end: () => req.destroy() })));
  });
}

describe("/subgraph goes through the same limits as /graphql", () => {
  let app: App;
  let url: string;
  let logs: CapturedLogs;
  before(async () => {
    ({ app, url, logs } = await startTestApp({ limits: { maxInFlightPerCaller: 3 } }));
    await ready(url);
  });
  after(() => app.stop());

  test("_entities is costed by its representations: 2,000 selecting pods and events are refused before they run, 20,000 are too many", async () => {
    const answer = subgraph(url, ENTITIES, { r: nodes(2_000) });
    await servedMeanwhile(url);
    const { status, body } = await answer;
    assert.equal(status, 400);
    assert.deepEqual({ code: body.errors?.[0]?.extensions?.code, reason: body.errors?.[0]?.extensions?.reason }, { code: "BAD_USER_INPUT", reason: "QUERY_TOO_COSTLY" });
    const many = subgraph(url, "query($r: [_Any!]!) { _entities(representations: $r) { ... on Node { name pods { name namespace } } } }", { r: nodes(20_000) });
    await servedMeanwhile(url);
    const names = await many;
    assert.deepEqual(names.body.errors?.map((e) => ({ code: e.extensions.code, message: e.message })), [{ code: "BAD_USER_INPUT", message: "_entities names 20000 representations; at most 5000 are allowed" }]);
    assert.equal(names.body.data, null);
  });

  test("a malformed representation is BAD_USER_INPUT for that entity alone, many refuse the call, and nothing is logged as an error", async () => {
    const id = (await graphql(url, "{ nodes(first: 1) { edges { node { id name } } } }")).body.data.nodes.edges[0].node;
    const before = logs.lines.length;
    const bad = Array.from({ length: 99 }, (_, i) => (i % 3 === 0 ? { __typename: "Node" } : i % 3 === 1 ? { __typename: "Pod", id: "x" } : "not an object"));
    const { status, body } = await subgraph(url, "query($r: [_Any!]!) { _entities(representations: $r) { ... on Node { name } } }", { r: [{ __typename: "Node", id: id.id }, ...bad] });
    assert.equal(status, 200);
    assert.deepEqual(body.data._entities[0], { name: id.name });
    assert.equal(body.data._entities.length, 100);
    assert.ok(body.data._entities.slice(1).every((entity: unknown) => entity === null));
    assert.equal(body.errors?.length, 99);
    assert.deepEqual(new Set(body.errors!.map((e) => e.extensions.code)), new Set(["BAD_USER_INPUT"]));
    assert.deepEqual(body.errors!.slice(0, 3).map((e) => ({ message: e.message, path: e.path })), [
      { message: "representations[1]: a Node is named by its id, a string", path: ["_entities", 1] },
      { message: "representations[2]: __typename must be one of Node, Cluster", path: ["_entities", 2] },
      { message: "representations[3]: a representation is an object with __typename and its key", path: ["_entities", 3] },
    ]);
    // 2,000 malformed ones are one error for the call, not 2,000.
    const many = await subgraph(url, "query($r: [_Any!]!) { _entities(representations: $r) { ... on Node { name } } }", { r: Array.from({ length: 2_000 }, () => ({ __typename: "Node" })) });
    assert.deepEqual(many.body.errors?.map((e) => ({ code: e.extensions.code, message: e.message })), [
      { code: "BAD_USER_INPUT", message: "2000 representations are malformed (at most 100 are answered one by one); the first, representations[0]: a Node is named by its id, a string" },
    ]);
    assert.deepEqual(logs.lines.slice(before).filter((line) => Number(line["level"]) >= 50), []);
    await servedMeanwhile(url);
  });

  test("held requests take in-flight slots as on /graphql; the next is refused 429 at once", async () => {
    const holds = [await held(url), await held(url), await held(url)];
    try {
      // Once the server has read the three requests' headers, their slots are taken.
      const refused = await eventually(async () => {
        const answer = await subgraph(url, "{ __typename }");
        return answer.status === 429 ? answer : undefined;
      }, "a fourth request refused");
      assert.equal(refused.body.errors?.[0]?.extensions?.reason, "TOO_MANY_IN_FLIGHT");
    } finally {
      for (const hold of holds) hold.end();
    }
    await eventually(async () => (await subgraph(url, "{ __typename }")).status === 200, "the slots freed");
  });

  test("a subscription sent there is a 400 saying where subscriptions are served", async () => {
    const { status, body } = await subgraph(url, "subscription { nodeStatusChanged { name } }");
    assert.equal(status, 400);
    assert.equal(body.errors?.[0]?.extensions?.code, "BAD_USER_INPUT");
    assert.match(body.errors![0].message, /^subscriptions are served over graphql-ws/);
  });
});

describe("/subgraph with --introspection false", () => {
  let app: App;
  let url: string;
  before(async () => ({ app, url } = await startTestApp({ introspection: false })));
  after(() => app.stop());

  test("_service { sdl } is refused like __schema", async () => {
    const sdl = await subgraph(url, "{ _service { sdl } }");
    assert.equal(sdl.status, 400);
    assert.deepEqual(sdl.body.errors?.map((e) => ({ code: e.extensions.code, message: e.message })), [
      { code: "GRAPHQL_VALIDATION_FAILED", message: "The subgraph's SDL is not served: introspection is disabled on this server" },
    ]);
    const schema = await subgraph(url, "{ __schema { types { name } } }");
    assert.equal(schema.status, 400);
    assert.equal(schema.body.errors?.[0]?.extensions.code, "GRAPHQL_VALIDATION_FAILED");
    await servedMeanwhile(url);
  });
});
