import type { Database } from "../../src/db/database.js";
import { migrate } from "../../src/db/migrator.js";
import { createLogger } from "../../src/log/logger.js";
import type { Backend, TestDatabase } from "../support/databases.js";

const logger = createLogger("silent");

/** A fresh, migrated database on `backend`; `dispose` closes and drops it (idempotent). */
export async function migratedDatabase(backend: Backend): Promise<{ db: Database; fresh: TestDatabase; dispose(): Promise<void> }> {
  const fresh = await backend.create();
  const db = await fresh.open();
  await db.withConnection((c) => migrate(c, logger));
  let disposed = false;
  return {
    db,
    fresh,
    async dispose() {
      if (disposed) return;
      disposed = true;
      await db.close();
      await fresh.drop();
    },
  };
}

/** Calls of each Prisma entry point made through a {@link countingDatabase}. */
export interface StatementCounts {
  /** `$queryRaw` statements. */
  raw: number;
  /** Model delegate calls (`conditionTransition.findMany` …), by "model.method". */
  model: Record<string, number>;
  /** Everything: each call is one SQL statement. */
  total(): number;
  reset(): void;
}

const MODELS = new Set(["conditionTransition", "maintenanceEvent"]);

/**
 * `db` with its Prisma client wrapped so that every raw query and every history model call is
 * counted. Prisma's `$on("query")` needs a log option that driver adapters do not honour, so
 * counting happens at the calls the code under test makes.
 */
export function countingDatabase(db: Database): { database: Database; counts: StatementCounts } {
  const counts: StatementCounts = {
    raw: 0,
    model: {},
    total() {
      return this.raw + Object.values(this.model).reduce((a, b) => a + b, 0);
    },
    reset() {
      this.raw = 0;
      this.model = {};
    },
  };
  const prisma = new Proxy(db.prisma, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (property === "$queryRaw") {
        return (...args: unknown[]) => {
          counts.raw++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      if (typeof property === "string" && MODELS.has(property)) {
        const delegate = value as Record<string, unknown>;
        return new Proxy(delegate, {
          get(d, method) {
            const fn = Reflect.get(d, method, d) as unknown;
            if (typeof fn !== "function" || typeof method !== "string") return fn;
            return (...args: unknown[]) => {
              const name = `${property}.${method}`;
              counts.model[name] = (counts.model[name] ?? 0) + 1;
              return (fn as (...a: unknown[]) => unknown).apply(d, args);
            };
          },
        });
      }
      return value;
    },
  });
  return { database: { ...db, prisma }, counts };
}

/** 2026-01-01T00:00:00Z plus `minutes`. */
export function at(minutes: number): Date {
  return new Date(Date.UTC(2026, 0, 1) + minutes * 60_000);
}

/**
 * Known condition transitions, inserted in this order (so ids ascend in it). `message` names
 * each row so assertions can say which rows came back. t3 and t4 share their `at`: the later
 * id comes first.
 */
export const TRANSITIONS = [
  { cluster: "prod", node: "n1", type: "Ready", from: null, to: "True", reason: "KubeletReady", message: "t1", at: at(0) },
  { cluster: "prod", node: "n1", type: "Ready", from: "True", to: "False", reason: "KubeletNotReady", message: "t2", at: at(10) },
  { cluster: "prod", node: "n2", type: "Ready", from: null, to: "True", reason: "KubeletReady", message: "t3", at: at(20) },
  { cluster: "prod", node: "n2", type: "MemoryPressure", from: null, to: "False", reason: null, message: "t4", at: at(20) },
  { cluster: "dev", node: "n1", type: "Ready", from: null, to: "Unknown", reason: "NodeStatusUnknown", message: "t5", at: at(30) },
  // Found by a reconcile five minutes after it happened (the service was down meanwhile).
  { cluster: "prod", node: "n1", type: "Ready", from: "False", to: "True", reason: "KubeletReady", message: "t6", at: at(40), reconciled: true, recordedAt: at(45) },
  { cluster: "prod", node: "n1", type: "DiskPressure", from: null, to: "False", reason: null, message: "t7", at: at(50) },
  { cluster: "prod", node: "n2", type: "Ready", from: "True", to: "Unknown", reason: "NodeStatusUnknown", message: "t8", at: at(60) },
];

/** Known maintenance events, inserted in this order; `detail` names each row. e2 and e3 share their `at`. */
export const EVENTS = [
  { cluster: "prod", node: "n1", kind: "CORDONED", actor: "alice", reason: "kernel patch", at: at(0), operationId: null, pod: null, detail: "e1" },
  { cluster: "prod", node: "n1", kind: "DRAIN_STARTED", actor: "alice", reason: "kernel patch", at: at(5), operationId: "6f1c1d4e-2a3b-4c5d-8e9f-0a1b2c3d4e5f", pod: null, detail: "e2" },
  { cluster: "prod", node: "n1", kind: "POD_EVICTED", actor: "alice", reason: null, at: at(5), operationId: "6f1c1d4e-2a3b-4c5d-8e9f-0a1b2c3d4e5f", pod: "default/web-1", detail: "e3" },
  { cluster: "prod", node: "n2", kind: "CORDONED", actor: "kubectl (outside node-inventory)", reason: null, at: at(7), operationId: null, pod: null, detail: "e4" },
  { cluster: "dev", node: "n1", kind: "UNCORDONED", actor: "bob", reason: null, at: at(9), operationId: null, pod: null, detail: "e5" },
  { cluster: "prod", node: "n1", kind: "DRAIN_SUCCEEDED", actor: "alice", reason: null, at: at(12), operationId: "6f1c1d4e-2a3b-4c5d-8e9f-0a1b2c3d4e5f", pod: null, detail: "e6" },
];

/** Inserts {@link TRANSITIONS} and {@link EVENTS}. */
export async function seed(db: Database): Promise<void> {
  // One row per statement: a multi-row INSERT does not promise that ids follow the VALUES order.
  for (const row of TRANSITIONS) await db.prisma.conditionTransition.create({ data: { recordedAt: row.at, ...row } });
  for (const [i, row] of EVENTS.entries()) await db.prisma.maintenanceEvent.create({ data: { ...row, dedupeKey: `seed-${i}` } });
}
