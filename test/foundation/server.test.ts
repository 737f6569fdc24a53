import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import type { App } from "../../src/app/create-app.js";
import { graphql, startTestApp, type CapturedLogs } from "../support/app.js";

describe("the GraphQL server", () => {
  let app: App;
  let url: string;
  let logs: CapturedLogs;
  before(async () => ({ app, url, logs } = await startTestApp()));
  after(() => app.stop());

  test("answers { __typename } over HTTP POST", async () => {
    const { status, body } = await graphql(url, "{ __typename }");
    assert.equal(status, 200);
    assert.deepEqual(body, { data: { __typename: "Query" } });
  });

  test("answers GET queries that carry a CSRF-safe header", async () => {
    const response = await fetch(`${url}/graphql?query=${encodeURIComponent("{ service { database { kind reachable } } }")}`, {
      headers: { "apollo-require-preflight": "true" },
    });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { data: { service: { database: { kind: "pglite", reachable: true } } } });
  });

  test("refuses a simple cross-site GET (CSRF) with a contract code", async () => {
    const response = await fetch(`${url}/graphql?query=${encodeURIComponent("{ __typename }")}`);
    assert.equal(response.status, 400);
    const body = (await response.json()) as { errors: { extensions: { code: string } }[] };
    assert.equal(body.errors[0]!.extensions.code, "BAD_USER_INPUT");
  });

  test("/healthz and /readyz answer JSON", async () => {
    const health = await fetch(`${url}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: "ok" });
    const ready = await fetch(`${url}/readyz`);
    assert.equal(ready.status, 200);
    const body = (await ready.json()) as { status: string; checks: Record<string, { ok: boolean }> };
    assert.equal(body.status, "ready");
    assert.deepEqual(Object.keys(body.checks).sort(), ["cluster:sim", "database", "history"]);
    assert.deepEqual(body.checks.database, { ok: true });
    // The history check may carry a detail while the first records are being written.
    assert.ok(Object.values(body.checks).every((check) => check.ok));
  });

  test("a query for a field that does not exist is GRAPHQL_VALIDATION_FAILED naming the field", async () => {
    const { status, body } = await graphql(url, "{ nodez }", undefined, { accept: "application/graphql-response+json" });
    assert.equal(status, 400);
    assert.equal(body.errors![0].extensions.code, "GRAPHQL_VALIDATION_FAILED");
    assert.match(body.errors![0].message, /Cannot query field "nodez" on type "Query"/);
  });

  test("a syntax error is GRAPHQL_PARSE_FAILED, with 200 for clients that only accept application/json", async () => {
    const { status, body } = await graphql(url, "{ service ", undefined, { accept: "application/json" });
    assert.equal(status, 200);
    assert.equal(body.errors![0].extensions.code, "GRAPHQL_PARSE_FAILED");
    assert.match(body.errors![0].message, /Syntax Error/);
  });

  test("an automatic persisted query's unknown hash is PERSISTED_QUERY_NOT_FOUND, as Apollo Client and urql expect", async () => {
    const query = "{ service { version } }";
    const extensions = { persistedQuery: { version: 1, sha256Hash: createHash("sha256").update(query).digest("hex") } };
    const post = (body: Record<string, unknown>) =>
      fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<any>);
    const miss = await post({ extensions });
    assert.deepEqual(miss.errors, [{ message: "PersistedQueryNotFound", extensions: { code: "PERSISTED_QUERY_NOT_FOUND" } }]);
    assert.ok((await post({ query, extensions })).data.service.version);
    assert.ok((await post({ extensions })).data.service.version);
  });

  test("a body that is not JSON is a 400 with BAD_USER_INPUT", async () => {
    const response = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: "{nope" });
    assert.equal(response.status, 400);
    assert.deepEqual(await response.json(), {
      errors: [{ message: "The request body is not valid JSON", extensions: { code: "BAD_USER_INPUT" } }],
    });
  });

  test("a body over 1 MiB is refused with 413", async () => {
    const query = `{ __typename ${" ".repeat(1024 * 1024)} }`;
    const response = await fetch(`${url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query }),
    });
    assert.equal(response.status, 413);
  });

  test("every request is logged with a request id, echoed to the caller", async () => {
    const response = await fetch(`${url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": "trace-123" },
      body: JSON.stringify({ query: "{ __typename }" }),
    });
    assert.equal(response.headers.get("x-request-id"), "trace-123");
    const line = logs.lines.find((l) => l.requestId === "trace-123" && l.msg === "request");
    assert.ok(line, "a log line for the request");
    assert.equal(line.status, 200);
    assert.equal(line.path, "/graphql");
  });

  test("the landing page is local: it loads nothing from the internet", async () => {
    const response = await fetch(`${url}/`);
    assert.equal(response.status, 200);
    const html = await response.text();
    assert.match(html, /node-inventory/);
    assert.doesNotMatch(html, /<script|<link|src="http|href="http/);
  });

  test("graphql-ws: a client connects on /graphql and runs an operation", async () => {
    const client = createClient({ url: url.replace(/^http/, "ws") + "/graphql", webSocketImpl: WebSocket, retryAttempts: 0 });
    try {
      const result = await new Promise((resolve, reject) => {
        let value: unknown;
        client.subscribe({ query: "{ __typename service { version } }" }, {
          next: (v) => (value = v),
          error: reject,
          complete: () => resolve(value),
        });
      });
      assert.deepEqual(result, { data: { __typename: "Query", service: { version: "0.1.0" } } });
    } finally {
      await client.dispose();
    }
  });

  test("graphql-ws: errors carry the same codes as over HTTP", async () => {
    const client = createClient({ url: url.replace(/^http/, "ws") + "/graphql", webSocketImpl: WebSocket, retryAttempts: 0 });
    try {
      const errors = await new Promise<readonly { message: string; extensions?: Record<string, unknown> }[]>((resolve, reject) => {
        client.subscribe({ query: "{ nodez }" }, { next: () => reject(new Error("no data expected")), error: (e) => resolve(e as never), complete: () => {} });
      });
      assert.equal(errors[0]!.extensions?.code, "GRAPHQL_VALIDATION_FAILED");
      const syntax = await new Promise<readonly { extensions?: Record<string, unknown> }[]>((resolve, reject) => {
        client.subscribe({ query: "{ service " }, { next: () => reject(new Error("no data expected")), error: (e) => resolve(e as never), complete: () => {} });
      });
      assert.equal(syntax[0]!.extensions?.code, "GRAPHQL_PARSE_FAILED");
    } finally {
      await client.dispose();
    }
  });
});

describe("shutdown", () => {
  test("right after start: closes open WebSockets with 1001, stops listening within seconds, and is idempotent", async () => {
    // Stopping while the watches are still opening once hung until their server-side timeout.
    const { app, url } = await startTestApp();
    const socket = new WebSocket(url.replace(/^http/, "ws") + "/graphql", "graphql-transport-ws");
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
    const began = Date.now();
    await Promise.all([app.stop(), app.stop()]);
    assert.ok(Date.now() - began < 5_000, `stopped in ${Date.now() - began} ms`);
    assert.equal(await closed, 1001);
    assert.equal(app.state, "stopped");
    await assert.rejects(fetch(`${url}/healthz`));
    await app.stop();
  });
});
