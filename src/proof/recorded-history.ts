/**
 * Reads what the service recorded (the history tables) for the checker, from PostgreSQL by URL or
 * from a PGlite data directory (opened only once no replica holds it).
 */
import pg from "pg";
import { PGlite } from "@electric-sql/pglite";
import type { RecordedHistory } from "./history-checker.js";

type Row = Record<string, any>;
type Query = (sql: string) => Promise<Row[]>;

/** `postgres://…` or a PGlite data directory. */
export async function readRecordedHistory(database: string): Promise<RecordedHistory> {
  if (/^postgres(ql)?:\/\//.test(database)) {
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    try {
      return await read(async (sql) => (await client.query(sql)).rows);
    } finally {
      await client.end();
    }
  }
  const db = await PGlite.create(database);
  try {
    return await read(async (sql) => (await db.query<Row>(sql)).rows);
  } finally {
    await db.close();
  }
}

const ms = (v: unknown) => (v instanceof Date ? v.getTime() : Date.parse(String(v)));

async function read(query: Query): Promise<RecordedHistory> {
  const transitions = await query(`SELECT id::text AS id, cluster, node, type, "from", "to", at, reconciled FROM condition_transition ORDER BY id`);
  const changes = await query(`SELECT id::text AS id, cluster, node, field, item, before, after, at, reconciled FROM node_change ORDER BY id`);
  const maintenance = await query(`SELECT id::text AS id, cluster, node, kind, at FROM maintenance_event ORDER BY id`);
  const drains = await query(`SELECT id, cluster, node, status, dry_run, pods FROM drain_operation`);
  return {
    transitions: transitions.map((r) => ({ id: Number(r.id), cluster: r.cluster, node: r.node, type: r.type, from: r.from ?? null, to: r.to, at: ms(r.at), reconciled: Boolean(r.reconciled) })),
    changes: changes.map((r) => ({
      id: Number(r.id),
      cluster: r.cluster,
      node: r.node,
      field: r.field,
      item: r.item,
      before: r.before,
      after: r.after,
      at: ms(r.at),
      reconciled: Boolean(r.reconciled),
    })),
    maintenance: maintenance.map((r) => ({ id: Number(r.id), cluster: r.cluster, node: r.node, kind: r.kind, at: ms(r.at) })),
    drains: drains.map((r) => ({ id: r.id, cluster: r.cluster, node: r.node, status: r.status, dryRun: Boolean(r.dry_run), pods: r.pods ?? [] })),
  };
}
