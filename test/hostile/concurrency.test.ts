import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { FIELD_WEIGHTS } from "../../src/graphql/operation-limits.js";
import { request, type ClientRequest } from "node:http";
import { graphql, startTestApp } from "../support/app.js";
import { bearer, runOverWs, TOKENS, tokensFile, wsClient } from "../auth/support.js";
import { eventually } from "../support/sim-cluster.js";
import { servedMeanwhile } from "./support.js";

const STRICT = { accept: "application/graphql-response+json" };

/**
 * Requests that hold their operation's place: headers and half a body sent, the rest never.
 * The service counts them in flight (it is reading them) without any CPU spent, so the bound
 * is reached for certain, however fast or loaded the machine.
 */
async function holdOpen(url: string, count: number, headers: Record<string, string> = {}): Promise<ClientRequest[]> {
  const held: ClientRequest[] = [];
  for (let i = 0; i < count; i++) {
    const req = request(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json", "content-length": "100", ...headers } });
    req.on("error", () => {});
    req.write('{"query":"{ __typename');
    held.push(req);
  }
  // Each is in flight once the service has read its headers: a request past the bound says so.
  return held;
}
// Every node with its labels and conditions: well under the cost limit, a few ms at 200 nodes.
const HEAVY = "{ nodes(first: 2000) { edges { node { name labels { key value } conditions { type status reason message } } } } }";

describe("expensive fields cost their work, and operations in flight are bounded (issue 13, finding 6)", () => {
  let app: App;
  let url: string;
  const file = tokensFile();
  before(async () => ({ app, url } = await startTestApp({ auth: { tokensFile: file.path }, clusters: { kubeconfigs: [], contexts: [], simulate: 200 } })));
  after(async () => (await app.stop(), file.remove()));
  const viewer = { ...bearer(TOKENS.viewer), ...STRICT };

  test("250 aliased availability reports are refused as QUERY_TOO_COSTLY before any runs", async () => {
    const reports = Array.from({ length: 250 }, (_, i) => `r${i}: availabilityReport(from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z") { total { nodeCount } }`);
    const { status, body } = await graphql(url, `{ ${reports.join(" ")} }`, undefined, viewer);
    assert.equal(status, 400);
    // Each: its weight, the report object and its total.
    const cost = 250 * (FIELD_WEIGHTS["Query.availabilityReport"]! + 2);
    assert.deepEqual(body.errors![0].extensions, { code: "BAD_USER_INPUT", reason: "QUERY_TOO_COSTLY", cost, maxCost: 500_000 });
    const twenty = Array.from({ length: 19 }, (_, i) => `r${i}: availabilityReport(from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z") { total { nodeCount } }`);
    assert.equal((await graphql(url, `{ ${twenty.join(" ")} }`, undefined, viewer)).status, 200, "19 fit");
  });

  test("a caller with 16 operations in flight is refused the 17th at once: 429 with Retry-After; another caller is served meanwhile", async () => {
    const held = await holdOpen(url, 16, viewer);
    try {
      const refusal = await eventually(async () => {
        const response = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json", ...viewer }, body: JSON.stringify({ query: "{ __typename }" }) });
        return response.status === 429 ? response : (await response.arrayBuffer(), undefined);
      }, "the 17th refused");
      assert.equal(refusal.headers.get("retry-after"), "1");
      assert.deepEqual(await refusal.json(), {
        errors: [{ message: "Too many operations at once: at most 16 per caller; try again in 1 s", extensions: { code: "RATE_LIMITED", reason: "TOO_MANY_IN_FLIGHT", retryAfterSeconds: 1 } }],
      });
      await servedMeanwhile(url, bearer(TOKENS.admin));
    } finally {
      for (const req of held) req.destroy();
    }
    await eventually(async () => (await graphql(url, "{ __typename }", undefined, viewer)).status === 200, "served again once they are gone");
  });

  test("150 parallel heavy requests from one caller: each runs or is refused with 429, none waits behind the others", async () => {
    const responses = await Promise.all(
      Array.from({ length: 150 }, () => fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json", ...viewer }, body: JSON.stringify({ query: HEAVY }) })),
    );
    assert.ok(responses.every((r) => r.status === 200 || r.status === 429), responses.map((r) => r.status).join());
    await Promise.all(responses.map((r) => r.arrayBuffer()));
  });

  test("over graphql-ws the same bound holds per caller", async () => {
    const client = wsClient(url, { token: TOKENS.viewer });
    try {
      const outcomes = await Promise.all(Array.from({ length: 60 }, () => runOverWs(client, HEAVY)));
      const refused = outcomes.filter((o) => o.error?.[0]?.extensions?.reason === "TOO_MANY_IN_FLIGHT");
      assert.ok(refused.length > 0 && outcomes.every((o) => o.result?.data || refused.includes(o)), `${refused.length} refused`);
      assert.equal(refused[0]!.error[0].extensions.code, "RATE_LIMITED");
    } finally {
      await client.dispose();
    }
  });
});

describe("the overall bound (issue 13, finding 6)", () => {
  let app: App;
  let url: string;
  before(async () => ({ app, url } = await startTestApp({ clusters: { kubeconfigs: [], contexts: [], simulate: 200 }, limits: { maxInFlight: 4, maxInFlightPerCaller: 100 } })));
  after(() => app.stop());

  test("past it every caller is told 503 UNAVAILABLE SERVER_BUSY with Retry-After", async () => {
    const held = await holdOpen(url, 4, STRICT);
    try {
      const busy = await eventually(async () => {
        const response = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json", ...STRICT }, body: JSON.stringify({ query: "{ __typename }" }) });
        return response.status === 503 ? response : (await response.arrayBuffer(), undefined);
      }, "the fifth refused");
      assert.equal(busy.headers.get("retry-after"), "1");
      assert.deepEqual(await busy.json(), {
        errors: [{ message: "The service is running as many operations as it takes (4); try again in 1 s", extensions: { code: "UNAVAILABLE", reason: "SERVER_BUSY", retryAfterSeconds: 1 } }],
      });
    } finally {
      for (const req of held) req.destroy();
    }
  });
});
