// The node events write path on PostgreSQL: NodeEventsStore.upsert of the Events of a
// 5,000-node cluster (first seen, then every count bumped, then replayed), beside a floor
// measured in the same run: the same INSERT into a table without the unique key, which is
// what writing an event costs without the one-row-per-Event guarantee.
// Usage: node dist/bench/node-events.js [-- --events 20000 --batch 500 --rounds 3]
import { parseArgs } from "node:util";
import type { CachedNodeEvent } from "../src/cluster/node-event.js";
import { openDatabase } from "../src/db/database.js";
import { Prisma } from "../src/db/generated/client.js";
import { migrate } from "../src/db/migrator.js";
import { NodeEventsStore, rowOf, type NodeEventRow } from "../src/history/node-events-store.js";
import { createLogger } from "../src/log/logger.js";
import { freshPostgres } from "./support.js";

const { values } = parseArgs({ options: { events: { type: "string", default: "20000" }, batch: { type: "string", default: "500" }, rounds: { type: "string", default: "3" } } });
const count = Number(values.events);
const batch = Number(values.batch);
const fresh = await freshPostgres();
const database = await openDatabase({ kind: "postgres", url: fresh.url });
await database.withConnection((c) => migrate(c, createLogger("silent")));
const store = new NodeEventsStore(database);

const base = Date.now() - 3_600_000;
const event = (i: number, n: number): CachedNodeEvent => ({
  cluster: "bench",
  id: `uid-${i}`,
  node: `node-${i % 5000}`,
  key: `default/node-${i % 5000}.${i}`,
  type: i % 10 ? "Normal" : "Warning",
  reason: ["NodeReady", "NodeNotReady", "NodeHasDiskPressure", "Rebooted"][i % 4]!,
  message: `Node node-${i % 5000} status is now: NodeReady (${n})`,
  count: n,
  firstSeen: new Date(base).toISOString(),
  lastSeen: new Date(base + n * 1000).toISOString(),
  source: "kubelet",
});
const rows = (n: number): NodeEventRow[] => Array.from({ length: count }, (_, i) => rowOf(event(i, n), new Date()));

async function timed(what: string, list: NodeEventRow[], write: (part: NodeEventRow[]) => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < list.length; i += batch) await write(list.slice(i, i + batch));
  const seconds = (performance.now() - t0) / 1000;
  console.log(`${what}: ${list.length} events in ${seconds.toFixed(2)} s, ${(list.length / seconds).toFixed(0)}/s`);
  return seconds;
}

try {
  // The floor: the same INSERT statement into a copy of the table without its unique key and
  // without ON CONFLICT, so it measures only what the guarantee adds.
  await database.prisma.$executeRawUnsafe(`CREATE TABLE bench_floor (LIKE node_event INCLUDING DEFAULTS)`);
  const floor = await timed("floor: plain INSERT, no unique key", rows(1), (part) => {
    const values = part.map(
      (r) => Prisma.sql`(${r.cluster}, ${r.uid}, ${r.node}, ${r.objectKey}, ${r.type}, ${r.reason}, ${r.message}, ${r.count}, ${r.firstSeen}::timestamptz, ${r.lastSeen}::timestamptz, ${r.source})`,
    );
    return database.prisma.$executeRaw`INSERT INTO bench_floor (cluster, uid, node, object_key, type, reason, message, count, first_seen, last_seen, source) VALUES ${Prisma.join(values)}`;
  });
  const first = await timed("first seen (upsert, all new)", rows(1), (part) => store.upsert(part));
  let bumped = 0;
  for (let round = 2; round <= Number(values.rounds) + 1; round++) bumped += await timed(`count bumped to ${round} (upsert, all known)`, rows(round), (part) => store.upsert(part));
  let replayed = 0;
  const replay = await timed("replayed (upsert, nothing newer)", rows(Number(values.rounds) + 1), async (part) => (replayed += await store.upsert(part)));
  const total = Number(await database.prisma.nodeEvent.count({ where: { cluster: "bench" } }));
  console.log(`rows for ${count} events after ${Number(values.rounds) + 2} writes each: ${total}; rows a replay changed: ${replayed}`);
  console.log(`ratio to the floor: first ${(first / floor).toFixed(2)}x, bumps ${(bumped / Number(values.rounds) / floor).toFixed(2)}x, replay ${(replay / floor).toFixed(2)}x`);
} finally {
  await database.close();
  await fresh.drop();
}
