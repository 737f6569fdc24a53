import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { generateKeyPair, SignJWT } from "jose";
import type { App } from "../../src/app/create-app.js";
import { graphql, startTestApp, type CapturedLogs } from "../support/app.js";
import { AUDIENCE, bearer, init, runOverWs, startIssuer, wsClient, type TestIssuer } from "./support.js";

const WHOAMI = "{ whoami { subject role via } }";
const now = () => Math.floor(Date.now() / 1000);

/** Claims of a caller the app below knows: Keycloak's layout, with its own group names. */
const claims = (roles: unknown = ["inventory-viewer", "inventory-operator"]) => ({
  sub: "4a0c1f5e-uuid",
  preferred_username: "olga",
  realm_access: { roles },
});

describe("OIDC callers (JWTs from a local issuer)", () => {
  let app: App;
  let url: string;
  let logs: CapturedLogs;
  let issuer: TestIssuer;
  before(async () => {
    issuer = await startIssuer();
    ({ app, url, logs } = await startTestApp(
      {
        auth: {
          oidc: {
            issuer: issuer.issuer,
            audience: AUDIENCE,
            jwksUrl: issuer.jwksUrl,
            rolesClaim: "realm_access.roles",
            subjectClaim: "preferred_username",
            roleMap: { "inventory-viewer": "viewer", "inventory-operator": "operator", "inventory-admin": "admin" },
          },
        },
      },
      // Refetch the JWKS for every unknown key id, so rotation is seen at once.
      { authTuning: { jwksCooldownMs: 0 } },
    ));
  });
  after(async () => (await app.stop(), await issuer.stop()));

  /** whoami with the token, and the reason the log gives if it was refused. */
  const attempt = async (token: string) => {
    const requestId = `oidc-${Math.random().toString(36).slice(2)}`;
    const { status, body } = await graphql(url, WHOAMI, undefined, { ...bearer(token), "x-request-id": requestId });
    const reason = logs.lines.find((l) => l.msg === "authentication failed" && l.requestId === requestId)?.reason as string | undefined;
    return { status, body, reason };
  };

  test("a valid RS256 token: the subject from the configured claim, the highest mapped role", async () => {
    const { status, body } = await attempt(await issuer.sign(claims()));
    assert.equal(status, 200);
    assert.deepEqual(body.data.whoami, { subject: "olga", role: "OPERATOR", via: "OIDC" });
  });

  test("a valid ES256 token", async () => {
    const { body } = await attempt(await issuer.sign(claims(["inventory-admin"]), { kid: "ec-1" }));
    assert.deepEqual(body.data.whoami, { subject: "olga", role: "ADMIN", via: "OIDC" });
  });

  test("expired beyond the clock skew: 401; expired within it: accepted", async () => {
    const expired = await attempt(await issuer.sign({ ...claims(), iat: now() - 600, exp: now() - 120 }));
    assert.equal(expired.status, 401);
    assert.equal(expired.body.errors![0].message, "The token has expired");
    assert.equal(expired.reason, "token expired");
    assert.equal((await attempt(await issuer.sign({ ...claims(), exp: now() - 10 }))).status, 200);
  });

  test("not yet valid (nbf in the future beyond the skew): 401", async () => {
    const early = await attempt(await issuer.sign({ ...claims(), nbf: now() + 300 }));
    assert.equal(early.status, 401);
    assert.match(early.reason ?? "", /claim "nbf"/);
  });

  test("a wrong audience or issuer: 401 UNAUTHENTICATED", async () => {
    const audience = await attempt(await issuer.sign({ ...claims(), aud: "another-service" }));
    assert.equal(audience.status, 401);
    assert.equal(audience.body.errors![0].extensions.code, "UNAUTHENTICATED");
    assert.match(audience.reason ?? "", /claim "aud"/);
    const wrongIssuer = await attempt(await issuer.sign({ ...claims(), iss: "https://evil.example/realms/test" }));
    assert.equal(wrongIssuer.status, 401);
    assert.match(wrongIssuer.reason ?? "", /claim "iss"/);
  });

  test("a token without exp is refused", async () => {
    const forever = await attempt(await issuer.sign({ ...claims(), exp: undefined }));
    assert.equal(forever.status, 401);
    assert.match(forever.reason ?? "", /claim "exp"/);
  });

  test("a bad signature (another key under a known kid): 401", async () => {
    const { privateKey } = await generateKeyPair("RS256");
    const forged = await attempt(await issuer.sign(claims(["inventory-admin"]), { kid: "rsa-1", key: privateKey }));
    assert.equal(forged.status, 401);
    assert.equal(forged.reason, "signature does not verify");
  });

  test("a shared-secret (HS256) token is refused whatever its kid", async () => {
    const token = await new SignJWT({ ...claims(["inventory-admin"]), iss: issuer.issuer, aud: AUDIENCE, exp: now() + 60 })
      .setProtectedHeader({ alg: "HS256", kid: "rsa-1" })
      .sign(new TextEncoder().encode("a-secret-anyone-could-have-0123456789"));
    const refused = await attempt(token);
    assert.equal(refused.status, 401);
    assert.equal(refused.reason, "signature algorithm not allowed");
  });

  test("an unknown kid makes the JWKS be fetched again: refused while unpublished, accepted once the issuer publishes it", async () => {
    await issuer.addKey("rsa-2", false);
    const token = await issuer.sign(claims(), { kid: "rsa-2" });
    const before = issuer.fetches;
    const unknown = await attempt(token);
    assert.equal(unknown.status, 401);
    assert.equal(unknown.reason, "no key of the issuer's JWKS matches the token");
    assert.equal(issuer.fetches, before + 1, "fetched again for the unknown kid");
    issuer.publish("rsa-2");
    assert.equal((await attempt(token)).status, 200, "key rotation needs no restart");
  });

  test("authenticated but without a known role: 403 FORBIDDEN over HTTP, 4403 over WebSocket", async () => {
    const { realm_access: _, ...withoutRoles } = claims();
    for (const payload of [withoutRoles, claims(null), claims([]), claims(["some-other-group"]), claims("inventory-nothing")]) {
      const token = await issuer.sign(payload);
      const { status, body, reason } = await attempt(token);
      assert.equal(status, 403, JSON.stringify(payload));
      assert.deepEqual(body.errors, [{ message: "olga has no role in this service", extensions: { code: "FORBIDDEN" } }]);
      assert.equal(reason, 'no known role in claim "realm_access.roles"');
    }
    const outcome = await init(url, { token: await issuer.sign(claims([])) });
    assert.deepEqual(outcome, { acked: false, code: 4403, reason: "olga has no role in this service" });
  });

  test("a JWT over graphql-ws: the connection acts as its caller and is closed with 4401 when the token expires", async () => {
    const token = await issuer.sign({ ...claims(["inventory-admin"]), exp: now() + 2 });
    // Not lazy: the connection stays open between operations, as a subscriber's does.
    const client = wsClient(url, { authorization: `Bearer ${token}` }, { lazy: false });
    try {
      assert.deepEqual((await runOverWs(client, WHOAMI)).result, { data: { whoami: { subject: "olga", role: "ADMIN", via: "OIDC" } } });
      const closed = await new Promise<{ code: number; reason: string }>((resolve) => {
        client.on("closed", (event) => resolve(event as { code: number; reason: string }));
      });
      assert.deepEqual({ code: closed.code, reason: closed.reason }, { code: 4401, reason: "The token has expired" });
    } finally {
      await client.dispose();
    }
  });

  test("while the JWKS cannot be fetched, a token needing it is 503 UNAVAILABLE with Retry-After, not a 401", async () => {
    await issuer.addKey("rsa-3", true);
    issuer.down = true;
    try {
      const response = await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", ...bearer(await issuer.sign(claims(), { kid: "rsa-3" })) },
        body: JSON.stringify({ query: WHOAMI }),
      });
      assert.equal(response.status, 503);
      assert.equal(response.headers.get("retry-after"), "5");
      assert.equal(((await response.json()) as any).errors[0].extensions.code, "UNAVAILABLE");
      // Keys already fetched still verify.
      assert.equal((await attempt(await issuer.sign(claims()))).status, 200);
    } finally {
      issuer.down = false;
    }
  });

  test("an opaque token (not a JWT) is not valid here", async () => {
    assert.equal((await attempt("opaque-token-with-no-dots-123456")).status, 401);
  });

  test("no JWT appears in the logs, accepted or refused", async () => {
    const accepted = await issuer.sign(claims());
    const refused = await issuer.sign({ ...claims(), aud: "another-service" });
    assert.equal((await attempt(accepted)).status, 200);
    assert.match((await attempt(refused)).reason ?? "", /claim "aud"/, "the refusal is logged");
    const all = JSON.stringify(logs.lines);
    for (const token of [accepted, refused]) assert.equal(all.includes(token.split(".")[1]!), false);
    assert.doesNotMatch(all, /eyJ[\w-]+\.eyJ/);
  });
});
