import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ConfigError, loadConfig } from "../../src/config/config.js";

describe("authentication settings", () => {
  test("a tokens file, OIDC, impersonation, the rate limit and the query limits, from flags", () => {
    const config = loadConfig([
      "--auth-tokens-file", "/etc/ni/tokens.json",
      "--oidc-issuer", "https://sso.example.com/realms/ops",
      "--oidc-audience", "node-inventory",
      "--oidc-jwks-url", "https://sso.example.com/realms/ops/protocol/openid-connect/certs",
      "--oidc-roles-claim", "realm_access.roles",
      "--oidc-role-map", "inventory-viewer=viewer, sre=operator,platform=admin",
      "--oidc-subject-claim", "preferred_username",
      "--impersonate",
      "--mutation-rate-limit", "10",
      "--max-query-depth", "8",
      "--max-query-cost", "1000",
    ], {});
    assert.deepEqual(config.auth, {
      tokensFile: "/etc/ni/tokens.json",
      oidc: {
        issuer: "https://sso.example.com/realms/ops",
        audience: "node-inventory",
        jwksUrl: "https://sso.example.com/realms/ops/protocol/openid-connect/certs",
        rolesClaim: "realm_access.roles",
        subjectClaim: "preferred_username",
        roleMap: { "inventory-viewer": "viewer", sre: "operator", platform: "admin" },
      },
      impersonate: true,
      mutationRateLimit: 10,
    });
    const { maxQueryDepth, maxQueryCost } = config.limits;
    assert.deepEqual({ maxQueryDepth, maxQueryCost }, { maxQueryDepth: 8, maxQueryCost: 1000 });
  });

  test("the same from environment variables; OIDC claims default to roles and sub", () => {
    const config = loadConfig([], {
      AUTH_TOKENS_FILE: "/t.json",
      OIDC_ISSUER: "https://i",
      OIDC_AUDIENCE: "a",
      OIDC_JWKS_URL: "http://127.0.0.1:8080/jwks",
      IMPERSONATE_CALLERS: "true",
      MUTATION_RATE_LIMIT: "0",
      MAX_QUERY_DEPTH: "20",
      MAX_QUERY_COST: "5",
      MAX_WEBSOCKETS_PER_CALLER: "3",
      MAX_SUBSCRIPTIONS_PER_CONNECTION: "4",
      MAX_SUBSCRIPTIONS_PER_CALLER: "6",
      MAX_IN_FLIGHT_PER_CALLER: "2",
      MAX_IN_FLIGHT: "9",
    });
    assert.deepEqual(config.auth, {
      tokensFile: "/t.json",
      oidc: { issuer: "https://i", audience: "a", jwksUrl: "http://127.0.0.1:8080/jwks", rolesClaim: "roles", subjectClaim: "sub" },
      impersonate: true,
      mutationRateLimit: 0,
    });
    assert.deepEqual(config.limits, {
      maxQueryDepth: 20,
      maxQueryCost: 5,
      maxWebSocketsPerCaller: 3,
      maxSubscriptionsPerConnection: 4,
      maxSubscriptionsPerCaller: 6,
      maxInFlightPerCaller: 2,
      maxInFlight: 9,
      maxSubscriptionEventCost: 10_000,
      maxConnections: 10_000,
      maxConnectionsPerAddress: 1_000,
    });
    assert.equal(loadConfig([], { IMPERSONATE_CALLERS: "false" }).auth.impersonate, false);
  });

  const invalid: [string, string[], Record<string, string>, string][] = [
    ["OIDC without a JWKS URL", ["--oidc-issuer", "https://i", "--oidc-audience", "a"], {}, "--oidc-issuer is set but OIDC_JWKS_URL is not: OIDC needs an issuer, an audience and a JWKS URL"],
    ["OIDC without an issuer", [], { OIDC_AUDIENCE: "a", OIDC_JWKS_URL: "https://j" }, "OIDC_AUDIENCE is set but OIDC_ISSUER is not: OIDC needs an issuer, an audience and a JWKS URL"],
    ["a JWKS over plain HTTP to another host", [], { OIDC_ISSUER: "https://i", OIDC_AUDIENCE: "a", OIDC_JWKS_URL: "http://sso.example.com/jwks" }, 'OIDC_JWKS_URL: "http://sso.example.com/jwks" must be https:// (http:// only on loopback)'],
    ["a JWKS URL that is not one", [], { OIDC_ISSUER: "https://i", OIDC_AUDIENCE: "a", OIDC_JWKS_URL: "jwks" }, 'OIDC_JWKS_URL: "jwks" is not a URL'],
    ["a role map to an unknown role", ["--oidc-issuer", "https://i", "--oidc-audience", "a", "--oidc-jwks-url", "https://j", "--oidc-role-map", "ops=root"], {}, '--oidc-role-map: "ops=root" is not <claim value>=<role> with a role of viewer, operator, admin'],
    ["impersonation that is not a boolean", [], { IMPERSONATE_CALLERS: "maybe" }, 'IMPERSONATE_CALLERS: "maybe" is not true or false'],
    ["a negative rate limit", ["--mutation-rate-limit=-1"], {}, '--mutation-rate-limit: "-1" is not a whole number from 0 to 1000000'],
    ["a depth of zero", [], { MAX_QUERY_DEPTH: "0" }, 'MAX_QUERY_DEPTH: "0" is not a whole number from 1 to 1000'],
  ];
  for (const [what, argv, env, message] of invalid) {
    test(`${what} is a ConfigError naming the setting`, () => {
      assert.throws(() => loadConfig(argv, env), (error: Error) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.message, message);
        return true;
      });
    });
  }

  test("--help lists the switch without a value", async () => {
    const { SERVE_HELP } = await import("../../src/cli/serve-command.js");
    assert.match(SERVE_HELP, /\n  --impersonate +act on Kubernetes as the caller/);
    assert.match(SERVE_HELP, /--auth-tokens-file <value> +JSON array .*env AUTH_TOKENS_FILE/);
  });
});
