/**
 * The soak: the simulator churns (its own churn and a seeded churn of this driver's: condition
 * flaps, labels, taints, cordons), the shipped program runs as replicas, faults are injected on a
 * seeded schedule, memory and answer times are sampled throughout; at the end the history the
 * replicas recorded is checked against the simulator's ground truth (./history-checker.ts).
 *
 *   npm run soak -- --minutes N --seed S --faults kill,freeze,postgres,cut,sim-restart,rv-reset,skew,drain
 *                   [--replicas N] [--database postgres|pglite] [--nodes N] [--json FILE]
 */
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startSimulator, R, type Simulator } from "../sim/index.js";
import { Rng } from "../sim/rng.js";
import { kubeconfigYaml } from "../sim/kubeconfig.js";
import { PACKAGE_ROOT } from "../package-info.js";
import { checkHistory, parseGroundTruth, type CheckReport, type FinalNode } from "./history-checker.js";
import { readRecordedHistory } from "./recorded-history.js";
import { formatCheck } from "./check-command.js";
import { PrivatePostgres } from "./private-postgres.js";
import { Replica } from "./replicas.js";
import { TcpProxy } from "./tcp-proxy.js";
import { faultSchedule, linearSlope, percentile, FAULT_KINDS, type FaultKind } from "./soak-stats.js";

export interface SoakOptions {
  minutes: number;
  seed: number;
  faults: FaultKind[];
  /** Each kind at least this many times (default: as many as fit one fault per ~40 s). */
  perKind?: number;
  replicas: number;
  database: "postgres" | "pglite";
  nodes: number;
  json?: string;
  /** Keep the work folder (ground truth, replica logs) even when the check passes. */
  keep?: boolean;
  /** The package whose program runs (default this one); a mutant's copy in tests. */
  programRoot?: string;
  leaseDurationSeconds?: number;
  /** How far a recorded time may be from the fact's: 5 s, plus the largest clock skew injected (a node change is dated by its replica's clock). */
  toleranceMs?: number;
  log?: (line: string) => void;
}

export interface SoakReport {
  seed: number;
  minutes: number;
  replicas: number;
  database: string;
  transitionsChecked: number;
  changesChecked: number;
  maintenanceChecked: number;
  lost: number;
  /** Not lost: undone or superseded while no replica recorded (./history-checker.ts). */
  unobservable: number;
  duplicated: number;
  phantom: number;
  chainBreaks: number;
  outOfOrder: number;
  timeOff: number;
  drains: CheckReport["drains"];
  faults: Record<string, number>;
  rssSlopeMiBPerHour: number | null;
  /** Which process the slope is of, and over how long. */
  rssSeries: { replica: number; pid: number; minutes: number; firstMiB: number; lastMiB: number; peakMiB: number } | null;
  rssPeakMiB: number;
  p99DuringFaultsMs: number | null;
  p99Ms: number | null;
  queries: { total: number; duringFaults: number; failed: number; failedDuringFaults: number };
  failed: boolean;
  /** How each drain left its node, by drain id, read when it ended (for checking the run again). */
  drainEnds: Record<string, FinalNode>;
  /** Spans when no replica recorded, and the end of the facts checked (./history-checker.ts). */
  gaps: [number, number][];
  lastFactAt?: number;
  check: CheckReport;
}

interface Probe {
  at: number;
  ms: number;
  ok: boolean;
  duringFault: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function post(url: string, query: string, variables: Record<string, unknown> = {}, timeoutMs = 15_000): Promise<{ ok: boolean; body: any }> {
  try {
    const res = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query, variables }), signal: AbortSignal.timeout(timeoutMs) });
    const body = await res.json();
    return { ok: res.ok && !body.errors, body };
  } catch (error) {
    return { ok: false, body: { errors: [{ message: (error as Error).message }] } };
  }
}

const ALL_NODES = `{ nodes(first: 5000) { totalCount edges { node { name conditions { type status } } } } }`;
const HISTORY_STATUS = `{ service { history { leaderOf pendingWrites } } }`;
const DRAIN = `mutation($n: String!) { drainNode(name: $n, options: { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true, timeoutSeconds: 300 }) { id status } }`;
const DRAIN_STATUS = `query($id: ID!) { drainOperation(id: $id) { id status message pods { namespace name status reason } } }`;

/** Run a soak to its end and check it (see file comment). */
export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const log = o.log ?? ((line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`));
  const leaseSeconds = o.leaseDurationSeconds ?? 4;
  const work = await mkdtemp(join(tmpdir(), "node-inventory-soak-"));
  const truthFile = join(work, "ground-truth.jsonl");
  const rng = new Rng(o.seed);
  const durationMs = o.minutes * 60_000;
  log(`soak: ${o.minutes} min, seed ${o.seed}, ${o.replicas} replica(s) on ${o.database}, faults ${o.faults.join(",") || "none"}; files in ${work}`);

  const postgres = o.database === "postgres" ? await PrivatePostgres.create() : undefined;
  const database = postgres ? postgres.url : join(work, "pglite");
  const sim: Simulator = await startSimulator({ nodes: o.nodes, podsPerNode: 8, seed: o.seed, churn: 0, groundTruthFile: truthFile, name: "soak" });
  const proxy = await TcpProxy.start(Number(new URL(sim.url).port));
  const kubeconfig = join(work, "kubeconfig");
  await writeFile(kubeconfig, kubeconfigYaml(sim.name, `http://127.0.0.1:${proxy.port}`, undefined, sim.adminToken), { mode: 0o600 });
  const replicas = Array.from({ length: o.replicas }, (_, i) => new Replica(i, { programRoot: o.programRoot ?? PACKAGE_ROOT, kubeconfig, leaseDurationSeconds: leaseSeconds, database, logDir: work }));
  const faultCounts: Record<string, number> = {};
  const faultWindows: [number, number][] = [];
  const probes: Probe[] = [];
  const rss = new Map<number, { replica: number; samples: [number, number][] }>();
  const drainEnds = new Map<string, FinalNode>();
  const activeDrains = new Map<string, string>();
  const timers: NodeJS.Timeout[] = [];
  let faultOpen = 0;
  // While the apiserver is down nothing writes to the cluster (this driver's churn waits too).
  let simDown = false;
  // Spans when the recording replica was down or frozen (./history-checker.ts, gaps).
  const gaps: [number, number][] = [];
  let gapOpen: number | undefined;
  let stopping = false;
  let failedEarly = true;
  // Facts after it (a scenario that would not end) are past the end of the run, left out of the check.
  let lastFactAt = Infinity;

  const live = () => replicas.filter((r) => r.running && !r.frozen);
  const leader = () => {
    const lease = sim.cluster.list(R.leases, "kube-system").find((l) => l.metadata.name.startsWith("node-inventory-history-")) as any;
    const holder: string | undefined = lease?.spec?.holderIdentity;
    return holder ? replicas.find((r) => r.pid !== undefined && holder.includes(`-${r.pid}-`)) : undefined;
  };
  const restartSlot = async (r: Replica, skewMs = 0) => {
    for (let attempt = 1; ; attempt++) {
      try {
        await r.start(skewMs);
        return;
      } catch (error) {
        log(`replica ${r.index} did not start (attempt ${attempt}): ${(error as Error).message.split("\n")[0]}`);
        await r.kill();
        if (attempt >= 5) throw error;
        await sleep(2_000);
      }
    }
  };

  try {
    await Promise.all(replicas.map((r) => restartSlot(r)));
    log(`replicas ready: ${replicas.map((r) => `${r.index}=${r.pid}`).join(" ")}`);
    const settle = async (what: string, deadlineMs = 120_000) => {
      const until = Date.now() + deadlineMs;
      for (;;) {
        const statuses = await Promise.all(live().map((r) => post(r.url!, HISTORY_STATUS, {}, 5_000)));
        const ok = statuses.length > 0 && statuses.every((s) => s.ok);
        const led = statuses.some((s) => s.body?.data?.service?.history?.leaderOf?.includes(sim.name));
        const pending = statuses.reduce((n, s) => n + (s.body?.data?.service?.history?.pendingWrites ?? 0), 0);
        if (ok && led && pending === 0) return;
        if (Date.now() > until) throw new Error(`${what}: no replica leads with nothing pending within ${deadlineMs} ms`);
        await sleep(500);
      }
    };
    await settle("first sync");

    // Measurements: RSS every second, answer times every few seconds.
    timers.push(
      setInterval(() => {
        for (const r of replicas) {
          const mib = r.rssMiB();
          if (mib === undefined || r.pid === undefined) continue;
          let series = rss.get(r.pid);
          if (!series) rss.set(r.pid, (series = { replica: r.index, samples: [] }));
          series.samples.push([Date.now(), mib]);
        }
      }, 1_000),
    );
    const probe = async () => {
      for (const r of live()) {
        for (const query of ["{ __typename }", ALL_NODES]) {
          const duringFault = faultOpen > 0;
          const started = performance.now();
          const answer = await post(r.url!, query, {}, 30_000);
          probes.push({ at: Date.now(), ms: performance.now() - started, ok: answer.ok, duringFault: duringFault || faultOpen > 0 });
        }
      }
    };
    let probing: Promise<void> = Promise.resolve();
    timers.push(setInterval(() => (probing = probing.then(probe)), 3_000));

    // Churn: the simulator's own, and this driver's, seeded.
    sim.cluster.churn = 2;
    const nodes = () => sim.cluster.nodeNames().filter((n) => ![...activeDrains.values()].includes(n));
    timers.push(
      setInterval(() => {
        if (simDown) return;
        const candidates = nodes();
        if (candidates.length === 0) return;
        const node = rng.pick(candidates);
        const obj = sim.cluster.get(R.nodes, node);
        if (!obj) return;
        const action = rng.pick(["pressure", "pressure", "ready", "label", "taint", "cordon"] as const);
        if (action === "pressure") {
          const type = rng.pick(["MemoryPressure", "DiskPressure", "PIDPressure"]);
          const now = ((obj.status as any).conditions as any[]).find((c) => c.type === type)?.status;
          sim.cluster.setNodeCondition(node, type, now === "True" ? "False" : "True");
        } else if (action === "ready") {
          const now = ((obj.status as any).conditions as any[]).find((c) => c.type === "Ready")?.status;
          sim.cluster.setNodeCondition(node, "Ready", now === "True" ? "False" : "True");
        } else if (action === "label") {
          sim.cluster.update(R.nodes, node, (n) => {
            const labels = (n.metadata.labels ??= {});
            if (rng.chance(0.3)) delete labels["proof.example/flavour"];
            else labels["proof.example/flavour"] = rng.pick(["a", "b", "c"]);
          });
        } else if (action === "taint") {
          sim.cluster.update(R.nodes, node, (n) => {
            const spec = (n.spec ??= {}) as any;
            const taints = (spec.taints ?? []).filter((t: any) => t.key !== "proof.example/quarantine");
            if (rng.chance(0.5)) taints.push({ key: "proof.example/quarantine", value: rng.pick(["x", "y"]), effect: "NoSchedule" });
            spec.taints = taints;
          });
        } else {
          sim.cluster.update(R.nodes, node, (n) => {
            const spec = (n.spec ??= {}) as any;
            spec.unschedulable = !spec.unschedulable;
          });
        }
      }, 1_500),
    );

    // Drains: watched to their end, the node's state noted then, the node uncordoned for the churn.
    const watchDrain = async (id: string, node: string) => {
      const until = Date.now() + 10 * 60_000;
      while (!stopping && Date.now() < until) {
        await sleep(1_000);
        const r = live()[0];
        if (!r) continue;
        const answer = await post(r.url!, DRAIN_STATUS, { id }, 10_000);
        const status = answer.body?.data?.drainOperation?.status;
        if (!status || status === "PENDING" || status === "RUNNING") continue;
        const obj = sim.cluster.get(R.nodes, node);
        const evictable = sim.cluster
          .podsOnNode(node)
          // What kubectl drain leaves: DaemonSet pods, mirror pods (static, owned by the Node), pods going or done.
          .filter(
            (p) =>
              !(p.metadata.ownerReferences ?? []).some((ref) => ref.kind === "DaemonSet" || ref.kind === "Node") &&
              !(p.metadata as any).annotations?.["kubernetes.io/config.mirror"] &&
              !p.metadata.deletionTimestamp &&
              !["Succeeded", "Failed"].includes((p.status as any)?.phase),
          )
          .map((p) => `${p.metadata.namespace}/${p.metadata.name}`);
        drainEnds.set(id, { unschedulable: Boolean((obj?.spec as any)?.unschedulable), evictablePods: evictable });
        const op = answer.body.data.drainOperation;
        const unfinished = (op.pods as { namespace: string; name: string; status: string; reason: string | null }[]).filter((p) => !["EVICTED", "DELETED", "SKIPPED"].includes(p.status));
        log(
          `drain ${id} on ${node}: ${status}${op.message ? ` (${op.message})` : ""}, ${evictable.length} pods left${unfinished.length ? `; ${unfinished.map((p) => `${p.namespace}/${p.name} ${p.status}${p.reason ? ` ${p.reason}` : ""}`).join(", ")}` : ""}`,
        );
        sim.cluster.update(R.nodes, node, (n) => void ((n.spec as any).unschedulable = false));
        break;
      }
      activeDrains.delete(id);
    };

    const inject: Record<FaultKind, () => Promise<void>> = {
      kill: async () => {
        const r = rng.pick(replicas.filter((x) => x.running));
        if (r === leader()) gapOpen = Date.now();
        log(`fault kill: replica ${r.index} (pid ${r.pid})${r === leader() ? ", the leader" : ""}`);
        await r.kill();
        await sleep(rng.int(500, 3_000));
        await restartSlot(r);
      },
      freeze: async () => {
        const r = leader() ?? rng.pick(replicas.filter((x) => x.running));
        gapOpen = Date.now();
        log(`fault freeze: replica ${r.index} (pid ${r.pid}) stopped past its Lease (${leaseSeconds} s)`);
        r.freeze();
        await sleep(leaseSeconds * 1000 + rng.int(1_000, 4_000));
        r.thaw();
      },
      postgres: async () => {
        if (!postgres) return;
        log("fault postgres: stopped (immediate)");
        await postgres.stop("immediate");
        await sleep(rng.int(2_000, 6_000));
        await postgres.start();
      },
      cut: async () => {
        log(`fault cut: ${proxy.cutAll()} connections to the simulator reset`);
      },
      "sim-restart": async () => {
        log("fault sim-restart: the apiserver restarts with the same state");
        simDown = true;
        await sim.restart({ downMs: rng.int(500, 3_000) }).finally(() => (simDown = false));
      },
      "rv-reset": async () => {
        log(`fault rv-reset: the apiserver restarts with resourceVersions counted again (was ${sim.cluster.store.resourceVersion})`);
        simDown = true;
        await sim.restart({ downMs: rng.int(500, 2_000), resourceVersionsBack: true }).finally(() => (simDown = false));
      },
      skew: async () => {
        const r = rng.pick(replicas.filter((x) => x.running));
        const skewMs = rng.pick([-1, 1]) * rng.int(leaseSeconds * 500, leaseSeconds * 3_000);
        if (r === leader()) gapOpen = Date.now();
        log(`fault skew: replica ${r.index} restarted with its clock ${skewMs} ms off`);
        await r.kill();
        await restartSlot(r, skewMs);
      },
      drain: async () => {
        const runner = rng.pick(live());
        const candidates = sim.cluster.nodeNames().filter((n) => ![...activeDrains.values()].includes(n) && !(sim.cluster.get(R.nodes, n)?.spec as any)?.unschedulable);
        if (!runner || candidates.length === 0) return;
        const node = rng.pick(candidates);
        const answer = await post(runner.url!, DRAIN, { n: node }, 15_000);
        const id = answer.body?.data?.drainNode?.id as string | undefined;
        if (!id) {
          log(`fault drain: refused on ${node}: ${JSON.stringify(answer.body?.errors ?? answer.body)}`);
          return;
        }
        activeDrains.set(id, node);
        void watchDrain(id, node);
        // Small nodes drain in well under a second: the runner dies early to die mid-drain.
        await sleep(rng.int(20, 300));
        if (runner === leader()) gapOpen = Date.now();
        log(`fault drain: ${node} draining (${id}); its runner replica ${runner.index} killed`);
        await runner.kill();
        await sleep(rng.int(500, 2_000));
        await restartSlot(runner);
      },
    };

    const schedule = faultSchedule(o.seed, o.faults, durationMs, o.perKind);
    const started = Date.now();
    for (const { at, kind } of schedule) {
      const wait = started + at - Date.now();
      if (wait > 0) await sleep(wait);
      faultOpen++;
      const opened = Date.now();
      try {
        await inject[kind]();
        faultCounts[kind] = (faultCounts[kind] ?? 0) + 1;
      } catch (error) {
        log(`fault ${kind} failed: ${(error as Error).stack}`);
      }
      // What a fault disturbs lasts past its end: a new leader's Lease, a relist, a reconcile.
      await sleep(leaseSeconds * 1000);
      faultOpen--;
      faultWindows.push([opened, Date.now()]);
      if (gapOpen !== undefined) {
        // Until the new leader's reconcile: the Lease once more, and the write.
        gaps.push([gapOpen, Date.now() + leaseSeconds * 1000 + 5_000]);
        gapOpen = undefined;
      }
    }
    const left = started + durationMs - Date.now();
    if (left > 0) await sleep(left);

    // Quiet down: no more churn, every replica up, the recorder caught up.
    log("churn stops; waiting for the recorder to catch up");
    for (const t of timers.splice(1)) clearInterval(t);
    sim.cluster.churn = 0;
    await probing;
    for (const r of replicas) if (r.frozen) r.thaw();
    for (const r of replicas) if (!r.running) await restartSlot(r);
    const drainsUntil = Date.now() + 5 * 60_000;
    while (activeDrains.size > 0 && Date.now() < drainsUntil) await sleep(1_000);
    // Scenarios under way finish (a node's outage ends): wait until nothing happens for 10 s.
    for (let size = -1, quietSince = Date.now(), until = Date.now() + 180_000; Date.now() < until; await sleep(1_000)) {
      const now = (await stat(truthFile)).size;
      if (now !== size) [size, quietSince] = [now, Date.now()];
      else if (Date.now() - quietSince >= 10_000) break;
    }
    lastFactAt = Date.now();
    await sleep(leaseSeconds * 1000 + 2_000);
    await settle("the end", 300_000);
    await sleep(3_000);
    await settle("the end", 60_000);
    failedEarly = false;
  } finally {
    stopping = true;
    for (const t of timers) clearInterval(t);
    await Promise.all(replicas.map((r) => r.stop().catch(() => undefined)));
    for (const r of replicas) r.close();
    await proxy.stop();
    await sim.stop();
    if (failedEarly) await postgres?.destroy();
  }

  let check: CheckReport;
  try {
    const facts = parseGroundTruth(await readFile(truthFile, "utf8"));
    check = checkHistory(facts, await readRecordedHistory(database), {
      toleranceMs: o.toleranceMs ?? 5_000 + (o.faults.includes("skew") ? leaseSeconds * 3_000 : 0),
      finalNodes: drainEnds,
      gaps,
      until: lastFactAt,
    });
  } finally {
    // A failed run keeps its database (stopped) beside the ground truth, for a look.
    if (check! && check.failed) await postgres?.stop("fast").catch(() => undefined);
    else await postgres?.destroy();
  }

  // RSS: the slope of the longest-lived process after its first minute (start-up is not a leak).
  let rssSeries: SoakReport["rssSeries"] = null;
  let slope: number | null = null;
  let peak = 0;
  for (const [pid, s] of rss) {
    for (const [, mib] of s.samples) peak = Math.max(peak, mib);
    const settled = s.samples.filter(([t]) => t - s.samples[0]![0] >= 60_000);
    if (settled.length < 30) continue;
    const minutes = (settled.at(-1)![0] - settled[0]![0]) / 60_000;
    if (rssSeries && minutes <= rssSeries.minutes) continue;
    slope = linearSlope(settled.map(([t, mib]) => [t / 3_600_000, mib]));
    rssSeries = {
      replica: s.replica,
      pid,
      minutes: Math.round(minutes * 10) / 10,
      firstMiB: Math.round(settled[0]![1]),
      lastMiB: Math.round(settled.at(-1)![1]),
      peakMiB: Math.round(Math.max(...settled.map(([, m]) => m))),
    };
  }
  const during = probes.filter((p) => p.duringFault);
  const round = (n: number | null) => (n === null ? null : Math.round(n * 10) / 10);
  const sum = (k: "lost" | "unobservable" | "duplicated" | "phantom" | "chainBreaks" | "outOfOrder" | "timeOff") => check.transitions[k] + check.changes[k] + check.maintenance[k];
  const report: SoakReport = {
    seed: o.seed,
    minutes: o.minutes,
    replicas: o.replicas,
    database: o.database,
    transitionsChecked: check.transitions.checked,
    changesChecked: check.changes.checked,
    maintenanceChecked: check.maintenance.checked,
    lost: sum("lost"),
    unobservable: sum("unobservable"),
    duplicated: sum("duplicated"),
    phantom: sum("phantom"),
    chainBreaks: sum("chainBreaks"),
    outOfOrder: sum("outOfOrder"),
    timeOff: sum("timeOff"),
    drains: check.drains,
    faults: faultCounts,
    rssSlopeMiBPerHour: round(slope),
    rssSeries,
    rssPeakMiB: Math.round(peak),
    p99DuringFaultsMs: round(
      percentile(
        during.filter((p) => p.ok).map((p) => p.ms),
        0.99,
      ),
    ),
    p99Ms: round(
      percentile(
        probes.filter((p) => p.ok).map((p) => p.ms),
        0.99,
      ),
    ),
    queries: { total: probes.length, duringFaults: during.length, failed: probes.filter((p) => !p.ok).length, failedDuringFaults: during.filter((p) => !p.ok).length },
    failed: check.failed,
    drainEnds: Object.fromEntries(drainEnds),
    gaps,
    ...(Number.isFinite(lastFactAt) ? { lastFactAt } : {}),
    check: { ...check, problems: check.problems.slice(0, 500), byNode: Object.fromEntries(Object.entries(check.byNode).slice(0, 200)) },
  };
  if (o.json) await writeFile(o.json, JSON.stringify(report, null, 2));
  log(`\n${formatCheck(check)}`);
  if (!check.failed && !o.keep) await rm(work, { recursive: true, force: true });
  else log(`kept ${work} (ground truth, replica logs)${postgres ? ` and ${postgres.dir} (the database, stopped)` : ""} for a look`);
  return report;
}

/** The summary a person reads at the end. */
export function formatSoak(r: SoakReport): string {
  return [
    `soak: ${r.minutes} min, seed ${r.seed}, ${r.replicas} replica(s) on ${r.database}`,
    `faults: ${
      Object.entries(r.faults)
        .map(([k, n]) => `${k} ${n}`)
        .join(", ") || "none"
    }`,
    `checked: ${r.transitionsChecked} transitions, ${r.changesChecked} node changes, ${r.maintenanceChecked} cordons, ${r.drains.checked} drains (${r.drains.evictions} evictions)`,
    `lost ${r.lost} (and ${r.unobservable} unobservable), duplicated ${r.duplicated}, phantom ${r.phantom}, chain breaks ${r.chainBreaks}, out of order ${r.outOfOrder}, time off ${r.timeOff}, evicted twice ${r.drains.evictedTwice} (asked again while terminating ${r.drains.repeatedOfTerminating}), drains unfinished ${r.drains.unfinished}`,
    `RSS: slope ${r.rssSlopeMiBPerHour ?? "not known (no process lived long enough)"} MiB/h${r.rssSeries ? ` (replica ${r.rssSeries.replica}, ${r.rssSeries.minutes} min, ${r.rssSeries.firstMiB} -> ${r.rssSeries.lastMiB} MiB)` : ""}, peak ${r.rssPeakMiB} MiB`,
    `answers: p99 ${r.p99Ms ?? "-"} ms, during faults ${r.p99DuringFaultsMs ?? "-"} ms; ${r.queries.total} queries, ${r.queries.failed} failed (${r.queries.failedDuringFaults} during faults)`,
    r.failed ? "FAILED" : "OK",
  ].join("\n");
}

export function parseSoakArgs(argv: string[]): SoakOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      minutes: { type: "string" },
      seed: { type: "string" },
      faults: { type: "string" },
      "per-kind": { type: "string" },
      replicas: { type: "string" },
      database: { type: "string" },
      nodes: { type: "string" },
      json: { type: "string" },
      program: { type: "string" },
      "lease-duration": { type: "string" },
      keep: { type: "boolean" },
    },
    strict: true,
  });
  const faults = (values.faults ?? FAULT_KINDS.join(",")).split(",").filter((f) => f && f !== "none");
  for (const f of faults) if (!(FAULT_KINDS as readonly string[]).includes(f)) throw new Error(`unknown fault "${f}"; known: ${FAULT_KINDS.join(", ")}`);
  const database = (values.database ?? "postgres") as "postgres" | "pglite";
  if (database !== "postgres" && database !== "pglite") throw new Error(`--database must be postgres or pglite`);
  const num = (v: string | undefined, fallback: number) => (v === undefined ? fallback : Number(v));
  return {
    minutes: num(values.minutes, 5),
    seed: num(values.seed, 1),
    faults: faults.filter((f) => database === "postgres" || f !== "postgres") as FaultKind[],
    ...(values["per-kind"] ? { perKind: Number(values["per-kind"]) } : {}),
    replicas: database === "pglite" ? 1 : num(values.replicas, 3),
    database,
    nodes: num(values.nodes, 20),
    ...(values.json ? { json: values.json } : {}),
    ...(values.program ? { programRoot: values.program } : {}),
    ...(values.keep ? { keep: true } : {}),
    ...(values["lease-duration"] ? { leaseDurationSeconds: Number(values["lease-duration"]) } : {}),
  };
}
