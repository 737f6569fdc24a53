import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../package-info.js";

/** prisma/migrations at the package root. */
export const MIGRATIONS_DIR = join(PACKAGE_ROOT, "prisma", "migrations");

/** One folder of prisma/migrations, in Prisma's standard format. */
export interface Migration {
  name: string;
  sql: string;
  /** sha256 of migration.sql, as Prisma writes it in `_prisma_migrations.checksum`. */
  checksum: string;
}

/** The migrations in the order they apply (folder names start with a timestamp). */
export function readMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}
