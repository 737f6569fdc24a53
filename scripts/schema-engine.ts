// Prisma's own schema engine, compiled to WebAssembly, driven offline (the CLI's native
// engine cannot be downloaded here). Dev-time only: generating migrations and checking
// that schema.prisma and prisma/migrations agree.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaPg } from "@prisma/adapter-pg";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
import { MIGRATIONS_DIR, readMigrations } from "../src/db/migrations.js";

const require = createRequire(import.meta.url);
export const SCHEMA_PATH = join(MIGRATIONS_DIR, "..", "schema.prisma");

// The package's entry imports its .wasm as an ES module, which Node 20 only does behind a
// flag; instantiate it by hand exactly as that entry would.
async function loadEngine() {
  const bg = await import("@prisma/schema-engine-wasm/schema_engine_bg" as string);
  // The .wasm is not in the package's exports: find it beside the entry.
  const wasmPath = join(dirname(require.resolve("@prisma/schema-engine-wasm")), "schema_engine_bg.wasm");
  const module = new WebAssembly.Module(readFileSync(wasmPath));
  const instance = new WebAssembly.Instance(module, { "./schema_engine_bg.js": bg });
  bg.__wbg_set_wasm(instance.exports);
  (instance.exports as { __wbindgen_start(): void }).__wbindgen_start();
  return bg.SchemaEngine;
}

const filters = { externalTables: [], externalEnums: [] };

/** The migrations folder in the engine's terms. */
function migrationsList() {
  return {
    baseDir: MIGRATIONS_DIR,
    lockfile: { path: join(MIGRATIONS_DIR, "migration_lock.toml"), content: readFileSync(join(MIGRATIONS_DIR, "migration_lock.toml"), "utf8") },
    shadowDbInitScript: "",
    migrationDirectories: readMigrations().map((m) => ({
      // Relative to baseDir: the engine names a migration by this path (the ledger holds the bare name).
      path: m.name,
      migrationFile: { path: "migration.sql", content: { tag: "ok", value: m.sql } },
    })),
  };
}

/**
 * The SQL that takes the database from what prisma/migrations builds to what schema.prisma
 * describes; empty when they agree. Runs against a throwaway in-memory PGlite.
 */
export async function pendingSchemaChange(): Promise<string> {
  const SchemaEngine = await loadEngine();
  const pglite = new PGlite();
  try {
    const datamodel = readFileSync(SCHEMA_PATH, "utf8");
    const engine = await SchemaEngine.new({ datamodels: [[SCHEMA_PATH, datamodel]] }, () => {}, bindMigrationAwareSqlAdapterFactory(new PrismaPGlite(pglite)));
    const result = await engine.diff({
      from: { tag: "migrations", ...migrationsList() },
      to: { tag: "schemaDatamodel", files: [{ path: SCHEMA_PATH, content: datamodel }] },
      script: true,
      exitCode: true,
      filters,
    });
    return result.exitCode === 2 ? (result.stdout ?? "") : "";
  } finally {
    await pglite.close();
  }
}

/**
 * How Prisma's own engine reads the migration ledger of the PostgreSQL database at `url`
 * against prisma/migrations, as `prisma migrate status` would: migrations it finds edited
 * (checksum mismatch) or failed, and whether the history is in sync (`history` null).
 */
export async function migrationHistoryAsPrismaSeesIt(url: string): Promise<{ hasMigrationsTable: boolean; editedMigrationNames: string[]; failedMigrationNames: string[]; history: unknown }> {
  const SchemaEngine = await loadEngine();
  const datamodel = readFileSync(SCHEMA_PATH, "utf8");
  const engine = await SchemaEngine.new({ datamodels: [[SCHEMA_PATH, datamodel]] }, () => {}, bindMigrationAwareSqlAdapterFactory(new PrismaPg({ connectionString: url })));
  const result = await engine.diagnoseMigrationHistory({ migrationsList: migrationsList(), optInToShadowDatabase: false, filters });
  return { hasMigrationsTable: result.hasMigrationsTable, editedMigrationNames: result.editedMigrationNames, failedMigrationNames: result.failedMigrationNames, history: result.history ?? null };
}
