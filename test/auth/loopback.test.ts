import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { createAuthenticator, type Credentials } from "../../src/auth/authenticator.js";
import { ConfigError } from "../../src/config/config.js";
import { createLogger } from "../../src/log/logger.js";
import { graphql, startTestApp, type CapturedLogs } from "../support/app.js";
import { finished, readyUrl, runCli, spawnCli } from "../support/cli.js";
import { bearer, init, TOKENS, tokensFile } from "./support.js";

const WHOAMI = "{ whoami { subject role via } }";

/** POSTs with a chosen Host header (fetch will not send one). */
function postWithHost(url: string, host: string, query: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/graphql`, { method: "POST", headers: { host, "content-type": "application/json" } }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d)).on("end", () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    req.end(JSON.stringify({ query }));
  });
}

describe("without authentication configured", () => {
  let app: App;
  let url: string;
  let logs: CapturedLogs;
  before(async () => ({ app, url, logs } = await startTestApp()));
  after(() => app.stop());

  test("a caller on loopback is the local admin", async () => {
    const { status, body } = await graphql(url, WHOAMI);
    assert.equal(status, 200);
    assert.deepEqual(body.data.whoami, { subject: "local-admin", role: "ADMIN", via: "LOOPBACK" });
    const socket = await init(url);
    assert.equal(socket.acked, true);
    if (socket.acked) socket.socket.close();
  });

  test("the warning about it is logged once, at start, however many requests come", async () => {
    await graphql(url, WHOAMI);
    await graphql(url, WHOAMI);
    const warnings = logs.lines.filter((l) => /no authentication configured/.test(String(l.msg)));
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0]!.level, 40);
    assert.ok(logs.lines.indexOf(warnings[0]!) < logs.lines.findIndex((l) => l.msg === "node-inventory ready"));
  });

  test("a request whose Host is not loopback (DNS rebinding from a web page) is not the local admin", async () => {
    const { status, body } = await postWithHost(url, "attacker.example:4000", WHOAMI);
    assert.equal(status, 401);
    assert.equal(body.errors[0].extensions.code, "UNAUTHENTICATED");
    assert.equal((await postWithHost(url, `localhost:${new URL(url).port}`, WHOAMI)).status, 200);
  });

  test("a WebSocket opened by a page of another origin is closed with 4401; a local origin is fine", async () => {
    assert.deepEqual(await init(url, undefined, { origin: "https://attacker.example" }), {
      acked: false,
      code: 4401,
      reason: "This server has no authentication configured and serves only callers on its own machine",
    });
    const local = await init(url, undefined, { origin: "http://localhost:3000" });
    assert.equal(local.acked, true);
    if (local.acked) local.socket.close();
  });

  test("tokens sent anyway change nothing: the caller is still the local admin", async () => {
    const { body } = await graphql(url, WHOAMI, undefined, bearer("whatever-token-1234567890"));
    assert.equal(body.data.whoami.subject, "local-admin");
  });
});

describe("the loopback rule", () => {
  const credentials = (remoteAddress: string, host?: string): Credentials => ({
    transport: "http",
    requestId: "r",
    token: undefined,
    remoteAddress,
    host,
    origin: undefined,
  });

  test("peers on 127.0.0.0/8 and ::1 are local; other peers are not", async () => {
    const authenticator = createAuthenticator({ impersonate: false, mutationRateLimit: 30 }, createLogger("silent"));
    const table: [string, boolean][] = [
      ["127.0.0.1", true],
      ["127.3.2.1", true],
      ["::1", true],
      ["::ffff:127.0.0.1", true],
      ["10.1.2.3", false],
      ["::ffff:192.168.1.5", false],
      ["fe80::1", false],
    ];
    for (const [address, local] of table) {
      const outcome = await authenticator.authenticate(credentials(address, "localhost:4000"));
      assert.equal(outcome.ok, local, address);
    }
  });

  test("the app refuses to start on a non-loopback address without authentication", async () => {
    for (const host of ["0.0.0.0", "::", "192.168.1.10", "node-inventory.example"]) {
      await assert.rejects(startTestApp({ host }), (error: Error) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, new RegExp(`^--host/HOST "${host.replace(/\./g, "\\.")}" is not a loopback address, and no authentication is configured`));
        return true;
      });
    }
  });
});

describe("the command line", () => {
  test("serve --host 0.0.0.0 without authentication fails with one line and exit code 2", async () => {
    const { code, stdout, stderr } = await runCli(["serve", "--host", "0.0.0.0", "--port", "0", "--data-dir", "memory"]);
    assert.equal(code, 2);
    assert.equal(stdout, "");
    assert.equal(stderr.trim().split("\n").length, 1);
    assert.match(stderr, /^node-inventory: --host\/HOST "0\.0\.0\.0" is not a loopback address, and no authentication is configured: set --auth-tokens-file/);
  });

  test("a bad tokens file fails with one line naming the file and the entry, exit code 2, and no token", async () => {
    const file = tokensFile([
      { subject: "vera", role: "viewer", token: TOKENS.viewer },
      { subject: "root", role: "superuser", token: TOKENS.admin },
    ]);
    try {
      const { code, stderr } = await runCli(["serve", "--port", "0", "--data-dir", "memory"], { AUTH_TOKENS_FILE: file.path });
      assert.equal(code, 2);
      assert.equal(stderr.trim(), `node-inventory: tokens file ${file.path}: entry [1]: "role" must be one of viewer, operator, admin`);
      file.write(`[{"subject": "x", "role": "viewer", "token": "${TOKENS.viewer}"`);
      const truncated = await runCli(["serve", "--port", "0", "--data-dir", "memory", "--auth-tokens-file", file.path]);
      assert.equal(truncated.code, 2);
      assert.match(truncated.stderr, /^node-inventory: tokens file .*: not valid JSON/);
      assert.doesNotMatch(truncated.stderr, new RegExp(TOKENS.viewer));
    } finally {
      file.remove();
    }
  });

  test("with a tokens file it serves on 0.0.0.0, to token holders only", async () => {
    const file = tokensFile();
    try {
      const child = spawnCli(["serve", "--host", "0.0.0.0", "--port", "0", "--data-dir", "memory", "--simulate", "2", "--auth-tokens-file", file.path]);
      const done = finished(child, 60_000);
      const url = (await readyUrl(child)).replace("0.0.0.0", "127.0.0.1");
      assert.equal((await graphql(url, WHOAMI)).status, 401);
      assert.deepEqual((await graphql(url, WHOAMI, undefined, bearer(TOKENS.viewer))).body.data.whoami, { subject: "vera", role: "VIEWER", via: "TOKEN" });
      child.kill("SIGTERM");
      assert.equal((await done).code, 0);
    } finally {
      file.remove();
    }
  });
});
