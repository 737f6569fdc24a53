// The compiled NodeFilter over 5,000 cached nodes: ns per node for a full filter (label
// selector with a set and a numeric requirement, roles, ready, schedulable, a condition),
// beside a floor measured in the same run: a loop that reads one label of each node.
// Usage: npm run bench:node-filter [-- --nodes 5000 --rounds 200]
import { parseArgs } from "node:util";
import type { CachedNode } from "../src/cluster/model.js";
import { compileNodeFilter } from "../src/inventory/node-filter.js";

const { values } = parseArgs({ options: { nodes: { type: "string", default: "5000" }, rounds: { type: "string", default: "200" } } });
const count = Number(values.nodes);
const rounds = Number(values.rounds);

const nodes: CachedNode[] = Array.from({ length: count }, (_, i) => ({
  cluster: "bench",
  name: `n${i}`,
  uid: `n${i}`,
  resourceVersion: "1",
  creationTimestamp: "2026-01-01T00:00:00Z",
  labels: { "node-role.kubernetes.io/worker": "", "topology.kubernetes.io/zone": `z${i % 3}`, gen: String(i % 10) },
  annotations: {},
  taints: [],
  unschedulable: i % 11 === 0,
  conditions: [
    { type: "MemoryPressure", status: "False" },
    { type: "DiskPressure", status: "False" },
    { type: "PIDPressure", status: "False" },
    { type: "Ready", status: i % 7 ? "True" : "False" },
  ],
  addresses: [],
  nodeInfo: { kubeletVersion: "", containerRuntimeVersion: "", osImage: "", kernelVersion: "", operatingSystem: "", architecture: "" },
  capacity: {},
  allocatable: {},
}));

const matches = compileNodeFilter({
  labelSelector: "topology.kubernetes.io/zone in (z0,z1),gen>2",
  roles: ["worker"],
  ready: true,
  schedulable: true,
  condition: { type: "DiskPressure", status: "FALSE" },
});

/** ns per node of `visit` over every node, `rounds` times (after one warm-up round). */
function nsPerNode(visit: (node: CachedNode) => boolean): { ns: number; hits: number } {
  let hits = 0;
  for (const n of nodes) if (visit(n)) hits++;
  hits = 0;
  const started = process.hrtime.bigint();
  for (let round = 0; round < rounds; round++) for (const n of nodes) if (visit(n)) hits++;
  return { ns: Number(process.hrtime.bigint() - started) / (rounds * nodes.length), hits: hits / rounds };
}

const floor = nsPerNode((n) => n.labels.gen === "3");
const filter = nsPerNode(matches);
console.log(`${count} nodes × ${rounds} rounds`);
console.log(`floor (one label read): ${floor.ns.toFixed(1)} ns/node`);
console.log(`full NodeFilter:        ${filter.ns.toFixed(1)} ns/node, ${filter.hits} of ${count} match; ${(filter.ns / floor.ns).toFixed(1)}× the floor`);
console.log(`one query's filter over ${count} nodes: ${((filter.ns * count) / 1e6).toFixed(2)} ms`);
