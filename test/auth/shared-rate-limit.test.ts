import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, test } from "node:test";
import { SharedRateLimiter } from "../../src/auth/shared-rate-limiter.js";
import { createLogger } from "../../src/log/logger.js";
import { migratedDatabase } from "../history/history-fixtures.js";
import { graphql, outcome, ready, startTestApp, type CapturedLogs } from "../support/app.js";
import { BACKENDS } from "../support/databases.js";
import { bearer, tokensFile, TOKENS } from "./support.js";

const postgres = BACKENDS.find((b) => b.name === "postgres")!;
const CORDON = `mutation { cordonNode(name: "x") { name } }`;

describe("the mutation rate limit across replicas on one PostgreSQL", () => {
  test("is one allowance per caller, whichever replica the calls reach", async () => {
    const file = tokensFile();
    const fresh = await postgres.create();
    const config = { database: fresh.config, auth: { tokensFile: file.path, mutationRateLimit: 3 } };
    const a = await startTestApp(config, { recorderTuning: { identity: "a" } });
    const b = await startTestApp(config, { recorderTuning: { identity: "b" } });
    try {
      const operator = bearer(TOKENS.operator);
      await Promise.all([ready(a.url), ready(b.url)]);
      // Within the allowance, the cordon itself answers: there is no node "x".
      for (const replica of [a, a, b]) assert.deepEqual(outcome(await graphql(replica.url, CORDON, undefined, operator)), { status: 200, code: "NOT_FOUND" });
      const response = await fetch(`${b.url}/graphql`, { method: "POST", headers: { "content-type": "application/json", ...operator }, body: JSON.stringify({ query: CORDON }) });
      assert.equal(response.status, 429, "the fourth mutation a minute is one too many, though it is b's second");
      const retryAfter = Number(response.headers.get("retry-after"));
      // Three a minute: a token every 20 s, the first taken moments ago.
      assert.ok(retryAfter >= 15 && retryAfter <= 20, `Retry-After ${retryAfter}`);
      const body = (await response.json()) as any;
      assert.deepEqual(body.errors[0].extensions, { code: "RATE_LIMITED", reason: "RATE_LIMITED", retryAfterSeconds: retryAfter });
      assert.equal((await graphql(a.url, CORDON, undefined, operator)).status, 429, "and on a as well");
      // Either replica reads the one allowance: spent, full again within a minute.
      const allowance = (await graphql(a.url, "{ rateLimit { limit remaining resetAt } }", undefined, operator)).body.data.rateLimit;
      assert.deepEqual([allowance.limit, allowance.remaining], [3, 0]);
      assert.ok(Date.parse(allowance.resetAt) - Date.now() <= 60_000, allowance.resetAt);
      assert.deepEqual(outcome(await graphql(a.url, CORDON, undefined, bearer(TOKENS.admin))), { status: 200, code: "NOT_FOUND" }, "another caller has their own");
    } finally {
      await b.app.stop();
      await a.app.stop();
      await fresh.drop();
      file.remove();
    }
  });

  test("concurrent takes never pass more than the allowance; without the database, each replica limits on its own", async () => {
    const { db, dispose } = await migratedDatabase(postgres);
    const logs: CapturedLogs = { lines: [] };
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split("\n")) if (line) logs.lines.push(JSON.parse(line));
        done();
      },
    });
    const logger = createLogger("info", sink);
    try {
      const one = new SharedRateLimiter(db, 5, logger);
      const two = new SharedRateLimiter(db, 5, logger);
      const takes = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? one : two).take("otto")));
      assert.equal(takes.filter((t) => t.ok).length, 5, "five a minute, twelve asked at once from two replicas");
      assert.deepEqual((await one.take("otto", 6)), { ok: false, retryAfterSeconds: 60 }, "more than a full bucket never passes");

      await db.close();
      const alone = await Promise.all(Array.from({ length: 7 }, () => one.take("otto")));
      assert.equal(alone.filter((t) => t.ok).length, 5, "the replica's own bucket of five");
      assert.equal(logs.lines.filter((l) => /cannot reach the database/.test(String(l.msg))).length, 1, "said once");
    } finally {
      await dispose();
    }
  });
});
