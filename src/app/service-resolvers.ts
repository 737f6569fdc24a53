import type { Database } from "../db/database.js";
import type { Resolvers } from "../graphql/schema.js";
import type { LeaseView, RecorderStatus } from "../history/history-recorder.js";
import { VERSION } from "../package-info.js";

/** `Query.service`: what this instance is, whether its database answers, how its recorder is doing. */
export function serviceResolvers(database: Database, startedAt: Date, recorder: () => RecorderStatus, leases: () => LeaseView[] = () => []): Resolvers {
  return {
    Query: {
      service: () => ({
        version: VERSION,
        startedAt,
        database: { kind: database.kind, reachable: () => database.ping() },
        history: () => {
          const status = recorder();
          return {
            leaderOf: status.leaderOf,
            pendingWrites: status.pending,
            droppedWrites: status.dropped,
            databaseWritable: status.databaseUp,
            recordedTransitions: status.recorded.transitions,
            recordedChanges: status.recorded.changes,
            recordedMaintenanceEvents: status.recorded.maintenance,
            leases: leases(),
          };
        },
      }),
    },
  };
}
