import type { Database } from "../db/database.js";
import { Prisma } from "../db/generated/client.js";
import { forCaller } from "../db/database-errors.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import type { MaintenanceEventKind } from "../history/history-model.js";
import { ACTIVE_STATUSES, type DrainOperation, type DrainPodState, type DrainStatus } from "./drain-operation.js";
import type { DrainOptions } from "./drain-plan.js";

type Row = {
  id: string;
  cluster: string;
  node: string;
  status: string;
  dryRun: boolean;
  requestedBy: string;
  reason: string | null;
  options: unknown;
  pods: unknown;
  warnings: unknown;
  message: string | null;
  startedAt: Date;
  finishedAt: Date | null;
};

/** One maintenance event a drain writes (the recorder writes cordons it observes itself). */
export interface DrainEventRecord {
  cluster: string;
  node: string;
  kind: MaintenanceEventKind;
  actor: string;
  reason: string | null;
  operationId: string;
  pod: string | null;
  detail: string | null;
  /** Natural identity: a retried write (or a resumed drain) records the event once. */
  dedupeKey: string;
}

/** An event of `operation`, by its requester unless `actor` says; `key` makes it unique within the drain (default: the kind). */
export function drainEvent(
  operation: Pick<DrainOperation, "id" | "cluster" | "node" | "requestedBy" | "reason">,
  kind: MaintenanceEventKind,
  fields: { actor?: string; pod?: string; detail?: string | null; key?: string } = {},
): DrainEventRecord {
  return {
    cluster: operation.cluster,
    node: operation.node,
    kind,
    actor: fields.actor ?? operation.requestedBy,
    reason: operation.reason,
    operationId: operation.id,
    pod: fields.pod ?? null,
    detail: fields.detail ?? null,
    dedupeKey: `drain:${operation.id}:${fields.key ?? kind}`,
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Drain operations in PostgreSQL: the one place every replica sees them. Writes by the
 * runner are conditional on the operation still being active and still its own, so a
 * cancel from another replica, or a takeover, is never overwritten.
 */
export class DrainStore {
  constructor(private readonly database: Database) {}

  /**
   * Creates the operation unless (for a real drain) the node already has an active one:
   * CONFLICT then. The check and the insert hold a per-node advisory lock, so two replicas
   * asked at the same moment cannot both start one.
   */
  create(operation: Omit<DrainOperation, "id" | "startedAt">, owner: string | null): Promise<DrainOperation> {
    return this.guarded(() =>
      this.database.prisma.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`node-inventory:drain:${operation.cluster}/${operation.node}`}))`;
        if (!operation.dryRun) {
          const running = await tx.drainOperation.findFirst({
            where: { cluster: operation.cluster, node: operation.node, dryRun: false, status: { in: [...ACTIVE_STATUSES] } },
            select: { id: true, requestedBy: true },
          });
          if (running) {
            throw new AppError(ErrorCode.CONFLICT, `node "${operation.node}" already has a drain running (${running.id}, requested by ${running.requestedBy})`, {
              operationId: running.id,
            });
          }
        }
        const row = await tx.drainOperation.create({
          data: {
            cluster: operation.cluster,
            node: operation.node,
            status: operation.status,
            dryRun: operation.dryRun,
            requestedBy: operation.requestedBy,
            reason: operation.reason,
            options: operation.options as unknown as Prisma.InputJsonValue,
            pods: operation.pods as unknown as Prisma.InputJsonValue,
            warnings: operation.warnings,
            message: operation.message,
            finishedAt: operation.finishedAt,
            owner,
            heartbeatAt: owner ? new Date() : null,
          },
        });
        return fromRow(row);
      }),
    );
  }

  /** The operation, or undefined; an id that cannot be one is BAD_USER_INPUT. */
  async get(id: string): Promise<DrainOperation | undefined> {
    if (!UUID.test(id)) throw new AppError(ErrorCode.BAD_USER_INPUT, `"${id}" is not a drain operation id (a UUID)`);
    const row = await this.guarded(() => this.database.prisma.drainOperation.findUnique({ where: { id } }));
    return row ? fromRow(row) : undefined;
  }

  /** The active real drain of each node asked for, by `cluster/node`. */
  async activeFor(nodes: readonly { cluster: string; node: string }[]): Promise<Map<string, DrainOperation>> {
    const rows = await this.guarded(() =>
      this.database.prisma.drainOperation.findMany({
        where: {
          dryRun: false,
          status: { in: [...ACTIVE_STATUSES] },
          OR: nodes.map(({ cluster, node }) => ({ cluster, node })),
        },
      }),
    );
    return new Map(rows.map((row) => [`${row.cluster}/${row.node}`, fromRow(row)]));
  }

  /**
   * Writes the runner's view of the operation, and its heartbeat. False when the operation
   * is no longer active or no longer `owner`'s: the runner must stop.
   */
  async save(operation: DrainOperation, owner: string): Promise<boolean> {
    const { count } = await this.database.prisma.drainOperation.updateMany({
      where: { id: operation.id, owner, status: { in: [...ACTIVE_STATUSES] } },
      data: {
        status: operation.status,
        pods: operation.pods as unknown as Prisma.InputJsonValue,
        warnings: operation.warnings,
        message: operation.message,
        finishedAt: operation.finishedAt,
        heartbeatAt: new Date(),
        ...(ACTIVE_STATUSES.includes(operation.status) ? {} : { owner: null }),
      },
    });
    return count === 1;
  }

  /**
   * Ends an active operation (FAILED by `owner`, or CANCELLED by anyone when `owner` is null)
   * and records its final event in the same transaction: the final state is never seen
   * without its event. Undefined (and nothing written) when it was not active, or not `owner`'s.
   */
  async end(
    id: string,
    owner: string | null,
    end: { status: "FAILED" | "CANCELLED"; message: string },
    event: (operation: DrainOperation) => DrainEventRecord,
  ): Promise<{ operation: DrainOperation; eventIds: string[] } | undefined> {
    return this.guarded(() =>
      this.database.prisma.$transaction(async (tx) => {
        const rows = await tx.drainOperation.updateManyAndReturn({
          where: { id, status: { in: [...ACTIVE_STATUSES] }, ...(owner ? { owner } : {}) },
          data: { ...end, finishedAt: new Date(), owner: null },
        });
        if (!rows[0]) return undefined;
        const operation = fromRow(rows[0]);
        const written = await tx.maintenanceEvent.createManyAndReturn({ data: [{ ...event(operation), at: new Date() }], skipDuplicates: true, select: { id: true } });
        return { operation, eventIds: written.map((row) => String(row.id)) };
      }),
    );
  }

  /**
   * Takes over active operations nobody is running: released by a replica that stopped, or
   * whose runner's heartbeat is older than `staleMs` (it crashed). SKIP LOCKED: two replicas
   * looking at once take different ones.
   */
  async claimOrphans(owner: string, staleMs: number): Promise<DrainOperation[]> {
    const staleBefore = new Date(Date.now() - staleMs);
    const rows = await this.database.prisma.$queryRaw<{ id: string }[]>`
      UPDATE drain_operation SET owner = ${owner}, heartbeat_at = now()
      WHERE id IN (
        SELECT id FROM drain_operation
        WHERE status IN ('PENDING', 'RUNNING') AND NOT dry_run
          AND (owner IS NULL OR heartbeat_at IS NULL OR heartbeat_at < ${staleBefore})
        FOR UPDATE SKIP LOCKED)
      RETURNING id::text AS id`;
    if (rows.length === 0) return [];
    const claimed = await this.database.prisma.drainOperation.findMany({ where: { id: { in: rows.map((row) => row.id) } } });
    return claimed.map(fromRow);
  }

  /** Lets other replicas take these over at once (this one is stopping). */
  async release(ids: readonly string[], owner: string): Promise<void> {
    if (ids.length === 0) return;
    await this.database.prisma.drainOperation.updateMany({ where: { id: { in: [...ids] }, owner }, data: { owner: null, heartbeatAt: null } });
  }

  /** Writes events once each (by dedupe key); returns the ids of the rows written now. */
  async recordEvents(events: readonly DrainEventRecord[]): Promise<string[]> {
    if (events.length === 0) return [];
    const rows = await this.database.prisma.maintenanceEvent.createManyAndReturn({
      data: events.map((event) => ({ ...event, at: new Date() })),
      skipDuplicates: true,
      select: { id: true },
    });
    return rows.map((row) => String(row.id));
  }

  /** The operations of one page of Query.drainOperations, as history-connection.ts reads a page. */
  async page(page: { where: Prisma.DrainOperationWhereInput; orderBy: Prisma.DrainOperationOrderByWithRelationInput[]; take: number }): Promise<DrainOperation[]> {
    const rows = await this.guarded(() => this.database.prisma.drainOperation.findMany(page));
    return rows.map(fromRow);
  }

  /** How many operations `where` selects. */
  count(where: Prisma.DrainOperationWhereInput): Promise<number> {
    return this.guarded(() => this.database.prisma.drainOperation.count({ where }));
  }

  /** A caller's request that loses the database gets UNAVAILABLE, never the driver's words; any other failure stays itself (INTERNAL_SERVER_ERROR, logged). */
  private guarded<T>(run: () => Promise<T>): Promise<T> {
    return forCaller(run, "the database cannot be reached");
  }
}

function fromRow(row: Row): DrainOperation {
  return {
    id: row.id,
    cluster: row.cluster,
    node: row.node,
    status: row.status as DrainStatus,
    dryRun: row.dryRun,
    requestedBy: row.requestedBy,
    reason: row.reason,
    options: row.options as DrainOptions,
    pods: row.pods as DrainPodState[],
    warnings: row.warnings as string[],
    message: row.message,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
  };
}
