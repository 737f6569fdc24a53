import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { openDatabase, type Database } from "../../src/db/database.js";
import { readMigrations } from "../../src/db/migrations.js";
import { migrate } from "../../src/db/migrator.js";
import { PGLITE_SEED_PATH, readPgliteSeed } from "../../src/db/pglite-seed.js";
import { createLogger } from "../../src/log/logger.js";

const logger = createLogger("silent");

/** What a database looks like from inside: its server, its settings and every migrated column. */
async function describeDatabase(db: Database) {
  return db.withConnection(async (c) => ({
    settings: await c.query<{ name: string; setting: string; unit: string | null }>(
      `SELECT name, setting, unit FROM pg_settings WHERE name IN ('server_version', 'shared_buffers', 'min_wal_size', 'max_wal_size', 'wal_segment_size', 'server_encoding', 'lc_collate', 'TimeZone') ORDER BY name`,
    ),
    databases: await c.query(`SELECT datname FROM pg_database ORDER BY datname`),
    columns: await c.query(
      `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
       WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`,
    ),
  }));
}

/** The described settings of these names. */
function settingsNamed(description: Awaited<ReturnType<typeof describeDatabase>>, names: string[]) {
  return description.settings.filter((s) => names.includes(s.name));
}

describe("PGlite starts from the build's initdb seed", () => {
  test("the build made a seed for this PGlite", () => {
    assert.ok(existsSync(PGLITE_SEED_PATH), `${PGLITE_SEED_PATH} (npm run build makes it)`);
    assert.ok(readPgliteSeed() instanceof Blob);
  });

  test("an in-memory database from the seed migrates as one made by initdb, and ends the same", async () => {
    const seeded = await openDatabase({ kind: "pglite", dataDir: "memory" });
    const initdb = await openDatabase({ kind: "pglite", dataDir: "memory" }, { pgliteSeed: null });
    try {
      const all = readMigrations().map((m) => m.name);
      assert.deepEqual(await seeded.withConnection((c) => migrate(c, logger)), all);
      assert.deepEqual(await initdb.withConnection((c) => migrate(c, logger)), all);
      const fromSeed = await describeDatabase(seeded);
      assert.deepEqual(fromSeed, await describeDatabase(initdb));
      assert.deepEqual(
        settingsNamed(fromSeed, ["shared_buffers", "min_wal_size", "max_wal_size", "wal_segment_size"]),
        [
          { name: "max_wal_size", setting: "4", unit: "MB" },
          { name: "min_wal_size", setting: "2", unit: "MB" },
          { name: "shared_buffers", setting: "2048", unit: "8kB" },
          { name: "wal_segment_size", setting: "1048576", unit: "B" },
        ],
        "the service's in-memory settings apply to a seeded database too",
      );
    } finally {
      await seeded.close();
      await initdb.close();
    }
  });

  test("a seed made another way (an older build's manifest) is not used", () => {
    const dir = mkdtempSync(join(tmpdir(), "ni-pglite-seed-"));
    try {
      const path = join(dir, "initdb.tar.gz");
      copyFileSync(PGLITE_SEED_PATH, path);
      const manifest = JSON.parse(readFileSync(PGLITE_SEED_PATH.replace(/\.tar\.gz$/, ".json"), "utf8"));
      writeFileSync(join(dir, "initdb.json"), JSON.stringify({ pglite: manifest.pglite }));
      assert.equal(readPgliteSeed(path), undefined);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a new data directory starts from the seed and keeps what was written when reopened", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ni-pglite-seed-"));
    try {
      const first = await openDatabase({ kind: "pglite", dataDir: dir });
      try {
        await first.withConnection((c) => migrate(c, logger));
        await first.prisma.cluster.create({ data: { name: "prod-eu" } });
        assert.deepEqual(
          settingsNamed(await describeDatabase(first), ["min_wal_size", "max_wal_size", "wal_segment_size"]),
          [
            { name: "max_wal_size", setting: "32", unit: "MB" },
            { name: "min_wal_size", setting: "32", unit: "MB" },
            { name: "wal_segment_size", setting: "1048576", unit: "B" },
          ],
          "a data directory keeps 32 MB of WAL, which a directory made with 16 MB segments also accepts",
        );
      } finally {
        await first.close();
      }
      assert.ok(existsSync(join(dir, "PG_VERSION")));
      const again = await openDatabase({ kind: "pglite", dataDir: dir });
      try {
        assert.deepEqual(await again.withConnection((c) => migrate(c, logger)), []);
        assert.equal((await again.prisma.cluster.findUnique({ where: { name: "prod-eu" } }))?.name, "prod-eu");
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
