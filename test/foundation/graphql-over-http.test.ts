import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { serverAudits } from "graphql-http";
import type { App } from "../../src/app/create-app.js";
import { startTestApp } from "../support/app.js";

/**
 * Audits that do not end "ok" by a deliberate choice, each explained in the README
 * ("GraphQL over HTTP conformance"). Any other result that is not ok fails the suite.
 */
const ACCEPTED: Record<string, string> = {
  // Optional (MAY) GET forms that CSRF prevention refuses: a GET without a JSON content
  // type or a preflight header could be sent by any web page in the user's browser.
  "5A70": "notice: GET from an HTML form is refused by CSRF prevention",
  D6D5: "notice: GET without a preflight header is refused by CSRF prevention",
  "6A70": "notice: GET without a preflight header is refused by CSRF prevention",
};

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
