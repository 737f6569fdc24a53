import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { graphql, startTestApp } from "../support/app.js";

describe("a subscription sent over HTTP", () => {
  let app: App;
  let url: string;
  before(async () => ({ app, url } = await startTestApp()));
  after(() => app.stop());

  test("is 400 BAD_USER_INPUT saying subscriptions go over graphql-ws (it was an INTERNAL_SERVER_ERROR)", async () => {
    const { status, body } = await graphql(url, "subscription { maintenanceEvents { kind } }", undefined, { accept: "application/graphql-response+json" });
    assert.equal(status, 400);
    assert.deepEqual(
      body.errors!.map((e) => [e.extensions.code, e.message]),
      [["BAD_USER_INPUT", "subscriptions are served over graphql-ws (protocol graphql-transport-ws) on ws://…/graphql, not over HTTP"]],
    );
    assert.equal(body.data, undefined);
  });
});
