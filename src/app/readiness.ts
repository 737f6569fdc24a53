import type { ClusterRegistry } from "../cluster/cluster-registry.js";
import type { Database } from "../db/database.js";
import type { HistoryRecorder } from "../history/history-recorder.js";
import type { Readiness } from "../http/http-server.js";

/** What readiness reads: the database, each cluster's cache and the history recorder. */
export interface ReadinessSources {
  database: Database;
  clusters: ClusterRegistry;
  recorder: HistoryRecorder;
}

/** Readiness, read from the other parts each time a probe asks; it owns nothing of its own. */
export function readinessOf({ database, clusters, recorder }: ReadinessSources): () => Promise<Readiness> {
  return async () => {
    const up = await database.ping();
    // A full disk answers reads (the ping) and refuses every write: unavailable all the same.
    const full = recorder.status.diskFull;
    const checks: Readiness["checks"] = {
      database: !up ? { ok: false, detail: "not answering" } : full ? { ok: false, detail: "disk full: writes fail (history buffered, the cache still served)" } : { ok: true },
    };
    for (const cache of clusters.all()) {
      const status = cache.status();
      // A cluster still loading holds readiness back; one that failed does not, so an
      // unreachable cluster never keeps the others from being served. Probes are
      // anonymous: the error itself (addresses, TLS details) is for the log and for
      // authenticated callers of `clusters { lastError }`.
      checks[`cluster:${cache.name}`] = status.synced
        ? { ok: true, ...(status.connected ? {} : { detail: "watch reconnecting; serving the last known state" }) }
        : status.lastError
          ? // A missing permission is no address or TLS detail: say which, so a deployment's RBAC can be fixed from its probe.
            {
              ok: true,
              detail:
                status.lastErrorReason === "Forbidden"
                  ? `forbidden: ${status.lastError}`
                  : status.lastErrorReason === "Unauthorized"
                    ? "unauthorized: the cluster refused the credentials"
                    : "unreachable (its error: clusters { lastError })",
            }
          : { ok: false, detail: "syncing" };
    }
    const history = recorder.status;
    const stalled = recorder.stalled();
    checks["history"] = {
      // A recorder whose writes keep failing while the database answers is stuck, not waiting out an outage.
      ok: !stalled,
      ...(history.pending || history.dropped || history.refused || !history.databaseUp
        ? {
            detail: `${history.pending} observations buffered, ${history.dropped} dropped, ${history.refused} refused${history.databaseUp ? "" : ", database not writable"}${stalled ? `, no progress since ${stalled.toISOString()}` : ""}`,
          }
        : {}),
    };
    return { ready: Object.values(checks).every((check) => check.ok), checks };
  };
}
