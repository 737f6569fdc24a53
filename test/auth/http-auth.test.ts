import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { graphql, ready, startTestApp, type CapturedLogs } from "../support/app.js";
import { eventually } from "../support/sim-cluster.js";
import { bearer, TOKEN_ENTRIES, tokensFile, TOKENS } from "./support.js";

const WHOAMI = "{ whoami { subject role via } }";
const CORDON = `mutation { cordonNode(name: "x") { name } }`;

/** The audit lines of one request. */
const auditLines = (logs: CapturedLogs, requestId: string) => logs.lines.filter((l) => l.audit === "mutation" && l.requestId === requestId);

describe("callers with bearer tokens over HTTP", () => {
  let app: App;
  let url: string;
  let logs: CapturedLogs;
  const file = tokensFile();
  before(async () => ({ app, url, logs } = await startTestApp({ auth: { tokensFile: file.path } })));
  after(async () => (await app.stop(), file.remove()));

  test("an anonymous caller gets 401 UNAUTHENTICATED on every operation, with a Bearer challenge", async () => {
    for (const query of [WHOAMI, "{ __typename }", CORDON, "subscription { maintenanceEvents { kind } }"]) {
      const response = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query }) });
      assert.equal(response.status, 401, query);
      assert.equal(response.headers.get("www-authenticate"), 'Bearer realm="node-inventory"');
      assert.deepEqual(await response.json(), {
        errors: [{ message: "Authentication required: send a bearer token", extensions: { code: "UNAUTHENTICATED" } }],
      });
    }
    const get = await fetch(`${url}/graphql?query=${encodeURIComponent(WHOAMI)}`, { headers: { "apollo-require-preflight": "true" } });
    assert.equal(get.status, 401);
    const line = logs.lines.find((l) => l.msg === "authentication failed" && l.reason === "no credentials");
    assert.ok(line, "the failure is logged");
    assert.equal(line.level, 30, "at info: a caller without credentials is routine");
  });

  test("a token that is not in the file is 401 with error=invalid_token, logged at warn without the token", async () => {
    const token = "not-a-known-token-5d1c0e8f27a4";
    const { status, body } = await graphql(url, WHOAMI, undefined, { ...bearer(token), "x-request-id": "bad-token-1" });
    assert.equal(status, 401);
    assert.equal(body.errors![0].extensions.code, "UNAUTHENTICATED");
    assert.equal(body.errors![0].message, "The token is not valid");
    const response = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json", ...bearer(token) }, body: "{}" });
    assert.equal(response.headers.get("www-authenticate"), 'Bearer realm="node-inventory", error="invalid_token"');
    const line = logs.lines.find((l) => l.msg === "authentication failed" && l.requestId === "bad-token-1");
    assert.ok(line);
    assert.equal(line.level, 40);
    assert.equal(line.reason, "unknown token");
    assert.doesNotMatch(JSON.stringify(logs.lines), new RegExp(token));
  });

  test("a scheme other than Bearer is anonymous", async () => {
    const { status } = await graphql(url, WHOAMI, undefined, { authorization: `Basic ${Buffer.from(`vera:${TOKENS.viewer}`).toString("base64")}` });
    assert.equal(status, 401);
  });

  test("whoami tells each caller who they are: plain tokens and sha256 entries alike", async () => {
    const expected = {
      viewer: { subject: "vera", role: "VIEWER", via: "TOKEN" },
      operator: { subject: "otto", role: "OPERATOR", via: "TOKEN" },
      admin: { subject: "ada", role: "ADMIN", via: "TOKEN" },
    };
    for (const role of ["viewer", "operator", "admin"] as const) {
      const { status, body } = await graphql(url, WHOAMI, undefined, bearer(TOKENS[role]));
      assert.equal(status, 200);
      assert.deepEqual(body, { data: { whoami: expected[role] } });
    }
  });

  test("a viewer reads the inventory", async () => {
    const { status, body } = await graphql(url, "{ clusters { name } nodes { totalCount } }", undefined, bearer(TOKENS.viewer));
    assert.equal(status, 200);
    assert.deepEqual(body.data.clusters, [{ name: "sim" }]);
    assert.equal(body.data.nodes.totalCount, 3);
  });

  test("a viewer calling a mutation gets 403 FORBIDDEN before any resolver runs, and it is audited", async () => {
    const { status, body } = await graphql(url, CORDON, undefined, { ...bearer(TOKENS.viewer), "x-request-id": "viewer-cordon" });
    assert.equal(status, 403);
    assert.deepEqual(body, { errors: [{ message: "Role viewer may not do this; it needs operator", extensions: { code: "FORBIDDEN" } }] });
    const lines = auditLines(logs, "viewer-cordon");
    assert.equal(lines.length, 1);
    assert.deepEqual(
      { subject: lines[0]!.subject, role: lines[0]!.role, fields: lines[0]!.fields, outcome: lines[0]!.outcome },
      { subject: "vera", role: "viewer", fields: ["cordonNode"], outcome: "FORBIDDEN" },
    );
  });

  for (const role of ["operator", "admin"] as const) {
    test(`an ${role} passes the role check of mutations; the audit line records the outcome the caller saw`, async () => {
      const requestId = `${role}-cordon`;
      await ready(url);
      const { status, body } = await graphql(url, CORDON, undefined, { ...bearer(TOKENS[role]), "x-request-id": requestId });
      const code: string = body.errors?.[0]?.extensions.code ?? "ok";
      // Past the role check, the cordon itself answers: there is no node "x".
      assert.deepEqual({ status, code, message: body.errors?.[0]?.message }, { status: 200, code: "NOT_FOUND", message: 'node "x" not found in cluster "sim"' });
      const lines = auditLines(logs, requestId);
      assert.equal(lines.length, 1, "logged once");
      assert.equal(lines[0]!.role, role);
      assert.equal(lines[0]!.outcome, code);
    });
  }

  test("the audit line names the operation and its variables, with secret-looking ones redacted", async () => {
    const secret = "s3cr3t-reason-value";
    await graphql(
      url,
      `mutation Cordon($node: String!, $secretReason: String) { cordonNode(name: $node, reason: $secretReason) { name } }`,
      { node: "x", secretReason: secret },
      { ...bearer(TOKENS.operator), "x-request-id": "audit-vars" },
    );
    const [line] = auditLines(logs, "audit-vars");
    assert.ok(line);
    assert.equal(line.operationName, "Cordon");
    assert.equal(line.subject, "otto");
    assert.equal(line.via, "token");
    assert.equal(line.transport, "http");
    assert.deepEqual(line.variables, { node: "x", secretReason: "[redacted]" });
    assert.doesNotMatch(JSON.stringify(logs.lines), new RegExp(secret));
  });

  test("queries are not audited", async () => {
    await graphql(url, WHOAMI, undefined, { ...bearer(TOKENS.admin), "x-request-id": "a-query" });
    assert.deepEqual(auditLines(logs, "a-query"), []);
  });

  test("no token appears in any log line, for a query, a mutation and a refusal by each caller", async () => {
    for (const [role, token] of Object.entries(TOKENS)) {
      for (const [kind, query] of [
        ["query", WHOAMI],
        ["mutation", CORDON],
      ]) {
        await graphql(url, query, undefined, { ...bearer(token), "x-request-id": `secrets-${role}-${kind}` });
      }
    }
    const lines = logs.lines.filter((l) => String(l.requestId ?? "").startsWith("secrets-"));
    // The requests were logged (so the check below looks at something), and with no token in them.
    assert.ok(
      lines.some((l) => l.requestId === "secrets-admin-mutation" && l.audit === "mutation"),
      "the admin's mutation is audited",
    );
    assert.ok(
      lines.some((l) => l.requestId === "secrets-viewer-mutation"),
      "the viewer's refused mutation is logged",
    );
    const all = JSON.stringify(logs.lines);
    for (const token of Object.values(TOKENS)) assert.doesNotMatch(all, new RegExp(token));
  });
});

describe("the tokens file is re-read when it changes", () => {
  test("a token added works and a token removed stops working, without a restart; a broken file keeps the last good tokens", async () => {
    const file = tokensFile();
    const { app, url, logs } = await startTestApp({ auth: { tokensFile: file.path } }, { authTuning: { tokensFilePollMs: 50 } });
    try {
      const rotated = "rotated-viewer-token-44c1a9e0f3";
      file.write([...TOKEN_ENTRIES.filter((e) => e.subject !== "vera"), { subject: "vera", role: "viewer", token: rotated }]);
      await eventually(async () => (await graphql(url, WHOAMI, undefined, bearer(rotated))).status === 200, "the new token accepted");
      assert.equal((await graphql(url, WHOAMI, undefined, bearer(TOKENS.viewer))).status, 401, "the old token refused");

      file.write([{ subject: "mallory", role: "root", token: "mallory-token-0123456789" }]);
      const problem = await eventually(() => logs.lines.find((l) => l.msg?.toString().startsWith("tokens file changed but cannot be used")), "the complaint");
      assert.match(String(problem.problem), /entry \[0\]: "role" must be one of viewer, operator, admin/);
      assert.equal((await graphql(url, WHOAMI, undefined, bearer(rotated))).status, 200, "the last good tokens still work");
      assert.doesNotMatch(JSON.stringify(logs.lines), /mallory-token|rotated-viewer-token/);
    } finally {
      await app.stop();
      file.remove();
    }
  });
});
