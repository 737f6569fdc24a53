import type { HistoryClusterCheck } from "../cluster/unknown-cluster.js";
import type { Prisma } from "../db/generated/client.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import type { DrainOperationFilter } from "../graphql/generated/resolvers-types.js";
import { decodeOpaqueCursor, encodeOpaqueCursor } from "../graphql/opaque-cursor.js";
import { pageSize } from "../graphql/page-size.js";
import type { Resolvers } from "../graphql/schema.js";
import type { DrainStore } from "./drain-store.js";
import type { MaintenanceService } from "./maintenance-service.js";

const NOT_A_CURSOR = "after: not a cursor of this list";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Opaque cursor: {l: "drains", a: startedAt in epoch ms, i: id}; a keyset position, so drains started meanwhile shift no page. */
function decodeCursor(cursor: string): { startedAt: Date; id: string } {
  const p = decodeOpaqueCursor(cursor, NOT_A_CURSOR) as { l?: unknown; a?: unknown; i?: unknown } | null;
  if (typeof p !== "object" || p === null || p.l !== "drains" || typeof p.a !== "number" || !Number.isSafeInteger(p.a) || typeof p.i !== "string" || !UUID.test(p.i)) {
    throw new AppError(ErrorCode.BAD_USER_INPUT, NOT_A_CURSOR);
  }
  return { startedAt: new Date(p.a), id: p.i };
}

function whereOf(f: DrainOperationFilter): Prisma.DrainOperationWhereInput {
  if (f.since != null && f.until != null && f.since.getTime() >= f.until.getTime()) {
    throw new AppError(ErrorCode.BAD_USER_INPUT, "filter.since must be before filter.until");
  }
  return {
    ...(f.cluster != null ? { cluster: f.cluster } : {}),
    ...(f.node != null ? { node: f.node } : {}),
    ...(f.status != null ? { status: f.status } : {}),
    ...(f.requestedBy != null ? { requestedBy: f.requestedBy } : {}),
    ...(f.since != null || f.until != null
      ? { startedAt: { ...(f.since != null ? { gte: f.since } : {}), ...(f.until != null ? { lt: f.until } : {}) } }
      : {}),
  };
}

/**
 * Query.drainOperations: every drain (dry runs included) newest first by startedAt, filtered
 * by cluster, node, status, requester and the period it started in. A running drain shows its
 * runner's latest state when this replica runs it, as drainOperation does.
 */
export function drainListResolvers(store: DrainStore, service: MaintenanceService, known: HistoryClusterCheck = async () => {}): Resolvers {
  return {
    Query: {
      drainOperations: async (_root, args) => {
        const f = args.filter ?? {};
        const size = pageSize(args.first);
        const after = args.after != null ? decodeCursor(args.after) : null;
        const where = whereOf(f);
        await known(f.cluster);
        const rows = await store.list(where, size + 1, after);
        const shown = rows.slice(0, size);
        const edges = shown.map((op) => ({ cursor: encodeOpaqueCursor({ l: "drains", a: op.startedAt.getTime(), i: op.id }), node: service.freshest(op) }));
        return { edges, pageInfo: { hasNextPage: rows.length > size, endCursor: edges.at(-1)?.cursor ?? null } };
      },
    },
  };
}
