import { randomBytes } from "node:crypto";
import pg from "pg";
import { openDatabase, type Database } from "../../src/db/database.js";

/** The real PostgreSQL the suite runs against; override with TEST_POSTGRES_URL. */
export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

/** A fresh, empty database on one backend, and how to get rid of it. */
export interface TestDatabase {
  backend: "pglite" | "postgres";
  /** The DatabaseConfig that opens it (postgres: its own fresh database). */
  config: { kind: "postgres"; url: string } | { kind: "pglite"; dataDir: string };
  open(): Promise<Database>;
  drop(): Promise<void>;
}

export interface Backend {
  name: "pglite" | "postgres";
  create(): Promise<TestDatabase>;
}

/**
 * Every backend persistence tests must pass on. PostgreSQL being unreachable fails the
 * test that needs it: it is never skipped.
 */
export const BACKENDS: Backend[] = [
  {
    name: "pglite",
    async create() {
      const config = { kind: "pglite" as const, dataDir: "memory" };
      return { backend: "pglite", config, open: () => openDatabase(config), drop: async () => {} };
    },
  },
  {
    name: "postgres",
    async create() {
      const name = `ni_test_${randomBytes(6).toString("hex")}`;
      await admin((client) => client.query(`CREATE DATABASE ${name}`));
      const url = new URL(POSTGRES_ADMIN_URL);
      url.pathname = `/${name}`;
      const config = { kind: "postgres" as const, url: url.toString() };
      return {
        backend: "postgres",
        config,
        open: () => openDatabase(config),
        drop: () => admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
      };
    },
  },
];

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * An outage of one database while its server keeps running for the rest of the suite: it
 * refuses connections and loses the ones it had, until set up again.
 */
export async function setDatabaseDown(database: string, down: boolean): Promise<void> {
  await admin((client) => client.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS ${down ? "false" : "true"}`));
  if (down) await admin((client) => client.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [database]));
}
