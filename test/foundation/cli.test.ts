import assert from "node:assert/strict";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import WebSocket from "ws";
import pg from "pg";
import { BACKENDS } from "../support/databases.js";
import { finished, readyUrl, runCli, spawnCli } from "../support/cli.js";

/** One clear line on stderr, no stack trace. */
function assertOneLine(stderr: string, pattern: RegExp) {
  const lines = stderr.trim().split("\n");
  assert.equal(lines.length, 1, `expected one line, got:\n${stderr}`);
  assert.match(lines[0]!, pattern);
  assert.doesNotMatch(stderr, /\bat .+:\d+:\d+/);
}

describe("the node-inventory command", () => {
  test("--port abc fails at start with one line naming the setting and exit code 2", async () => {
    const { code, stderr, stdout } = await runCli(["serve", "--port", "abc"]);
    assert.equal(code, 2);
    assert.equal(stdout, "");
    assertOneLine(stderr, /^node-inventory: --port: "abc" is not a port number/);
  });

  test("an unknown flag fails with exit code 2", async () => {
    const { code, stderr } = await runCli(["--colour"]);
    assert.equal(code, 2);
    assertOneLine(stderr, /^node-inventory: Unknown option '--colour'/);
  });

  test("an unreachable DATABASE_URL fails with one line, no password, non-zero exit", async () => {
    const { code, stderr } = await runCli(["serve", "--port", "0"], { DATABASE_URL: "postgresql://app:s3cret@127.0.0.1:1/inventory" });
    assert.equal(code, 1);
    assertOneLine(stderr, /^node-inventory: cannot reach the database at postgresql:\/\/app@127\.0\.0\.1:1\/inventory: .*ECONNREFUSED/);
    assert.doesNotMatch(stderr, /s3cret/);
  });

  test("--help lists the commands, and each command has its own help", async () => {
    const top = await runCli(["--help"]);
    assert.equal(top.code, 0);
    assert.match(top.stdout, /serve\s+run the GraphQL service/);
    assert.match(top.stdout, /migrate\s+apply database migrations/);
    const serve = await runCli(["serve", "--help"]);
    assert.match(serve.stdout, /--database-url <value>.*env DATABASE_URL/);
    assert.match(serve.stdout, /--port <value>.*\(default 4000\)/);
  });

  test("serve on embedded PGlite: ready, answers, and exits 0 on SIGTERM closing WebSockets", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "ni-data-"));
    try {
      const child = spawnCli(["--port", "0", "--data-dir", dataDir]);
      const done = finished(child, 60_000);
      const url = await readyUrl(child);
      const response = await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "{ __typename }" }),
      });
      assert.deepEqual(await response.json(), { data: { __typename: "Query" } });
      assert.equal((await fetch(`${url}/readyz`)).status, 200);
      const socket = new WebSocket(`${url.replace(/^http/, "ws")}/graphql`, "graphql-transport-ws");
      await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
      const closeCode = new Promise((resolve) => socket.once("close", resolve));

      const signalledAt = Date.now();
      child.kill("SIGTERM");
      const { code } = await done;
      assert.equal(code, 0);
      assert.equal(await closeCode, 1001);
      assert.ok(Date.now() - signalledAt < 5_000, "exits within a few seconds");
      assert.ok(existsSync(join(dataDir, "PG_VERSION")), "PGlite kept its files in --data-dir");
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("migrate applies the migrations to PostgreSQL and exits 0", async () => {
    const fresh = await BACKENDS.find((b) => b.name === "postgres")!.create();
    try {
      const url = (fresh.config as { url: string }).url;
      const { code, stderr } = await runCli(["migrate"], { DATABASE_URL: url });
      assert.equal(code, 0, stderr);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query(`SELECT count(*)::int AS n FROM "_prisma_migrations" WHERE finished_at IS NOT NULL`);
      await client.end();
      assert.ok(rows[0].n >= 1);
    } finally {
      await fresh.drop();
    }
  });
});
