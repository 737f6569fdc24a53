import type { HistoryClusterCheck } from "../cluster/unknown-cluster.js";
import type { Prisma } from "../db/generated/client.js";
import type { DrainOperationFilter } from "../graphql/generated/resolvers-types.js";
import type { Resolvers } from "../graphql/schema.js";
import { historyConnection, knownClusterConnection } from "../history/history-connection.js";
import type { DrainStore } from "./drain-store.js";
import type { MaintenanceService } from "./maintenance-service.js";

function whereOf(f: DrainOperationFilter): Prisma.DrainOperationWhereInput {
  return {
    ...(f.status != null ? { status: f.status } : {}),
    ...(f.requestedBy != null ? { requestedBy: f.requestedBy } : {}),
  };
}

/**
 * Query.drainOperations: every drain (dry runs included) newest first by startedAt, filtered
 * by cluster, node, status, requester and the period it started in, paged as every history
 * connection is (a keyset position, so drains started meanwhile shift no page). A running
 * drain shows its runner's latest state when this replica runs it, as drainOperation does.
 */
export function drainListResolvers(store: DrainStore, service: MaintenanceService, known: HistoryClusterCheck = async () => {}): Resolvers {
  const drainOperations = historyConnection({
    list: "drains",
    idKind: "uuid",
    time: "startedAt",
    where: whereOf,
    read: (page) => store.page(page as Parameters<DrainStore["page"]>[0]),
    count: (where) => store.count(where as Prisma.DrainOperationWhereInput),
    view: (op) => service.freshest(op),
  });
  return { Query: { drainOperations: knownClusterConnection(known, drainOperations) } };
}
