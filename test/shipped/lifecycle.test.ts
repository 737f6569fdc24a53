import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { ChildProcess } from "node:child_process";
import { describe, test } from "node:test";
import pg from "pg";
import { createApp, type AppState } from "../../src/app/create-app.js";
import { loadConfig } from "../../src/config/config.js";
import { createLogger } from "../../src/log/logger.js";
import { finished, readyUrl, spawnCli } from "../support/cli.js";
import { BACKENDS } from "../support/databases.js";

/** A config as the CLI would build it, and a logger whose lines a test can wait for. */
function appWithLog(argv: string[]) {
  const waiters: { msg: string; resolve: () => void }[] = [];
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) {
        const msg = JSON.parse(line).msg as string;
        lines.push(msg);
        for (const w of waiters.filter((w) => w.msg === msg)) w.resolve();
      }
      done();
    },
  });
  const app = createApp(loadConfig(argv, {}), { logger: createLogger("info", sink) });
  const logged = (msg: string) => (lines.includes(msg) ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ msg, resolve })));
  return { app, lines, logged };
}

describe("stop() while start() runs", () => {
  // Each a moment of the start: before anything, with the database open, and with the
  // clusters watched (the simulator serving).
  const moments: [string, string | undefined][] = [
    ["at once", undefined],
    ["once the database is open", "database open"],
    ["once the migrations ran", "applied migration"],
  ];
  for (const [when, msg] of moments) {
    test(`${when}: the app ends stopped, never started after stop() resolved`, async () => {
      const { app, lines, logged } = appWithLog(["--port", "0", "--data-dir", "memory", "--simulate", "2"]);
      const starting = app.start();
      if (msg) await logged(msg);
      await app.stop();
      assert.equal(app.state, "stopped");
      await starting;
      const after: AppState = app.state;
      assert.equal(after, "stopped");
      assert.equal(app.url, "");
      assert.equal(lines.includes("node-inventory ready"), false);
      assert.ok(lines.includes("stopped while starting") || lines.includes("stopped"), lines.join("\n"));
    });
  }
});

describe("signals during start", () => {
  test("a SIGTERM while waiting on migrations shuts down cleanly: exit 0, never ready", async () => {
    // Another replica "is migrating": the test holds the migration lock on a fresh database.
    const fresh = await BACKENDS.find((b) => b.name === "postgres")!.create();
    const url = (fresh.config as { url: string }).url;
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    await holder.query("SELECT pg_advisory_lock(72617001)");
    const dir = mkdtempSync(join(tmpdir(), "ni-sigterm-"));
    try {
      const child = spawnCli(["serve", "--port", "0", "--simulate", "1"], { DATABASE_URL: url, HOME: "/nonexistent" });
      const done = finished(child, 60_000);
      let out = "";
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on("data", (chunk) => {
          out += chunk;
          if (out.includes("another replica is applying migrations: waiting for it")) resolve();
        });
        child.once("exit", (code) => reject(new Error(`exited ${code} before waiting on the lock:\n${out}`)));
      });
      const signalledAt = Date.now();
      child.kill("SIGTERM");
      const { code, stdout } = await done;
      assert.equal(code, 0);
      assert.ok(Date.now() - signalledAt < 10_000, "exits within seconds");
      const messages = stdout
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l).msg as string);
      assert.ok(messages.includes("signal received"));
      assert.equal(messages.at(-1), "stopped while starting");
      assert.equal(messages.includes("node-inventory ready"), false);
      assert.equal(messages.includes("applied migration"), false);
      // The migrations were left to the replica holding the lock.
      const { rows } = await holder.query(`SELECT to_regclass('node_state')::text AS found`);
      assert.equal(rows[0].found, null);
    } finally {
      await holder.end();
      rmSync(dir, { recursive: true, force: true });
      await fresh.drop();
    }
  });
});

describe("one PGlite data directory, one process", () => {
  test("a second process on the same directory exits 2 with one line naming the directory and the holder", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ni-lock-"));
    const started: ChildProcess[] = [];
    try {
      const first = spawnCli(["serve", "--port", "0", "--data-dir", dir, "--simulate", "1"], { HOME: "/nonexistent" });
      started.push(first);
      const firstDone = finished(first, 240_000);
      await readyUrl(first);
      const second = await finished(spawnCli(["serve", "--port", "0", "--data-dir", dir, "--simulate", "1"], { HOME: "/nonexistent" }), 60_000);
      assert.equal(second.code, 2);
      assert.equal(second.stderr.trim().split("\n").length, 1, second.stderr);
      assert.match(second.stderr, new RegExp(`^node-inventory: the PGlite data directory ${dir} is in use by process ${first.pid} on `));
      assert.doesNotMatch(second.stdout, /database open/);
      first.kill("SIGTERM");
      assert.equal((await firstDone).code, 0);
      // Released on a clean stop: the directory opens again.
      const third = spawnCli(["serve", "--port", "0", "--data-dir", dir, "--simulate", "1"], { HOME: "/nonexistent" });
      started.push(third);
      const thirdDone = finished(third, 240_000);
      await readyUrl(third);
      third.kill("SIGTERM");
      assert.equal((await thirdDone).code, 0);
    } finally {
      // A child still running (an assertion failed) would keep writing the directory.
      await Promise.all(started.filter((c) => c.exitCode === null && c.signalCode === null).map((c) => (c.kill("SIGKILL"), new Promise((r) => c.once("exit", r)))));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a lock left by a process that is gone (a crash) is taken over", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ni-stale-"));
    try {
      // A pid that cannot be running: above the kernel's pid_max.
      writeFileSync(join(dir, "node-inventory.lock"), JSON.stringify({ pid: 2 ** 30, host: (await import("node:os")).hostname(), since: "2026-01-01T00:00:00Z" }));
      const child = spawnCli(["serve", "--port", "0", "--data-dir", dir, "--simulate", "1"], { HOME: "/nonexistent" });
      const done = finished(child, 240_000);
      try {
        await readyUrl(child);
      } finally {
        child.kill("SIGTERM");
      }
      assert.equal((await done).code, 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
