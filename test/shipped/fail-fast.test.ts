import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test, type TestContext } from "node:test";
import { PACKAGE_ROOT } from "../../src/package-info.js";
import { finished, spawnCli } from "../support/cli.js";
import { freePort, startScramPostgres } from "../support/scram-postgres.js";
import { deadClusterKubeconfig } from "../support/sim-cluster.js";

/** How long each start took to fail, written for the report (a loaded machine makes it no assertion). */
const measured: Record<string, number> = {};

/**
 * Starts `serve` and expects it to stop by itself: one line on stderr, a non-zero exit, no
 * migration, no database created. Returns that line.
 */
async function expectFastFailure(t: TestContext, name: string, args: string[], env: Record<string, string>, exitCode: number): Promise<string> {
  const startedAt = Date.now();
  const { code, stdout, stderr } = await finished(spawnCli(["serve", ...args], { HOME: "/nonexistent", ...env }), 60_000);
  const ms = Date.now() - startedAt;
  measured[name] = ms;
  t.diagnostic(`${name}: exited ${code} after ${ms} ms`);
  assert.equal(code, exitCode, stderr);
  const lines = stderr.trim().split("\n");
  assert.equal(lines.length, 1, `one line, got:\n${stderr}`);
  assert.doesNotMatch(stdout, /applied migration|node-inventory ready/);
  return lines[0]!;
}

describe("a start that cannot work ends at once, with one line, before any migration", () => {
  let dataDir: string;
  let busy: Server;
  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), "ni-failfast-"));
  });
  after(() => {
    busy?.close();
    rmSync(dataDir, { recursive: true, force: true });
    // Kept for the record (the closing note quotes them); test-artifacts/ is not committed.
    mkdirSync(join(PACKAGE_ROOT, "test-artifacts"), { recursive: true });
    writeFileSync(join(PACKAGE_ROOT, "test-artifacts", "fail-fast-times.json"), JSON.stringify(measured, null, 2) + "\n");
  });

  test("the port in use: exit 1 naming the address, the database never opened", async (t) => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    const { port } = busy.address() as { port: number };
    const dir = join(dataDir, "port");
    const line = await expectFastFailure(t, "port in use", ["--port", String(port), "--data-dir", dir, "--simulate", "1"], {}, 1);
    assert.equal(line, `node-inventory: cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
    assert.equal(existsSync(join(dir, "PG_VERSION")), false, "PGlite never created");
  });

  test("a kubeconfig without the named context: exit 2 listing the contexts it has", async (t) => {
    const dir = join(dataDir, "context");
    const line = await expectFastFailure(t, "missing context", ["--port", "0", "--data-dir", dir, "--kubeconfig", deadClusterKubeconfig(), "--context", "prod"], {}, 2);
    assert.equal(line, "node-inventory: --context prod: not in the kubeconfig (contexts: dead)");
    assert.equal(existsSync(dir) && readdirSync(dir).length > 0, false, "PGlite never created");
  });

  test("a database that refuses connections: exit 1 naming it, without its password", async (t) => {
    const port = await freePort();
    const line = await expectFastFailure(t, "unreachable database", ["--port", "0", "--simulate", "1"], { DATABASE_URL: `postgresql://app:s3cret@127.0.0.1:${port}/inventory` }, 1);
    assert.equal(line, `node-inventory: cannot reach the database at postgresql://app@127.0.0.1:${port}/inventory: connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  test("a SCRAM server and a URL without a password: exit 1 at once with the SASL error", async (t) => {
    const server = await startScramPostgres();
    try {
      const line = await expectFastFailure(t, "SCRAM without a password", ["--port", "0", "--simulate", "1"], { DATABASE_URL: `postgresql://postgres@127.0.0.1:${server.port}/postgres` }, 1);
      assert.match(line, new RegExp(`^node-inventory: cannot reach the database at postgresql://postgres@127\\.0\\.0\\.1:${server.port}/postgres: .*SASL.*password`));
    } finally {
      await server.stop();
    }
  });
});
