// node-inventory's drain against `kubectl drain`, in one simulator run: two equally loaded
// nodes (filled to 110 pods each with a Deployment of small pods, scheduled onto them while
// every other worker is cordoned), one drained by kubectl, the other through the drainNode
// mutation of a node-inventory service (its own process, embedded PGlite), both with
// --ignore-daemonsets --delete-emptydir-data --force. Reports wall time from the request to
// the node being drained, evictions sent (429s included), and pods removed.
// Usage: npm run bench:drain [-- --pods 110 --clock-speed 10]
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs, promisify } from "node:util";
import { startSimulator } from "../src/sim/index.js";
import { spawnUntil, stop } from "./support.js";

const run = promisify(execFile);
const { values } = parseArgs({ options: { pods: { type: "string", default: "110" }, "clock-speed": { type: "string", default: "10" }, nodes: { type: "string", default: "12" } } });
const podsPerNode = Number(values.pods);

// Seeded, so both tools meet the same workloads, budgets included, run after run.
const sim = await startSimulator({ port: 0, nodes: Number(values.nodes), seed: 42, churn: 0, clockSpeed: Number(values["clock-speed"]) });
const dir = mkdtempSync(join(tmpdir(), "ni-bench-drain-"));
const kubeconfig = join(dir, "kubeconfig");
writeFileSync(kubeconfig, sim.kubeconfig());
const service = await spawnUntil(["serve", "--port", "0", "--data-dir", "memory", "--kubeconfig", kubeconfig, "--log-level", "info"], /"url":"([^"]+)","graphql"/);
const url = service.match[1]!;

const gql = async (query: string, variables: Record<string, unknown> = {}) =>
  (await (await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query, variables }) })).json()) as any;
const evictions = () => sim.stats()["create pods/eviction"] ?? 0;
const removable = (node: string) =>
  (sim.cluster.podsOnNode(node) as any[]).filter((p) => p.metadata.ownerReferences?.[0]?.kind !== "DaemonSet" && !p.metadata.annotations?.["kubernetes.io/config.mirror"]).length;

try {
  // Two workers, filled to `pods` each: the scheduler places a Deployment of small pods on
  // them while every other worker is cordoned; then the others take pods again.
  const workers = sim.cluster.nodeNames().filter((n) => !n.startsWith("control-plane"));
  const cpuOf = (n: string) => (sim.cluster.get("nodes", n) as any).status.allocatable.cpu as string;
  // Two of the same size, so both tools face equal nodes.
  const sized = [...workers].sort((x, y) => parseInt(cpuOf(y)) - parseInt(cpuOf(x)));
  const pairAt = sized.findIndex((n, i) => i + 1 < sized.length && cpuOf(n) === cpuOf(sized[i + 1]!));
  const [na, nb] = [sized[pairAt]!, sized[pairAt + 1]!];
  const kubectlArgs = ["--kubeconfig", kubeconfig];
  const others = workers.filter((n) => n !== na && n !== nb);
  for (const n of others) await run("kubectl", [...kubectlArgs, "cordon", n]);
  const missing = 2 * podsPerNode - sim.cluster.podsOnNode(na).length - sim.cluster.podsOnNode(nb).length;
  writeFileSync(
    join(dir, "filler.json"),
    JSON.stringify({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "filler", namespace: "default" },
      spec: {
        replicas: missing,
        selector: { matchLabels: { app: "filler" } },
        template: { metadata: { labels: { app: "filler" } }, spec: { containers: [{ name: "app", image: "registry.example/filler:1", resources: { requests: { cpu: "5m", memory: "16Mi" } } }] } },
      },
    }),
  );
  // The simulator serves no OpenAPI document, so kubectl cannot validate client-side.
  await run("kubectl", [...kubectlArgs, "create", "--validate=false", "-f", join(dir, "filler.json")]);
  while ((sim.cluster.list("pods", "default") as any[]).filter((p) => p.metadata.labels?.app === "filler" && p.status?.phase === "Running").length < missing)
    await new Promise((r) => setTimeout(r, 100));
  for (const n of others) await run("kubectl", [...kubectlArgs, "uncordon", n]);
  const [a, b] = [na, nb].map((name) => ({ name, pods: sim.cluster.podsOnNode(name).length })) as [{ name: string; pods: number }, { name: string; pods: number }];
  console.log(`nodes: ${a.name} (${a.pods} pods, ${removable(a.name)} to remove), ${b.name} (${b.pods} pods, ${removable(b.name)} to remove); clock x${values["clock-speed"]}`);
  while (!(await gql("{ clusters { synced } }")).data?.clusters?.[0]?.synced) await new Promise((r) => setTimeout(r, 200));

  // b is cordoned while kubectl drains a, so a's pods do not land on b and both start equal.
  await run("kubectl", [...kubectlArgs, "cordon", b.name]);
  const kubectlRemovable = removable(a.name);
  let e0 = evictions();
  let t0 = performance.now();
  // -v=1 makes kubectl say when client-go's own rate limiter held a request back.
  const drained = await run("kubectl", [...kubectlArgs, "-v=1", "drain", a.name, "--ignore-daemonsets", "--delete-emptydir-data", "--force", "--timeout=600s"], { maxBuffer: 64 * 1024 * 1024 });
  const kubectl = { ms: performance.now() - t0, evictions: evictions() - e0, left: removable(a.name), removed: kubectlRemovable };
  const throttled = drained.stderr.split("\n").filter((line) => line.includes("client-side throttling"));
  console.log(`kubectl: ${throttled.length} requests held back by client-side throttling${throttled[0] ? ` (e.g. ${throttled[0].replace(/^.*\] /, "")})` : ""}`);

  const ourRemovable = removable(b.name);
  e0 = evictions();
  t0 = performance.now();
  const started = await gql(`mutation($n: String!) { drainNode(name: $n, options: { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true }) { id } }`, { n: b.name });
  const id = started.data.drainNode.id;
  let op: any;
  for (;;) {
    op = (await gql(`query($id: ID!) { drainOperation(id: $id) { status message pods { status attempts } } }`, { id })).data.drainOperation;
    if (op.status !== "RUNNING" && op.status !== "PENDING") break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const ours = { ms: performance.now() - t0, evictions: evictions() - e0, left: removable(b.name), removed: ourRemovable };
  if (op.status !== "SUCCEEDED") console.log(`node-inventory drain ${op.status}: ${op.message}`);

  const row = (name: string, r: typeof kubectl) =>
    `${name.padEnd(16)} ${(r.ms / 1000).toFixed(2).padStart(8)} s ${String(r.evictions).padStart(10)} ${String(r.removed).padStart(8)} ${String(r.left).padStart(6)}`;
  console.log(`${"".padEnd(16)} ${"wall".padStart(10)} ${"evictions".padStart(10)} ${"pods".padStart(8)} ${"left".padStart(6)}`);
  console.log(row("kubectl drain", kubectl));
  console.log(row("node-inventory", ours));
} finally {
  await stop(service.child);
  await sim.stop();
  rmSync(dir, { recursive: true, force: true });
}
