import type { CachedNode, Taint } from "../cluster/model.js";
import type { Database } from "../db/database.js";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { Prisma } from "../db/generated/client.js";
import { isContentRefusal } from "../db/database-errors.js";
import { storable } from "../db/storable-text.js";
import { EVICTION_TAINT_KEYS } from "../cluster/strip.js";
import type { HistoryNotice } from "../pubsub/pubsub.js";
import { diffNode, type MaintenanceRecord, type NodeChangeRecord, type NodeSnapshot, type Observation, type TransitionRecord } from "./history-diff.js";

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

/** This replica's history leadership of `cluster` was taken over: its writes are refused. */
export class LeadershipLostError extends Error {
  override name = "LeadershipLostError";
  constructor(
    readonly cluster: string,
    /** Who holds the leadership in the database now, if anyone. */
    readonly holder: string | undefined,
  ) {
    super(`history leadership of ${cluster} is held by ${holder ?? "nobody"} now: this replica may not write its history`);
  }
}

/** What a write is allowed by: the epoch this replica was granted for each cluster it leads. */
export type LeadershipFence = (cluster: string) => bigint | undefined;

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
  async apply(observations: NodeObservation[], { salvage = false, fence }: { salvage?: boolean; fence?: LeadershipFence } = {}): Promise<ApplyResult> {
    const result: ApplyResult = { transitions: 0, changes: 0, maintenance: 0, notices: [], refused: [] };
    const byCluster = new Map<string, NodeObservation[]>();
    for (const o of observations) {
      let list = byCluster.get(o.cluster);
      if (!list) byCluster.set(o.cluster, (list = []));
      list.push(o);
    }
    for (const [cluster, list] of byCluster) {
      const counts = await this.applyCluster(cluster, list, salvage, fence);
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

  /**
   * Takes `cluster`'s history leadership for `holder`, who has just taken its Lease: bumps the
   * epoch, so that whoever wrote before (a leader frozen past its Lease) is refused from now on.
   * @returns the epoch `holder`'s writes carry.
   */
  async claimLeadership(cluster: string, holder: string): Promise<bigint> {
    const [row] = await this.database.prisma.$queryRaw<{ epoch: bigint }[]>`
      INSERT INTO history_leadership (cluster, epoch, holder, updated_at) VALUES (${cluster}, 1, ${holder}, now())
      ON CONFLICT (cluster) DO UPDATE SET epoch = history_leadership.epoch + 1, holder = EXCLUDED.holder, updated_at = now()
      RETURNING epoch`;
    if (!row) throw new Error(`the history leadership of ${cluster} could not be claimed: the database returned no epoch`);
    return BigInt(row.epoch);
  }

  private applyCluster(cluster: string, observations: NodeObservation[], salvage: boolean, fence: LeadershipFence | undefined): Promise<ApplyResult> {
    return this.database.prisma.$transaction(
      async (tx) => {
        const refused: ApplyResult["refused"] = [];
        const inChunks = salvage ? rowByRow(tx, refused) : allInChunks;
        if (fence) await checkFence(tx, cluster, fence(cluster));
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${"node-inventory:history:" + cluster}))`;
        const names = [...new Set(observations.map((o) => o.name))];
        const rows = await tx.nodeState.findMany({ where: { cluster, name: { in: names } } });
        const state = new Map<string, NodeSnapshot>(rows.map((row) => [row.name, fromRow(row)]));
        const touched = new Set<string>();
        const transitions: TransitionRecord[] = [];
        const changes: NodeChangeRecord[] = [];
        const maintenance: MaintenanceRecord[] = [];
        for (const o of observations) {
          // Text from the cluster is made storable (NUL) before it is compared or written, so the
          // recorded state and the rows agree and the database never refuses them for it.
          const diff = storable(diffNode(cluster, o.name, state.get(o.name), o.node && storable(o.node), o));
          transitions.push(...diff.transitions);
          changes.push(...diff.changes);
          maintenance.push(...diff.maintenance);
          if (diff.next) {
            state.set(o.name, diff.next);
            touched.add(o.name);
          }
        }
        const writtenTransitions = await inChunks("condition_transition", transitions, (part) => insertTransitions(tx, part));
        const writtenChanges = await inChunks("node_change", changes, (part) => insertChanges(tx, part));
        const writtenEvents = await inChunks("maintenance_event", maintenance, (part) => insertMaintenance(tx, part));
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
          if (row.field === "SCHEDULABILITY") notice(row.node).unschedulable = row.unschedulable === true;
          if (row.field === "DELETED") notice(row.node).deleted = true;
          if (row.field === "TAINTS" && row.item !== null && COUNTDOWN_TAINT_ITEMS.has(row.item)) notice(row.node).evictionCountdown = true;
        }
        return { transitions: writtenTransitions.length, changes: writtenChanges.length, maintenance: writtenEvents.length, notices: [...notices.values()], refused };
      },
      { timeout: transactionTimeoutMs(observations.length), maxWait: 30_000 },
    );
  }
}

/**
 * The fence, checked in the write's own transaction: the leadership row stays locked until it
 * commits, so a successor's claim waits for this write or this write sees the new epoch.
 */
export async function checkFence(tx: Prisma.TransactionClient, cluster: string, epoch: bigint | undefined): Promise<void> {
  const [row] = await tx.$queryRaw<{ epoch: bigint; holder: string }[]>`SELECT epoch, holder FROM history_leadership WHERE cluster = ${cluster} FOR UPDATE`;
  if (epoch === undefined || !row || BigInt(row.epoch) !== epoch) throw new LeadershipLostError(cluster, row?.holder);
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
 * Rows per statement. A reconcile writes a row or more for every node of a cluster at once
 * (5,000 nodes are ~30,000 rows); PGlite runs each statement in this thread without a break, so
 * parts keep the event loop turning between them ({@link parts}) while each statement still
 * carries enough rows to be cheap per row.
 */
const ROWS_PER_STATEMENT = 1_000;

/**
 * The parts of `rows`, with a turn of the event loop before each but the first. Prisma's query
 * compiler and PGlite (WebAssembly in this thread) answer in microtasks only, so without it a
 * whole reconcile of 5,000 nodes held the loop: 73 s on a busy 2-core machine, during which no
 * HTTP request was answered (bench:inventory's status poll was reset) and no watch was read.
 */
async function* parts<T>(rows: readonly T[]): AsyncGenerator<T[]> {
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    if (i > 0) await yieldToEventLoop();
    yield rows.slice(i, i + ROWS_PER_STATEMENT);
  }
}

type Writer = <T, R>(table: string, rows: readonly T[], write: (part: T[]) => Promise<R[]>) => Promise<R[]>;

/** Writes `rows` part by part and returns what every part's statement returned. */
const allInChunks: Writer = async (_table, rows, write) => {
  const written = [];
  for await (const part of parts(rows)) written.push(...(await write(part)));
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


/*
 * The writes are SQL of our own: each part's rows travel as one JSON parameter that PostgreSQL
 * unpacks with jsonb_to_recordset. Prisma's createMany built a statement with a bind parameter
 * per column per row, and compiling those took most of a 5,000-node reconcile's CPU; one
 * parameter also keeps a part clear of PostgreSQL's 65,535-parameter limit. ON CONFLICT DO
 * NOTHING is createMany's skipDuplicates: the natural keys make a replay add nothing, and
 * RETURNING gives back only the rows this write added.
 */

function insertTransitions(tx: Prisma.TransactionClient, rows: TransitionRecord[]): Promise<{ id: bigint; node: string }[]> {
  return tx.$queryRaw`
    INSERT INTO condition_transition (cluster, node, type, "from", "to", reason, message, at, reconciled)
    SELECT cluster, node, type, "from", "to", reason, message, at, reconciled
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      AS r(cluster text, node text, type text, "from" text, "to" text, reason text, message text, at timestamptz, reconciled boolean)
    ON CONFLICT DO NOTHING
    RETURNING id, node`;
}

/** The taint items (key:effect) whose coming or going starts or ends an eviction countdown. */
const COUNTDOWN_TAINT_ITEMS = new Set(EVICTION_TAINT_KEYS.map((key) => `${key}:NoExecute`));

function insertChanges(tx: Prisma.TransactionClient, rows: NodeChangeRecord[]): Promise<{ node: string; field: string; item: string | null; unschedulable: boolean | null }[]> {
  // before/after go as JSON text, so a value that is JSON null is stored as JSON null (as Prisma.JsonNull did), not SQL NULL.
  const data = rows.map((c) => ({ ...c, before: JSON.stringify(c.before ?? null), after: JSON.stringify(c.after ?? null) }));
  return tx.$queryRaw`
    INSERT INTO node_change (cluster, node, field, item, before, after, at, key, reconciled, actor)
    SELECT cluster, node, field, item, before::jsonb, after::jsonb, at, key, reconciled, actor
    FROM jsonb_to_recordset(${JSON.stringify(data)}::jsonb)
      AS r(cluster text, node text, field text, item text, before text, after text, at timestamptz, key text, reconciled boolean, actor text)
    ON CONFLICT DO NOTHING
    RETURNING node, field, item, (after ->> 'unschedulable')::boolean AS unschedulable`;
}

function insertMaintenance(tx: Prisma.TransactionClient, rows: MaintenanceRecord[]): Promise<{ id: bigint; node: string }[]> {
  return tx.$queryRaw`
    INSERT INTO maintenance_event (cluster, node, kind, actor, reason, at, detail, dedupe_key)
    SELECT cluster, node, kind, actor, reason, at, detail, "dedupeKey"
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      AS r(cluster text, node text, kind text, actor text, reason text, at timestamptz, detail text, "dedupeKey" text)
    ON CONFLICT DO NOTHING
    RETURNING id, node`;
}

async function upsertPart(tx: Prisma.TransactionClient, cluster: string, states: (readonly [string, NodeSnapshot])[]): Promise<void> {
  const rows = states.map(([name, s]) => ({ name, ...s }));
  await tx.$executeRaw`
    INSERT INTO node_state (cluster, name, uid, conditions, unschedulable, kubelet_version, container_runtime, labels, taints, first_seen_at, deleted_at, updated_at, boot_id, change_note)
    SELECT ${cluster}, name, uid, conditions, unschedulable, "kubeletVersion", "containerRuntime", labels, taints, "firstSeenAt", "deletedAt", now(), "bootId", "changeNote"
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      AS r(name text, uid text, conditions jsonb, unschedulable boolean, "kubeletVersion" text, "containerRuntime" text, labels jsonb, taints jsonb,
           "firstSeenAt" timestamptz, "deletedAt" timestamptz, "bootId" text, "changeNote" text)
    ON CONFLICT (cluster, name) DO UPDATE SET
      uid = EXCLUDED.uid, conditions = EXCLUDED.conditions, unschedulable = EXCLUDED.unschedulable,
      kubelet_version = EXCLUDED.kubelet_version, container_runtime = EXCLUDED.container_runtime,
      labels = EXCLUDED.labels, taints = EXCLUDED.taints, first_seen_at = EXCLUDED.first_seen_at,
      deleted_at = EXCLUDED.deleted_at, updated_at = now(), boot_id = EXCLUDED.boot_id, change_note = EXCLUDED.change_note`;
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
