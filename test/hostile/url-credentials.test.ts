import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, test } from "node:test";
import { createLogger } from "../../src/log/logger.js";
import { finished, readyUrl, spawnCli } from "../support/cli.js";
import { BACKENDS } from "../support/databases.js";

const postgres = BACKENDS.find((b) => b.name === "postgres")!;
const SECRET = "hunter2-in-the-query";
const SSL_SECRET = "ssl-hunter3";

describe("credentials in URL query parameters are never logged (issue 13, finding 4)", () => {
  test("the real program: the 'database open' line and the ready program show password=REDACTED, never the value", async () => {
    const fresh = await postgres.create();
    const url = `${(fresh.config as { url: string }).url}?password=${SECRET}`;
    const child = spawnCli(["serve", "--port", "0", "--simulate", "1", "--database-url", url, "--log-format", "json"], { HOME: "/nonexistent" });
    const exit = finished(child, 120_000);
    try {
      await readyUrl(child);
      child.kill("SIGTERM");
      const { code, stdout, stderr } = await exit;
      assert.equal(code, 0);
      assert.ok(!stdout.includes(SECRET) && !stderr.includes(SECRET), "the password appears nowhere");
      const open = stdout
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l))
        .find((l) => l.msg === "database open");
      assert.match(open.database, /\?password=REDACTED$/);
    } finally {
      child.kill("SIGKILL");
      await fresh.drop();
    }
  });

  test("a database that cannot be reached: the error line names it without password or sslpassword", async () => {
    const child = spawnCli(["serve", "--port", "0", "--simulate", "1", "--database-url", `postgresql://someone@127.0.0.1:1/db?sslpassword=${SSL_SECRET}&password=${SECRET}&application_name=ni`], {
      HOME: "/nonexistent",
    });
    const { code, stdout, stderr } = await finished(child, 60_000);
    assert.equal(code, 1);
    const output = stdout + stderr;
    assert.ok(!output.includes(SECRET) && !output.includes(SSL_SECRET), output);
    assert.match(output, /cannot reach the database at postgresql:\/\/someone@127\.0\.0\.1:1\/db\?sslpassword=REDACTED&password=REDACTED&application_name=ni/);
  });

  test("any URL in a log message or an error's message and stack is redacted", () => {
    const lines: string[] = [];
    const logger = createLogger("info", new Writable({ write: (chunk, _e, done) => (lines.push(String(chunk)), done()) }), "json");
    logger.error({ err: new Error("GET https://api.example/x?token=tok-secret&watch=1 failed") }, "retrying postgresql://u:pw-secret@db/h?sslpassword=ssl-secret");
    const line = lines.join("");
    for (const secret of ["tok-secret", "pw-secret", "ssl-secret"]) assert.ok(!line.includes(secret), `${secret} in ${line}`);
    assert.match(line, /token=REDACTED&watch=1/);
    assert.match(line, /postgresql:\/\/u@db\/h\?sslpassword=REDACTED/);
  });
});
