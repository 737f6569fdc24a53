import { randomUUID } from "node:crypto";
import type { Logger } from "../log/logger.js";
import { readMigrations, type Migration } from "./migrations.js";
import type { SqlConnection } from "./sql-connection.js";

/** The ledger `prisma migrate deploy` keeps, so either tool sees the same history. */
const LEDGER_DDL = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id"                  VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum"            VARCHAR(64) NOT NULL,
  "finished_at"         TIMESTAMPTZ,
  "migration_name"      VARCHAR(255) NOT NULL,
  "logs"                TEXT,
  "rolled_back_at"      TIMESTAMPTZ,
  "started_at"          TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

// Any constant works; it only has to be the same for every replica of this service.
const MIGRATION_LOCK_KEY = 72_617_001;

export class MigrationError extends Error {
  override name = "MigrationError";
}

interface LedgerRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

/**
 * Applies every migration not yet in the ledger, each in its own transaction with its
 * ledger row, under an advisory lock so replicas starting together apply each one once.
 * Returns the names applied now.
 */
export async function migrate(
  connection: SqlConnection,
  logger: Logger,
  migrations: Migration[] = readMigrations(),
  /** Aborted: stop waiting for another replica's lock (a shutdown during start). */
  signal?: AbortSignal,
): Promise<string[]> {
  await takeLock(connection, logger, signal);
  try {
    await connection.exec(LEDGER_DDL);
    const ledger = await connection.query<LedgerRow>(`SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL`);
    const applied = new Map(ledger.map((row) => [row.migration_name, row]));
    const appliedNow: string[] = [];
    for (const migration of migrations) {
      const row = applied.get(migration.name);
      if (row && !row.finished_at) {
        throw new MigrationError(`migration ${migration.name} started but never finished; resolve it (prisma migrate resolve) before starting again`);
      }
      if (row) {
        if (row.checksum !== migration.checksum) {
          logger.warn({ migration: migration.name }, "migration file changed after it was applied");
        }
        continue;
      }
      await applyOne(connection, migration);
      logger.info({ migration: migration.name }, "applied migration");
      appliedNow.push(migration.name);
    }
    return appliedNow;
  } finally {
    await connection.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]);
  }
}

/** How often a replica waiting for another's migrations asks for the lock again. */
const LOCK_POLL_MS = 200;

/**
 * The advisory lock, asked for without blocking so a wait can be given up: a replica waiting
 * for another replica's migrations can still shut down at once on SIGTERM.
 */
async function takeLock(connection: SqlConnection, logger: Logger, signal: AbortSignal | undefined): Promise<void> {
  for (let waited = false; ; waited = true) {
    const [row] = await connection.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [MIGRATION_LOCK_KEY]);
    if (row?.locked) return;
    if (!waited) logger.info("another replica is applying migrations: waiting for it");
    if (signal?.aborted) throw new MigrationError("stopped while waiting for another replica's migrations");
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, LOCK_POLL_MS);
      signal?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
}

async function applyOne(connection: SqlConnection, migration: Migration): Promise<void> {
  await connection.exec("BEGIN");
  try {
    await connection.exec(migration.sql);
    await connection.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, finished_at, applied_steps_count)
       VALUES ($1, $2, $3, now(), 1)`,
      [randomUUID(), migration.checksum, migration.name],
    );
    await connection.exec("COMMIT");
  } catch (error) {
    await connection.exec("ROLLBACK");
    throw new MigrationError(`migration ${migration.name} failed: ${(error as Error).message}`);
  }
}
