import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { serverAudits } from "graphql-http";
import type { App } from "../../src/app/create-app.js";
import { startTestApp } from "../support/app.js";
import { ACCEPTED_AUDITS as ACCEPTED } from "../support/http-audits.js";

describe("GraphQL over HTTP conformance (graphql-http server audits)", () => {
  let app: App;
  let url: string;
  before(async () => ({ app, url } = await startTestApp()));
  after(() => app.stop());

  for (const audit of serverAudits({ url: () => `${url}/graphql` })) {
    test(`${audit.id} ${audit.name}`, async () => {
      const result = await audit.fn();
      if (result.status === "ok") return;
      const why = ACCEPTED[audit.id];
      assert.ok(why?.startsWith(result.status), `${result.status}: ${result.reason}`);
    });
  }
});
