// The history recorder under heavy churn: a simulated 5,000-node cluster (own process) whose
// nodes flap conditions, go NotReady/Unknown, upgrade, come and go at `--churn` scenarios per
// simulated minute; node-inventory (own process) records to a fresh PostgreSQL database.
// Samples the recorder every second: rows written per second and how far behind it is
// (observations buffered). Usage: npm run bench:history [-- --nodes 5000 --churn 30000 --seconds 30]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { cpuSeconds, freshPostgres, rssMiB, spawnUntil, stop } from "./support.js";

const { values } = parseArgs({
  options: {
    nodes: { type: "string", default: "5000" },
    churn: { type: "string", default: "30000" },
    seconds: { type: "string", default: "30" },
  },
});
const fresh = await freshPostgres();

const dir = mkdtempSync(join(tmpdir(), "ni-bench-history-"));
const kubeconfig = join(dir, "kubeconfig");
const sim = await spawnUntil(["sim", "--nodes", values.nodes!, "--pods-per-node", "3", "--seed", "2", "--churn", values.churn!, "--kubeconfig-out", kubeconfig], /https?:\/\/\S+/, {}, [
  "--max-old-space-size=4096",
]);
const service = await spawnUntil(["serve", "--port", "0", "--kubeconfig", kubeconfig], /"url":"([^"]+)","graphql"/, { DATABASE_URL: fresh.url });
const url = service.match[1]!;
const status = async () =>
  (
    (await (
      await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "{ service { history { leaderOf pendingWrites droppedWrites recordedTransitions recordedChanges recordedMaintenanceEvents } } }" }),
      })
    ).json()) as any
  ).data.service.history;
try {
  // The first reconcile records every node as created; measure churn after it.
  for (;;) {
    const s = await status();
    if (s.leaderOf.length && s.pendingWrites === 0 && s.recordedChanges >= Number(values.nodes)) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  console.log(`initial reconcile of ${values.nodes} nodes done`);
  const first = await status();
  const cpu0 = cpuSeconds(service.child.pid!);
  let maxPending = 0;
  const rates: number[] = [];
  let previous = first;
  for (let second = 0; second < Number(values.seconds); second++) {
    await new Promise((r) => setTimeout(r, 1_000));
    const now = await status();
    const rows = now.recordedTransitions + now.recordedChanges + now.recordedMaintenanceEvents - (previous.recordedTransitions + previous.recordedChanges + previous.recordedMaintenanceEvents);
    rates.push(now.recordedTransitions - previous.recordedTransitions);
    maxPending = Math.max(maxPending, now.pendingWrites);
    console.log(`t=${second + 1}s transitions +${now.recordedTransitions - previous.recordedTransitions}, all rows +${rows}, buffered ${now.pendingWrites}, dropped ${now.droppedWrites}`);
    previous = now;
  }
  const last = previous;
  const cpu = cpuSeconds(service.child.pid!) - cpu0;
  const transitions = last.recordedTransitions - first.recordedTransitions;
  const rows = transitions + last.recordedChanges - first.recordedChanges + last.recordedMaintenanceEvents - first.recordedMaintenanceEvents;
  console.log(
    `over ${values.seconds} s: ${(transitions / Number(values.seconds)).toFixed(0)} transitions/s (${(rows / Number(values.seconds)).toFixed(0)} history rows/s), peak ${Math.max(...rates)}/s`,
  );
  console.log(`behind: at most ${maxPending} observations buffered, ${last.pendingWrites} at the end, ${last.droppedWrites} dropped`);
  console.log(`service CPU ${((cpu / Number(values.seconds)) * 100).toFixed(0)}% of one core, RSS ${rssMiB(service.child.pid!).toFixed(0)} MiB`);
} finally {
  await stop(service.child);
  await stop(sim.child);
  rmSync(dir, { recursive: true, force: true });
  await fresh.drop();
}
