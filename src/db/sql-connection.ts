/**
 * The little raw SQL the service needs outside Prisma (migrations, later LISTEN/NOTIFY),
 * over either backend. `exec` runs a multi-statement script; `query` one statement.
 */
export interface SqlConnection {
  exec(script: string): Promise<void>;
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
}
