import type { CachedNode, Taint } from "../cluster/model.js";
import type { Database } from "../db/database.js";
import { Prisma } from "../db/generated/client.js";
import { isContentRefusal } from "../db/database-errors.js";
import { storable } from "../db/storable-text.js";
import type { HistoryNotice } from "../pubsub/pubsub.js";
import { diffNode, type NodeSnapshot, type Observation } from "./history-diff.js";

/** One observation to record: the node as seen (undefined: deleted), and how it was seen. */
export interface NodeObservation extends Observation {
  cluster: string;
  name: string;
  node: CachedNode | undefined;
}

export interface ApplyResult {
  transitions: number;
  changes: number;
  maintenance: number;
  /** Per node that gained rows, what subscribers need to hear of it (written, committed). */
  notices: HistoryNotice[];
  /** Rows a salvaging write left out because the database refused them for their content, with its error. */
  refused: { table: string; error: unknown }[];
}

/**
 * The write side of history. Each batch is one transaction that holds a per-cluster advisory
 * lock, reads the recorded state of the nodes it touches, diffs each observation in order
 * against it, and writes rows whose natural keys make a replay a no-op. Two replicas (or a
 * leader and its successor) writing the same observations therefore add each row once.
 */
export class HistoryStore {
  constructor(private readonly database: Database) {}

  /**
   * Records `observations` in one transaction per cluster. With `salvage` (for an observation
   * the database refused as a whole), each row goes in under a savepoint of its own and a row
   * refused for its content (SQLSTATE class 22 or 23) is left out and reported in `refused`,
   * so the rest of what was seen (its transitions, the node's state) is still recorded.
   */
  async apply(observations: NodeObservation[], { salvage = false } = {}): Promise<ApplyResult> {
    const result: ApplyResult = { transitions: 0, changes: 0, maintenance: 0, notices: [], refused: [] };
    const byCluster = new Map<string, NodeObservation[]>();
    for (const o of observations) {
      let list = byCluster.get(o.cluster);
      if (!list) byCluster.set(o.cluster, (list = []));
      list.push(o);
    }
    for (const [cluster, list] of byCluster) {
      const counts = await this.applyCluster(cluster, list, salvage);
      result.transitions += counts.transitions;
      result.changes += counts.changes;
      result.maintenance += counts.maintenance;
      result.notices.push(...counts.notices);
      result.refused.push(...counts.refused);
    }
    return result;
  }

  /** Names of the nodes recorded as present in `cluster`: a reconcile's candidates for deletion. */
  async presentNodes(cluster: string): Promise<string[]> {
    const rows = await this.database.prisma.nodeState.findMany({ where: { cluster, deletedAt: null }, select: { name: true } });
    return rows.map((row) => row.name);
  }

  private applyCluster(cluster: string, observations: NodeObservation[], salvage: boolean): Promise<ApplyResult> {
    return this.database.prisma.$transaction(
      async (tx) => {
        const refused: ApplyResult["refused"] = [];
        const inChunks = salvage ? rowByRow(tx, refused) : allInChunks;
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${"node-inventory:history:" + cluster}))`;
        const names = [...new Set(observations.map((o) => o.name))];
        const rows = await tx.nodeState.findMany({ where: { cluster, name: { in: names } } });
        const state = new Map<string, NodeSnapshot>(rows.map((row) => [row.name, fromRow(row)]));
        const touched = new Set<string>();
        const transitions: Prisma.ConditionTransitionCreateManyInput[] = [];
        const changes: Prisma.NodeChangeCreateManyInput[] = [];
        const maintenance: Prisma.MaintenanceEventCreateManyInput[] = [];
        for (const o of observations) {
          // Text from the cluster is made storable (NUL) before it is compared or written, so the
          // recorded state and the rows agree and the database never refuses them for it.
          const diff = storable(diffNode(cluster, o.name, state.get(o.name), o.node && storable(o.node), o));
          transitions.push(...diff.transitions);
          for (const c of diff.changes) changes.push({ ...c, before: json(c.before), after: json(c.after) });
          maintenance.push(...diff.maintenance);
          if (diff.next) {
            state.set(o.name, diff.next);
            touched.add(o.name);
          }
        }
        const select = { id: true, node: true } as const;
        const writtenTransitions = await inChunks("condition_transition", transitions, (data) => tx.conditionTransition.createManyAndReturn({ data, skipDuplicates: true, select }));
        const writtenChanges = await inChunks("node_change", changes, (data) => tx.nodeChange.createManyAndReturn({ data, skipDuplicates: true, select: { node: true, field: true, after: true } }));
        const writtenEvents = await inChunks("maintenance_event", maintenance, (data) => tx.maintenanceEvent.createManyAndReturn({ data, skipDuplicates: true, select }));
        await inChunks("node_state", [...touched].map((name) => [name, state.get(name)!] as const), async (part) => (await upsertPart(tx, cluster, part), []));

        const at = new Date().toISOString();
        const notices = new Map<string, HistoryNotice>();
        const notice = (node: string) => {
          let n = notices.get(node);
          if (!n) notices.set(node, (n = { cluster, node, transitions: [], maintenance: [], at }));
          return n;
        };
        for (const row of writtenTransitions) notice(row.node).transitions.push(String(row.id));
        for (const row of writtenEvents) notice(row.node).maintenance.push(String(row.id));
        for (const row of writtenChanges) {
          if (row.field === "SCHEDULABILITY") notice(row.node).unschedulable = (row.after as { unschedulable: boolean }).unschedulable;
          if (row.field === "DELETED") notice(row.node).deleted = true;
        }
        return { transitions: writtenTransitions.length, changes: writtenChanges.length, maintenance: writtenEvents.length, notices: [...notices.values()], refused };
      },
      { timeout: transactionTimeoutMs(observations.length), maxWait: 30_000 },
    );
  }
}

/**
 * How long one cluster's batch may hold its transaction. A reconcile writes every node of a
 * cluster at once (5,000 nodes are ~15,000 rows), which on a busy database took over Prisma's
 * 30 s default; the bound still ends a transaction that hangs, and grows with the batch.
 */
function transactionTimeoutMs(observations: number): number {
  return 30_000 + 25 * observations;
}

/**
 * Rows per statement. A reconcile writes a row or more for every node of a cluster at once:
 * past about 3,000 rows Prisma splits one createMany by its bind-parameter limit and sends the
 * parts concurrently on the transaction's connection (pg 8 queues them with a deprecation
 * warning; pg 9 would refuse), and one node_state upsert of ~5,500 nodes would pass
 * PostgreSQL's 65,535 parameters. So rows go in parts of this size, one after the other.
 */
const ROWS_PER_STATEMENT = 1_000;

function* parts<T>(rows: readonly T[]): Generator<T[]> {
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) yield rows.slice(i, i + ROWS_PER_STATEMENT);
}

type Writer = <T, R>(table: string, rows: readonly T[], write: (part: T[]) => Promise<R[]>) => Promise<R[]>;

/** Writes `rows` part by part and returns what every part's statement returned. */
const allInChunks: Writer = async (_table, rows, write) => {
  const written = [];
  for (const part of parts(rows)) written.push(...(await write(part)));
  return written;
};

/** Writes `rows` one by one, each under a savepoint; a row refused for its content is rolled back to it and reported in `refused`. */
function rowByRow(tx: Prisma.TransactionClient, refused: ApplyResult["refused"]): Writer {
  return async (table, rows, write) => {
    const written = [];
    for (const row of rows) {
      await tx.$executeRawUnsafe("SAVEPOINT history_row");
      try {
        written.push(...(await write([row])));
        await tx.$executeRawUnsafe("RELEASE SAVEPOINT history_row");
      } catch (error) {
        if (!isContentRefusal(error)) throw error;
        await tx.$executeRawUnsafe("ROLLBACK TO SAVEPOINT history_row");
        refused.push({ table, error });
      }
    }
    return written;
  };
}


async function upsertPart(tx: Prisma.TransactionClient, cluster: string, states: (readonly [string, NodeSnapshot])[]): Promise<void> {
  const rows = states.map(
    ([name, s]) =>
      Prisma.sql`(${cluster}, ${name}, ${s.uid}, ${JSON.stringify(s.conditions)}::jsonb, ${s.unschedulable}, ${s.kubeletVersion},
        ${s.containerRuntime}, ${JSON.stringify(s.labels)}::jsonb, ${JSON.stringify(s.taints)}::jsonb, ${s.firstSeenAt}, ${s.deletedAt}, now(),
        ${s.bootId}, ${s.changeNote})`,
  );
  await tx.$executeRaw`
    INSERT INTO node_state (cluster, name, uid, conditions, unschedulable, kubelet_version, container_runtime, labels, taints, first_seen_at, deleted_at, updated_at, boot_id, change_note)
    VALUES ${Prisma.join(rows)}
    ON CONFLICT (cluster, name) DO UPDATE SET
      uid = EXCLUDED.uid, conditions = EXCLUDED.conditions, unschedulable = EXCLUDED.unschedulable,
      kubelet_version = EXCLUDED.kubelet_version, container_runtime = EXCLUDED.container_runtime,
      labels = EXCLUDED.labels, taints = EXCLUDED.taints, first_seen_at = EXCLUDED.first_seen_at,
      deleted_at = EXCLUDED.deleted_at, updated_at = now(), boot_id = EXCLUDED.boot_id, change_note = EXCLUDED.change_note`;
}

function json(value: unknown): Prisma.InputJsonValue | typeof Prisma.JsonNull {
  return value === null || value === undefined ? Prisma.JsonNull : (value as Prisma.InputJsonValue);
}

function fromRow(row: {
  uid: string;
  conditions: unknown;
  unschedulable: boolean;
  kubeletVersion: string;
  containerRuntime: string;
  labels: unknown;
  taints: unknown;
  bootId: string;
  changeNote: string | null;
  firstSeenAt: Date;
  deletedAt: Date | null;
}): NodeSnapshot {
  return {
    uid: row.uid,
    conditions: row.conditions as Record<string, string>,
    unschedulable: row.unschedulable,
    kubeletVersion: row.kubeletVersion,
    containerRuntime: row.containerRuntime,
    labels: row.labels as Record<string, string>,
    taints: row.taints as Taint[],
    bootId: row.bootId,
    changeNote: row.changeNote,
    firstSeenAt: row.firstSeenAt,
    deletedAt: row.deletedAt,
  };
}
