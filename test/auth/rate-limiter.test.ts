import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { outcomeOf, redactSecrets } from "../../src/auth/audit.js";
import { RateLimiter } from "../../src/auth/rate-limiter.js";

describe("the mutation rate limiter (a token bucket per subject)", () => {
  test("a burst up to the limit, then one more each 60/limit seconds", () => {
    let now = 0;
    const limiter = new RateLimiter(6, () => now);
    for (let i = 0; i < 6; i++) assert.deepEqual(limiter.take("otto"), { ok: true });
    assert.deepEqual(limiter.take("otto"), { ok: false, retryAfterSeconds: 10 });
    now += 4_000;
    assert.deepEqual(limiter.take("otto"), { ok: false, retryAfterSeconds: 6 }, "refusals take nothing");
    now += 6_000;
    assert.deepEqual(limiter.take("otto"), { ok: true });
    assert.deepEqual(limiter.take("otto"), { ok: false, retryAfterSeconds: 10 });
  });

  test("subjects have their own buckets", () => {
    const limiter = new RateLimiter(1, () => 0);
    assert.equal(limiter.take("a").ok, true);
    assert.equal(limiter.take("a").ok, false);
    assert.equal(limiter.take("b").ok, true);
  });

  test("several mutations at once take several tokens; more than a bucket is never allowed", () => {
    let now = 0;
    const limiter = new RateLimiter(3, () => now);
    assert.deepEqual(limiter.take("a", 2), { ok: true });
    assert.deepEqual(limiter.take("a", 2), { ok: false, retryAfterSeconds: 20 });
    assert.deepEqual(limiter.take("a", 4), { ok: false, retryAfterSeconds: 60 });
    now += 3_600_000;
    assert.deepEqual(limiter.take("a", 3), { ok: true }, "a bucket never holds more than the limit");
    assert.equal(limiter.take("a").ok, false);
  });
});

describe("audit helpers", () => {
  test("variables named like secrets are redacted at any depth", () => {
    assert.deepEqual(
      redactSecrets({
        name: "n1",
        token: "t",
        options: { apiKey: "k", nested: [{ password: "p", force: true }], clientSecret: "s" },
        Authorization: "Bearer x",
      }),
      { name: "n1", token: "[redacted]", options: { apiKey: "[redacted]", nested: [{ password: "[redacted]", force: true }], clientSecret: "[redacted]" }, Authorization: "[redacted]" },
    );
  });

  test("the outcome is ok or the first error's contract code", () => {
    assert.equal(outcomeOf(undefined), "ok");
    assert.equal(outcomeOf([]), "ok");
    assert.equal(outcomeOf([{ extensions: { code: "NOT_FOUND" } }, { extensions: { code: "CONFLICT" } }]), "NOT_FOUND");
    assert.equal(outcomeOf([{ extensions: {} }]), "INTERNAL_SERVER_ERROR");
  });
});
