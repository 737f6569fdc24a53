// The recorder's write path at full speed: HistoryStore.apply on PostgreSQL with batches of
// observations of a 5,000-node cluster in which every observation flips a condition, i.e. the
// ceiling of transitions per second, independent of how fast a cluster can change.
// Usage: npm run bench:history-store [-- --nodes 5000 --rounds 6 --batch 500]
import { parseArgs } from "node:util";
import type { CachedNode } from "../src/cluster/model.js";
import { openDatabase } from "../src/db/database.js";
import { migrate } from "../src/db/migrator.js";
import { HistoryStore, type NodeObservation } from "../src/history/history-store.js";
import { createLogger } from "../src/log/logger.js";
import { freshPostgres } from "./support.js";

const { values } = parseArgs({ options: { nodes: { type: "string", default: "5000" }, rounds: { type: "string", default: "6" }, batch: { type: "string", default: "500" } } });
const nodes = Number(values.nodes);
const batch = Number(values.batch);
const fresh = await freshPostgres();
const database = await openDatabase({ kind: "postgres", url: fresh.url });
await database.withConnection((c) => migrate(c, createLogger("silent")));
const store = new HistoryStore(database);

const node = (i: number, ready: string, at: Date): CachedNode => ({
  cluster: "bench",
  name: `node-${i}`,
  uid: `uid-${i}`,
  resourceVersion: String(at.getTime()),
  creationTimestamp: "2025-01-01T00:00:00Z",
  labels: { "kubernetes.io/hostname": `node-${i}` },
  annotations: {},
  taints: [],
  unschedulable: false,
  conditions: [
    { type: "Ready", status: ready, lastTransitionTime: at.toISOString() },
    { type: "MemoryPressure", status: "False" },
  ],
  addresses: [],
  capacity: {},
  allocatable: {},
  nodeInfo: { kubeletVersion: "v1.31.2", containerRuntimeVersion: "containerd://1.7.24", osImage: "", kernelVersion: "", operatingSystem: "linux", architecture: "amd64" },
});

try {
  const base = Date.now();
  let t0 = performance.now();
  const initial: NodeObservation[] = [];
  for (let i = 0; i < nodes; i++) initial.push({ cluster: "bench", name: `node-${i}`, node: node(i, "True", new Date(base)), at: new Date(base), key: "initial", reconciled: true });
  for (let i = 0; i < initial.length; i += batch) await store.apply(initial.slice(i, i + batch));
  console.log(`first record of ${nodes} nodes: ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  let transitions = 0;
  t0 = performance.now();
  for (let round = 1; round <= Number(values.rounds); round++) {
    const at = new Date(base + round * 1000);
    const ready = round % 2 ? "False" : "True";
    for (let i = 0; i < nodes; i += batch) {
      const observations: NodeObservation[] = [];
      for (let j = i; j < Math.min(nodes, i + batch); j++) observations.push({ cluster: "bench", name: `node-${j}`, node: node(j, ready, at), at, key: String(at.getTime()), reconciled: false });
      transitions += (await store.apply(observations)).transitions;
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  console.log(`${transitions} transitions in ${seconds.toFixed(1)} s: ${(transitions / seconds).toFixed(0)} transitions/s (batches of ${batch})`);
  const replay = performance.now();
  const again = await store.apply(
    Array.from({ length: Math.min(batch, nodes) }, (_, j) => ({
      cluster: "bench",
      name: `node-${j}`,
      node: node(j, Number(values.rounds) % 2 ? "False" : "True", new Date(base + Number(values.rounds) * 1000)),
      at: new Date(),
      key: "replay",
      reconciled: false,
    })),
  );
  console.log(`a replayed batch of ${Math.min(batch, nodes)} writes ${again.transitions} rows (${(performance.now() - replay).toFixed(0)} ms)`);
} finally {
  await database.close();
  await fresh.drop();
}
