import assert from "node:assert/strict";
import { test } from "node:test";
import { backoffDelay } from "../../src/lifecycle/backoff.js";

test("a backoff doubles from its first delay up to its cap", () => {
  const backoff = { initialMs: 200, maxMs: 5_000 };
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 7, 50].map((attempt) => backoffDelay(backoff, attempt)),
    [200, 400, 800, 1_600, 3_200, 5_000, 5_000, 5_000],
  );
});

test("a jittered backoff stays in the upper half of its delay", () => {
  for (let i = 0; i < 200; i++) {
    const delay = backoffDelay({ initialMs: 1_000, maxMs: 60_000, jitter: true }, 3);
    assert.ok(delay >= 2_000 && delay <= 4_000, String(delay));
  }
});
