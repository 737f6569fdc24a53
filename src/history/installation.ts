import type { Database } from "../db/database.js";

/**
 * This installation's id: made once by the database itself (migration
 * `installation`), so every replica sharing the database reads the same one, and an
 * installation with a database of its own has another.
 */
export async function readInstallationId(database: Database): Promise<string> {
  const [row] = await database.withConnection((c) => c.query<{ id: string }>(`SELECT id FROM "installation" ORDER BY created_at, id LIMIT 1`));
  if (!row) throw new Error("the installation table is empty: the migration that creates it also fills it");
  return row.id;
}

/**
 * The history Lease of one installation: `node-inventory-history-` and the first 12 hex
 * digits of its id. Installations watching one cluster each record its history; replicas of
 * one installation elect one recorder.
 */
export function historyLeaseName(installationId: string): string {
  return `node-inventory-history-${installationId.replace(/-/g, "").slice(0, 12)}`;
}
