import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { migrationHistoryAsPrismaSeesIt } from "../../scripts/schema-engine.js";
import type { Database } from "../../src/db/database.js";
import { openDatabase, DatabaseUnavailableError } from "../../src/db/database.js";
import { MIGRATIONS_DIR, readMigrations } from "../../src/db/migrations.js";
import { migrate } from "../../src/db/migrator.js";
import { createLogger } from "../../src/log/logger.js";
import { BACKENDS, type TestDatabase } from "../support/databases.js";
import { eventually } from "../support/sim-cluster.js";

const logger = createLogger("silent");

for (const backend of BACKENDS) {
  describe(`database on ${backend.name}`, () => {
    async function withFresh(fn: (db: Database, fresh: TestDatabase) => Promise<void>) {
      const fresh = await backend.create();
      const db = await fresh.open();
      try {
        await fn(db, fresh);
      } finally {
        await db.close();
        await fresh.drop();
      }
    }

    test("migrations apply once, and the ledger is Prisma's", async () => {
      await withFresh(async (db, fresh) => {
        const all = readMigrations().map((m) => m.name);
        assert.deepEqual(await db.withConnection((c) => migrate(c, logger)), all);
        assert.deepEqual(await db.withConnection((c) => migrate(c, logger)), []);
        const ledger = await db.withConnection((c) =>
          c.query<{ migration_name: string; checksum: string; finished: boolean }>(
            `SELECT migration_name, checksum, finished_at IS NOT NULL AS finished FROM "_prisma_migrations" ORDER BY migration_name`,
          ),
        );
        // Prisma's checksum is the sha256 of migration.sql as it is on disk, computed here apart from the migrator.
        const onDisk = readdirSync(MIGRATIONS_DIR, { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .map((entry) => entry.name)
          .sort()
          .map((name) => ({
            migration_name: name,
            checksum: createHash("sha256")
              .update(readFileSync(join(MIGRATIONS_DIR, name, "migration.sql")))
              .digest("hex"),
            finished: true,
          }));
        assert.deepEqual(ledger, onDisk);
        if (fresh.config.kind === "postgres") {
          // And Prisma's own engine reads the ledger as its own, in sync with prisma/migrations.
          assert.deepEqual(await migrationHistoryAsPrismaSeesIt(fresh.config.url), { hasMigrationsTable: true, editedMigrationNames: [], failedMigrationNames: [], history: null });
        }
      });
    });

    test("Prisma reads and writes the migrated tables", async () => {
      await withFresh(async (db) => {
        await db.withConnection((c) => migrate(c, logger));
        await db.prisma.cluster.create({ data: { name: "prod-eu" } });
        const found = await db.prisma.cluster.findUnique({ where: { name: "prod-eu" } });
        assert.equal(found?.name, "prod-eu");
        assert.ok(found.firstSeenAt instanceof Date);
        assert.equal(await db.ping(), true);
      });
    });

    test("a migration that fails leaves no trace", async () => {
      await withFresh(async (db) => {
        const broken = [{ name: "29990101000000_broken", sql: "CREATE TABLE half (id int); SELECT nope FROM nowhere;", checksum: "x" }];
        await assert.rejects(
          db.withConnection((c) => migrate(c, logger, broken)),
          /migration 29990101000000_broken failed/,
        );
        const tables = await db.withConnection((c) => c.query(`SELECT 1 FROM pg_tables WHERE tablename = 'half'`));
        assert.equal(tables.length, 0);
        const ledger = await db.withConnection((c) => c.query(`SELECT 1 FROM "_prisma_migrations"`));
        assert.equal(ledger.length, 0);
      });
    });
  });
}

describe("database on postgres, several replicas", () => {
  test("replicas migrating at once apply each migration exactly once", async () => {
    const fresh = await BACKENDS.find((b) => b.name === "postgres")!.create();
    const replicas = await Promise.all([fresh.open(), fresh.open(), fresh.open()]);
    try {
      const applied = await Promise.all(replicas.map((db) => db.withConnection((c) => migrate(c, logger))));
      assert.deepEqual(
        applied.flat().sort(),
        readMigrations()
          .map((m) => m.name)
          .sort(),
      );
    } finally {
      await Promise.all(replicas.map((db) => db.close()));
      await fresh.drop();
    }
  });

  test("an unreachable server is a DatabaseUnavailableError that hides the password", async () => {
    await assert.rejects(openDatabase({ kind: "postgres", url: "postgresql://app:s3cret@127.0.0.1:1/inv" }), (error: Error) => {
      assert.ok(error instanceof DatabaseUnavailableError);
      assert.match(error.message, /^cannot reach the database at postgresql:\/\/app@127\.0\.0\.1:1\/inv: .*ECONNREFUSED/);
      assert.doesNotMatch(error.message, /s3cret/);
      return true;
    });
  });
});

describe("database on PGlite in memory", () => {
  test("WAL written past 8 MB is checkpointed within seconds, down to the 4 MB kept for reuse", async () => {
    const db = await openDatabase({ kind: "pglite", dataDir: "memory" });
    try {
      const walBytes = async () => (await db.withConnection((c) => c.query<{ bytes: number }>("SELECT sum(size)::float8 AS bytes FROM pg_ls_waldir()")))[0]!.bytes;
      await db.withConnection((c) => c.exec("CREATE TABLE filler (a text); INSERT INTO filler SELECT repeat('x', 200) FROM generate_series(1, 60000)"));
      assert.ok((await walBytes()) > 12 * 1024 * 1024, "the insert wrote more than 12 MB of WAL");
      // No event says a checkpoint happened: look until it has (it checks every 2 s).
      await eventually(async () => (await walBytes()) <= 4 * 1024 * 1024, "the WAL checkpointed", 10_000);
      assert.equal(await walBytes(), 4 * 1024 * 1024);
    } finally {
      await db.close();
    }
  });
});
