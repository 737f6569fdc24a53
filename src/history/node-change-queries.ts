/**
 * The read side of the node changes the recorder writes: the `nodeChanges` connection and the
 * batch behind `Node.changes`, ordered newest first by (at desc, id desc) like the rest of
 * history (history-queries.ts), over the node_change indexes of that order.
 */

import type { Database } from "../db/database.js";
import { forCaller } from "../db/database-errors.js";
import { globalId } from "../graphql/global-id.js";
import type { NodeChange, NodeChangeFilter, NodeChangeKind } from "../graphql/generated/resolvers-types.js";
import type { Logger } from "../log/logger.js";
import { historyConnection } from "./history-connection.js";
import { batchByNode } from "./history-queries.js";
import { taintText } from "./history-model.js";
import type { Taint } from "../cluster/model.js";

/** A NodeChange as the API serves it. */
export type NodeChangeView = NodeChange & { readonly at: Date };

/** One node's `changes(first)`: a key of the batched loader. */
export interface NodeChangesKey {
  cluster: string;
  node: string;
  first: number;
}

interface ChangeRow {
  id: bigint;
  cluster: string;
  node: string;
  field: string;
  item: string;
  before: unknown;
  after: unknown;
  at: Date;
  actor: string | null;
}

const KINDS = new Set<string>(["CREATED", "DELETED", "KUBELET_VERSION", "CONTAINER_RUNTIME", "LABELS", "TAINTS", "SCHEDULABILITY", "REBOOTED"]);

/** A stored before/after as the API's text: strings as they are, a uid or schedulability by its value. */
function text(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value;
  if (typeof value === "object" && !Array.isArray(value)) {
    const v = value as { uid?: unknown; unschedulable?: unknown };
    if (typeof v.uid === "string") return v.uid;
    if (typeof v.unschedulable === "boolean") return String(v.unschedulable);
  }
  // Rows written before one row per label or taint: every changed label, or the whole taint list.
  if (Array.isArray(value) && value.every((t) => t && typeof t === "object" && "effect" in t)) {
    return (value as Taint[]).map((t) => `${t.key}=${taintText(t)}`).join(",");
  }
  return JSON.stringify(value);
}

function changeView(row: ChangeRow): NodeChangeView {
  const key = row.item === "" ? null : row.field === "TAINTS" ? row.item.slice(0, row.item.indexOf(":")) : row.item;
  return {
    id: globalId("NodeChange", row.id),
    cluster: row.cluster,
    node: row.node,
    // A kind this version does not know (written by a newer one) cannot be served as another.
    kind: (KINDS.has(row.field) ? row.field : "LABELS") as NodeChangeKind,
    key,
    from: text(row.before),
    to: text(row.after),
    at: row.at,
    actor: row.actor,
  };
}

const COLUMNS = { id: true, cluster: true, node: true, field: true, item: true, before: true, after: true, at: true, actor: true } as const;

/** Reads node changes. A lost database connection becomes AppError UNAVAILABLE, with no SQL or connection detail. */
export class NodeChangeQueries {
  constructor(
    private readonly database: Database,
    private readonly logger?: Logger,
  ) {}

  /**
   * Query.nodeChanges: newest first, `first` (100 by default, at most 5000) after `after`.
   * @throws AppError BAD_USER_INPUT for a bad `first`, `after` or interval; UNAVAILABLE when the database cannot be reached.
   */
  readonly nodeChanges = historyConnection({
    list: "changes",
    time: "at",
    where: (f: NodeChangeFilter) => (f.kinds != null ? { field: { in: [...f.kinds] } } : {}),
    read: (page) => this.read(() => this.database.prisma.nodeChange.findMany({ ...page, select: COLUMNS })),
    count: (where) => this.read(() => this.database.prisma.nodeChange.count({ where })),
    view: changeView,
  });

  /**
   * The batch behind Node.changes: each node's newest `first` changes, in key order, one SQL
   * statement per distinct `first` (a LATERAL … LIMIT walking the per-node index).
   * @throws AppError BAD_USER_INPUT for a bad `first`; UNAVAILABLE when the database cannot be reached.
   */
  changesForNodes(keys: readonly NodeChangesKey[]): Promise<NodeChangeView[][]> {
    return batchByNode(
      keys,
      (k) => String(k.first),
      async ({ first }, pairs) => {
        const rows = await this.read(
          () =>
            this.database.prisma.$queryRaw<ChangeRow[]>`
          SELECT c.id, c.cluster, c.node, c.field, c.item, c.before, c.after, c.at, c.actor
          FROM unnest(${pairs.clusters}::text[], ${pairs.nodes}::text[]) AS k(cluster, node)
          CROSS JOIN LATERAL (
            SELECT n.id, n.cluster, n.node, n.field, n.item, n.before, n.after, n.at, n.actor
            FROM node_change n
            WHERE n.cluster = k.cluster AND n.node = k.node
            ORDER BY n.at DESC, n.id DESC
            LIMIT ${first}::int
          ) c
          ORDER BY c.at DESC, c.id DESC`,
        );
        return rows.map(changeView);
      },
    );
  }

  /** A connection failure becomes UNAVAILABLE; anything else reaches the formatter as INTERNAL_SERVER_ERROR (db/database-errors.ts). */
  private read<T>(run: () => Promise<T>): Promise<T> {
    return forCaller(run, "the history database cannot be reached", this.logger);
  }
}
