import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { graphql, startTestApp, type CapturedLogs } from "../support/app.js";
import { bearer, TOKENS, tokensFile } from "../auth/support.js";
import { servedMeanwhile } from "./support.js";

const STRICT = { accept: "application/graphql-response+json" };
const CORDON = "mutation($n: String!, $r: String) { cordonNode(name: $n, reason: $r) { name } }";

describe("refused mutations cannot fill the audit log (issue 13, finding 5)", () => {
  let app: App;
  let url: string;
  let logs: CapturedLogs;
  const file = tokensFile();
  before(async () => ({ app, url, logs } = await startTestApp({ auth: { tokensFile: file.path, mutationRateLimit: 3 } })));
  after(async () => (await app.stop(), file.remove()));

  test("a viewer's mutation with a 1 MB variable is 403 and its audit line is small, saying how long the value was", async () => {
    const huge = "x".repeat(1_000_000);
    const deep = JSON.parse("[".repeat(2_000) + "]".repeat(2_000));
    const mark = logs.lines.length;
    const refused = await graphql(url, CORDON, { n: huge, r: "why", nested: deep }, { ...bearer(TOKENS.viewer), ...STRICT });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.errors![0].extensions.code, "FORBIDDEN");
    const audit = logs.lines.slice(mark).filter((l) => l["audit"] === "mutation");
    assert.equal(audit.length, 1);
    assert.ok(JSON.stringify(audit[0]).length < 4_000, `audit line of ${JSON.stringify(audit[0]).length} bytes`);
    const variables = audit[0]!["variables"] as Record<string, unknown>;
    assert.equal(variables["n"], `${"x".repeat(256)}… [1000000 characters, truncated]`);
    assert.equal(variables["r"], "why");
    assert.match(JSON.stringify(variables["nested"]), /\[nested deeper, truncated\]/);
  });

  test("refusals count against the caller's allowance: past it they are 429 RATE_LIMITED, with Retry-After", async () => {
    const viewer = { ...bearer(TOKENS.viewer), ...STRICT };
    // The first test's refusal took one of three; two more 403s, then the allowance is spent.
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await graphql(url, CORDON, { n: "general-a-0" }, viewer)).status);
    assert.deepEqual(statuses, [403, 403, 429, 429]);
    const limited = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json", ...viewer }, body: JSON.stringify({ query: CORDON, variables: { n: "x" } }) });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get("retry-after")) >= 1);
    const body = (await limited.json()) as any;
    assert.equal(body.errors[0].extensions.reason, "RATE_LIMITED");
    await servedMeanwhile(url, bearer(TOKENS.viewer));
    // Another caller's allowance is its own.
    assert.equal((await graphql(url, CORDON, { n: "nonexistent" }, { ...bearer(TOKENS.operator), ...STRICT })).body.errors![0].extensions.code, "NOT_FOUND");
  });
});
