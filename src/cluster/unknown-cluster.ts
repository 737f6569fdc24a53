import type { Database } from "../db/database.js";
import { AppError, ErrorCode } from "../graphql/errors.js";

/** The configured clusters, by name (the ClusterRegistry). */
export interface ClusterNames {
  names(): string[];
}

/** Resolves when a history answer may name `cluster`; rejects with NOT_FOUND when it may not. */
export type HistoryClusterCheck = (cluster: string | null | undefined) => Promise<void>;

/**
 * The one rule for a cluster named by a caller: one this service does not know is NOT_FOUND,
 * whatever asks (queries, reports, subscriptions, the CLI through them); an empty answer would
 * look like a cluster with nothing to say. Live answers know the configured clusters.
 */
export function assertConfiguredCluster(clusters: ClusterNames, name: string | null | undefined): void {
  if (name == null) return;
  const names = clusters.names();
  if (!names.includes(name)) {
    throw new AppError(ErrorCode.NOT_FOUND, `cluster "${name}" is not configured (clusters: ${names.join(", ") || "none"})`);
  }
}

/**
 * History answers also know the clusters the database recorded: history is kept after a
 * cluster leaves the configuration (and read without a service by `report --database-url`).
 */
export function historyClusterCheck(database: Database, configured?: ClusterNames): HistoryClusterCheck {
  return async (name) => {
    if (name == null || configured?.names().includes(name)) return;
    let recorded: boolean;
    try {
      recorded = (await database.prisma.nodeState.findFirst({ where: { cluster: name }, select: { cluster: true } })) !== null;
    } catch {
      // The database is down: the query itself will say so (UNAVAILABLE), not this check.
      return;
    }
    if (recorded) return;
    const names = configured?.names() ?? [];
    throw new AppError(ErrorCode.NOT_FOUND, `cluster "${name}" is not configured and has no recorded history${configured ? ` (clusters: ${names.join(", ") || "none"})` : ""}`);
  };
}
