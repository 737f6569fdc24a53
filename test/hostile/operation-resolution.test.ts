import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { startTestApp, type CapturedLogs } from "../support/app.js";
import { servedMeanwhile } from "./support.js";

const post = async (url: string, body: unknown, path = "/graphql") => {
  const response = await fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json", accept: "application/graphql-response+json" }, body: JSON.stringify(body) });
  const json = (await response.json()) as { errors?: { message: string; extensions?: { code?: string } }[] };
  return { status: response.status, message: json.errors?.[0]?.message, code: json.errors?.[0]?.extensions?.code };
};

const TWO = "query A { __typename } query B { __typename }";

describe("an operation that cannot be resolved is the caller's error, never a 500", () => {
  let app: App;
  let url: string;
  let logs: CapturedLogs;
  before(async () => ({ app, url, logs } = await startTestApp()));
  after(() => app.stop());

  for (const path of ["/graphql", "/subgraph"]) {
    test(`${path}: two operations without operationName, an unknown operationName, an APQ hash that does not match`, async () => {
      const before = logs.lines.length;
      assert.deepEqual(await post(url, { query: TWO }, path), { status: 400, code: "BAD_USER_INPUT", message: "Must provide operation name if query contains multiple operations." });
      assert.deepEqual(await post(url, { query: TWO, operationName: "C" }, path), { status: 400, code: "BAD_USER_INPUT", message: 'Unknown operation named "C".' });
      const hash = createHash("sha256").update("{ other }").digest("hex");
      assert.deepEqual(await post(url, { query: "{ __typename }", extensions: { persistedQuery: { version: 1, sha256Hash: hash } } }, path), {
        status: 400,
        code: "BAD_USER_INPUT",
        message: "provided sha does not match query",
      });
      // The named one still runs.
      assert.deepEqual(await post(url, { query: TWO, operationName: "B" }, path), { status: 200, code: undefined, message: undefined });
      const failures = logs.lines.slice(before).filter((line) => Number(line["level"]) >= 50 || /TypeError/.test(JSON.stringify(line)));
      assert.deepEqual(failures, []);
      await servedMeanwhile(url);
    });
  }
});
