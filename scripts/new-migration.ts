// `npm run migration:new -- <name>`: writes prisma/migrations/<timestamp>_<name>/migration.sql
// with what schema.prisma adds to the existing migrations.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MIGRATIONS_DIR } from "../src/db/migrations.js";
import { pendingSchemaChange } from "./schema-engine.js";

const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error("usage: npm run migration:new -- <snake_case_name>");
  process.exit(2);
}
const sql = await pendingSchemaChange();
if (sql.trim() === "" || /^-- This is an empty migration/.test(sql.trim())) {
  console.log("schema.prisma and prisma/migrations already agree: nothing to write");
  process.exit(0);
}
const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
const dir = join(MIGRATIONS_DIR, `${stamp}_${name}`);
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, "migration.sql"), sql);
console.log(`wrote ${dir}/migration.sql`);
