import type { Database } from "../db/database.js";
import type { DatabaseStatus, HistoryRecorderStatus } from "../graphql/generated/resolvers-types.js";
import type { HistoryRecorderStatusResolvers, DatabaseStatusResolvers } from "../graphql/generated/resolvers-types.js";
import type { CompleteResolvers, Resolvers } from "../graphql/schema.js";
import type { LeaseView, RecorderStatus } from "../history/history-recorder.js";
import { VERSION } from "../package-info.js";

/** `Query.service`: what this instance is, whether its database answers, how its recorder is doing. */
export function serviceResolvers(database: Database, startedAt: Date, recorder: () => RecorderStatus, leases: () => LeaseView[] = () => []): Resolvers {
  return {
    Query: {
      service: () => ({ version: VERSION, startedAt, database, history: recorder() }),
    },
    DatabaseStatus: {
      reachable: (db) => db.ping(),
    } satisfies CompleteResolvers<DatabaseStatusResolvers, Database, DatabaseStatus>,
    HistoryRecorderStatus: {
      pendingWrites: (status) => status.pending,
      droppedWrites: (status) => status.dropped,
      databaseWritable: (status) => status.databaseUp,
      recordedTransitions: (status) => status.recorded.transitions,
      recordedChanges: (status) => status.recorded.changes,
      recordedMaintenanceEvents: (status) => status.recorded.maintenance,
      leases: () => leases(),
      refusedWrites: (status) => status.refused,
      stalledSince: (status) => status.stalledSince ?? null,
    } satisfies CompleteResolvers<HistoryRecorderStatusResolvers, RecorderStatus, HistoryRecorderStatus>,
  };
}
