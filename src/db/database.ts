import { existsSync, mkdirSync, statfsSync } from "node:fs";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { redactDatabaseUrl, type DatabaseConfig } from "../config/config.js";
import { redactUrlsIn } from "../log/redact-url.js";
import { PrismaClient } from "./generated/client.js";
import { DataDirLockedError, lockDataDir } from "./pglite-lock.js";
import { INITDB_ARGS, readPgliteSeed } from "./pglite-seed.js";
import type { SqlConnection } from "./sql-connection.js";

/** The database port: Prisma for the domain, raw SQL for the few things Prisma does not do. */
export interface Database {
  readonly kind: DatabaseConfig["kind"];
  /** Where it is, safe to log (no password). */
  readonly description: string;
  readonly prisma: PrismaClient;
  /** Runs `fn` on one dedicated connection (session state such as advisory locks holds). */
  withConnection<T>(fn: (connection: SqlConnection) => Promise<T>): Promise<T>;
  /** True when a trivial query answers within `timeoutMs`. */
  ping(timeoutMs?: number): Promise<boolean>;
  close(): Promise<void>;
}

/** The database cannot be reached or opened; the message is safe to print. */
export class DatabaseUnavailableError extends Error {
  override name = "DatabaseUnavailableError";
}

// Short enough that a start against a database that does not answer ends within 5 s.
const CONNECT_TIMEOUT_MS = 3_000;

export interface OpenOptions {
  /** PGlite: the data directory a new database starts from; null runs initdb (default: the build's seed). */
  pgliteSeed?: Blob | null;
}

/** Opens the configured backend and proves it answers; throws DatabaseUnavailableError if not. */
export async function openDatabase(config: DatabaseConfig, options: OpenOptions = {}): Promise<Database> {
  return config.kind === "postgres" ? openPostgres(config.url) : openPglite(config.dataDir, options);
}

async function openPostgres(url: string): Promise<Database> {
  const description = redactDatabaseUrl(url);
  const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, max: 10 });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on("error", () => {});
  try {
    await pool.query("SELECT 1");
  } catch (error) {
    await pool.end().catch(() => {});
    throw new DatabaseUnavailableError(`cannot reach the database at ${description}: ${describePgError(error)}`);
  }
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  let closed = false;
  return {
    kind: "postgres",
    description,
    prisma,
    async withConnection(fn) {
      const client = await pool.connect();
      try {
        return await fn({
          exec: async (script) => void (await client.query(script)),
          query: async (sql, params) => (await client.query(sql, params)).rows,
        });
      } finally {
        client.release();
      }
    },
    ping: (timeoutMs = 2_000) => withTimeout(pool.query("SELECT 1").then(() => true), timeoutMs),
    async close() {
      if (closed) return;
      closed = true;
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

/**
 * PostgreSQL's default 128 MB of shared buffers live in PGlite's WebAssembly memory, which never
 * shrinks once touched. The data's pages are in this process's memory anyway (in memory) or in
 * the OS's page cache, so a small buffer pool costs a copy, not a disk read. Measured: an empty
 * in-memory PGlite, 572 MiB resident with the default, 284 MiB with this.
 */
const PGLITE_SETTINGS = [
  "shared_buffers = 16MB",
  // WAL stays in the data directory until a checkpoint, and a checkpoint keeps segments for
  // reuse up to max_wal_size. 32 MB is two segments of a data directory made before the seed's
  // 1 MB segments (pglite-seed.ts), the least PostgreSQL accepts there.
  "min_wal_size = 32MB",
  "max_wal_size = 32MB",
];

/**
 * In memory the WAL is this process's memory, and every database there is new, made with 1 MB
 * segments (pglite-seed.ts): two of them are kept for reuse instead of 32 MB. Measured with a
 * 5,000-node first history write: 32 MiB of WAL left after a checkpoint before, 4 MiB now.
 */
const IN_MEMORY_SETTINGS = ["min_wal_size = 2MB", "max_wal_size = 4MB"];

/**
 * PGlite is PostgreSQL's single-user backend: it has no checkpointer, and its WAL write path
 * never asks for a checkpoint (only a backend under a postmaster does), so without one the WAL
 * grows for as long as the process writes. Measured in a bare script, six rounds of 30,000 rows
 * inserted and half of them updated: 176 MiB of WAL, growing. With this timer and the sizes
 * above, four such rounds leave 80 MiB and a minute later 32 MiB, where it stays.
 * PostgreSQL's own checkpoint_timeout is 5 min; a checkpoint with nothing dirty costs little.
 */
const PGLITE_CHECKPOINT_MS = 60_000;

/**
 * In memory, WAL written since the last checkpoint is looked at this often, and past
 * {@link IN_MEMORY_WAL_CHECKPOINT_BYTES} a checkpoint comes at once, as PostgreSQL's own
 * checkpointer does at max_wal_size: the first history write of 5,000 nodes is ~20 MB of WAL,
 * which otherwise stayed resident for up to a minute. The look is one short query.
 */
const IN_MEMORY_WAL_CHECK_MS = 2_000;
const IN_MEMORY_WAL_CHECKPOINT_BYTES = 8 * 1024 * 1024;

/**
 * PGlite's PostgreSQL is a 9 MB WebAssembly module. V8 runs it first with its baseline compiler
 * (Liftoff) and recompiles its hot functions with TurboFan on background threads, whose working
 * memory the C allocator keeps once freed: in a bare script (PGlite in memory, migrated, a
 * 5,000-node history write) 513-549 MiB resident and 6.3-10.1 CPU s with tier-up, 431-453 MiB
 * and 5.0-6.6 CPU s Liftoff only. The price is in steady work once TurboFan would have warmed up:
 * eight more rounds of 5,000 writes took 10-15 % more CPU, and reads (a 100,000-row scan and 50
 * index lookups, 20 rounds) 1.2-1.7x the CPU. The flag is the process's, so Prisma's query
 * compiler (WebAssembly too) runs on Liftoff as well. A --liftoff-only / --no-liftoff-only of the
 * caller's own wins.
 */
function useLiftoffOnly(): void {
  // Once per process: a test run opens hundreds of databases.
  if (liftoffDecided) return;
  liftoffDecided = true;
  if (process.execArgv.some((arg) => /^--(no-)?liftoff[-_]only/.test(arg))) return;
  setFlagsFromString("--liftoff-only");
}
let liftoffDecided = false;

async function openPglite(dataDir: string, options: OpenOptions): Promise<Database> {
  const inMemory = dataDir === "memory";
  const description = inMemory ? "embedded PGlite (in memory)" : `embedded PGlite at ${dataDir}`;
  let pglite: PGlite;
  let unlock = () => {};
  try {
    if (!inMemory) {
      mkdirSync(dataDir, { recursive: true });
      unlock = lockDataDir(dataDir);
    }
    // A new database starts from initdb's output made at build time (pglite-seed.ts); an
    // existing directory is opened as it is.
    const isNew = inMemory || !existsSync(join(dataDir, "PG_VERSION"));
    const seed = isNew ? (options.pgliteSeed === undefined ? readPgliteSeed() : options.pgliteSeed) : undefined;
    useLiftoffOnly();
    pglite = await PGlite.create(inMemory ? undefined : dataDir, {
      postgresqlconf: inMemory ? [...PGLITE_SETTINGS, ...IN_MEMORY_SETTINGS] : PGLITE_SETTINGS,
      ...(seed ? { loadDataDir: seed } : { initDbStartParams: [...INITDB_ARGS] }),
    });
  } catch (error) {
    unlock();
    if (error instanceof DataDirLockedError) throw error;
    throw new DatabaseUnavailableError(`cannot open ${description}: ${pgliteOpenFailure(error, inMemory ? undefined : dataDir)}`);
  }
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
  const connection: SqlConnection = {
    exec: async (script) => void (await pglite.exec(script)),
    query: async (sql, params) => (await pglite.query(sql, params)).rows as never[],
  };
  let closed = false;
  let checkpointing: Promise<unknown> = Promise.resolve();
  let lastCheckpoint = Date.now();
  const checkpoint = () => {
    lastCheckpoint = Date.now();
    // A failed checkpoint is retried next time; the queries that matter report their own errors.
    checkpointing = pglite.exec("CHECKPOINT").catch(() => {});
  };
  const checkpoints = inMemory
    ? setInterval(() => {
        if (Date.now() - lastCheckpoint >= PGLITE_CHECKPOINT_MS) return checkpoint();
        checkpointing = walSinceCheckpoint(pglite).then(
          (bytes) => bytes > IN_MEMORY_WAL_CHECKPOINT_BYTES && !closed && checkpoint(),
          () => {},
        );
      }, IN_MEMORY_WAL_CHECK_MS)
    : setInterval(checkpoint, PGLITE_CHECKPOINT_MS);
  checkpoints.unref();
  return {
    kind: "pglite",
    description,
    prisma,
    // PGlite is one connection already; callers are serialised by PGlite itself.
    withConnection: (fn) => fn(connection),
    ping: (timeoutMs = 2_000) => withTimeout(pglite.query("SELECT 1").then(() => true), timeoutMs),
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(checkpoints);
      await checkpointing;
      await prisma.$disconnect();
      await pglite.close();
      unlock();
    },
  };
}

/**
 * A new PGlite database takes ~31 MiB on disk (its catalogue and the first WAL segments), and
 * history grows it: below this much free space a failed open is blamed on the disk.
 */
const PGLITE_MIN_FREE_BYTES = 64 * 1024 * 1024;

/**
 * Why PGlite could not open. Out of disk space, PostgreSQL inside WebAssembly aborts without
 * a message (the error's message is undefined), so the free space of the directory is looked at.
 */
function pgliteOpenFailure(error: unknown, dataDir: string | undefined): string {
  const message = (error as Error | undefined)?.message || "";
  let free: number | undefined;
  try {
    if (dataDir) {
      const stats = statfsSync(dataDir);
      free = stats.bavail * stats.bsize;
    }
  } catch {
    // Unknown: say what PGlite said.
  }
  if (free !== undefined && (free < PGLITE_MIN_FREE_BYTES || /No space left/i.test(message))) {
    return `the disk is full or too small: ${(free / 1024 / 1024).toFixed(1)} MiB free there, and a new database needs about 31 MiB, more as history grows (free space, or point --data-dir elsewhere)${message ? ` (${message})` : ""}`;
  }
  return message || `PGlite failed without saying why (${String(error)})`;
}

/** Bytes of WAL written since the last checkpoint began. */
async function walSinceCheckpoint(pglite: PGlite): Promise<number> {
  const { rows } = await pglite.query<{ bytes: number }>("SELECT (pg_current_wal_insert_lsn() - redo_lsn)::float8 AS bytes FROM pg_control_checkpoint()");
  return rows[0]!.bytes;
}

function withTimeout(probe: Promise<boolean>, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    probe.then(
      (ok) => (clearTimeout(timer), resolve(ok)),
      () => (clearTimeout(timer), resolve(false)),
    );
  });
}

/** pg's errors: the code (ECONNREFUSED, 3D000 …) and message, never the connection string. */
function describePgError(error: unknown): string {
  const e = error as { code?: string; message?: string; errors?: { code?: string }[] };
  const code = e.code ?? e.errors?.[0]?.code;
  const message = e.message && e.message.length > 0 ? redactUrlsIn(e.message) : "connection failed";
  return code && !message.includes(code) ? `${message} (${code})` : message;
}
