import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { claimAt, looksLikeJwt, roleFromClaims } from "../../src/auth/oidc-verifier.js";
import type { Role } from "../../src/auth/principal.js";

describe("roles from JWT claims", () => {
  const MAP: Record<string, Role> = { "k8s-viewers": "viewer", "k8s-sre": "operator", "k8s-platform": "admin" };
  const cases: [string, Record<string, unknown>, string, Record<string, Role> | undefined, Role | undefined][] = [
    ["an array of our role names", { roles: ["viewer"] }, "roles", undefined, "viewer"],
    ["the highest known role wins", { roles: ["viewer", "admin", "operator"] }, "roles", undefined, "admin"],
    ["a single string", { roles: "operator" }, "roles", undefined, "operator"],
    ["a space-separated string (scope style)", { scope: "openid viewer operator" }, "scope", undefined, "operator"],
    ["a dotted path", { realm_access: { roles: ["offline_access", "operator"] } }, "realm_access.roles", undefined, "operator"],
    ["a claim whose own name has dots", { "https://example.com/roles": ["admin"] }, "https://example.com/roles", undefined, "admin"],
    ["mapped names", { groups: ["k8s-viewers", "k8s-sre"] }, "groups", MAP, "operator"],
    ["with a map, our own names do not count", { groups: ["admin"] }, "groups", MAP, undefined],
    ["unknown names only", { roles: ["superuser", "root"] }, "roles", undefined, undefined],
    ["no such claim", { sub: "x" }, "realm_access.roles", undefined, undefined],
    ["a claim of another type", { roles: { admin: true } }, "roles", undefined, undefined],
    ["non-strings in the array are skipped", { roles: [1, null, "viewer"] }, "roles", undefined, "viewer"],
    ["a prototype key is not a role", { groups: ["__proto__", "constructor"] }, "groups", MAP, undefined],
  ];
  for (const [what, claims, path, map, expected] of cases) {
    test(`${what}: ${expected ?? "no role"}`, () => assert.equal(roleFromClaims(claims, path, map), expected));
  }

  test("claimAt does not walk into prototypes", () => {
    assert.equal(claimAt({ a: {} }, "a.constructor"), undefined);
    assert.equal(claimAt({}, "toString"), undefined);
  });

  test("only three base64url parts look like a JWT", () => {
    assert.equal(looksLikeJwt("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"), true);
    assert.equal(looksLikeJwt("admin-token-93e0c4a7b1f85d62"), false);
    assert.equal(looksLikeJwt("a.b"), false);
    assert.equal(looksLikeJwt("a.b.c d"), false);
  });
});
