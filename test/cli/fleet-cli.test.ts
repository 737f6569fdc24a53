import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { graphql, startTestApp } from "../support/app.js";
import { BIN_NODE_FLAGS } from "../../src/package-info.js";
import { BIN, finished, runCli, spawnCli } from "../support/cli.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const ALL_FLAGS = ["--ignore-daemonsets", "--delete-emptydir-data", "--force"];
const kindOf = (pod: any) => pod.metadata.ownerReferences?.find((r: any) => r.controller)?.kind as string | undefined;

/** Runs the CLI on a pseudo-terminal (util-linux `script`), so stdout is a TTY; `script -e` exits with the command's code. */
function onTerminal(args: string[], env: Record<string, string>, timeoutMs = 60_000) {
  const command = [process.execPath, ...BIN_NODE_FLAGS, BIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const child = spawn("script", ["-qefc", command, "/dev/null"], { env: { PATH: process.env.PATH ?? "", TERM: "dumb", ...env }, stdio: "pipe" });
  return finished(child, timeoutMs);
}

describe("the fleet CLI against the simulator, over the real program's GraphQL API", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;
  let workers: string[];
  let ledgerNode: string;
  const cli = (args: string[], timeoutMs = 60_000) => runCli([...args, "--url", url], {}, timeoutMs);

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 8, seed: 7, clockSpeed: 30 });
    ({ app, url } = await startTestApp(
      { clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] }, auth: { mutationRateLimit: 0 } },
      { maintenanceTuning: { evictionRetryMs: 300, deletionPollMs: 100, heartbeatMs: 300, staleAfterMs: 1_500 } },
    ));
    const ledger = (sim.sim.cluster.list("pods", "payments") as any[]).filter((p) => p.metadata.labels?.app === "ledger");
    ledgerNode = ledger[0].spec.nodeName;
    const ledgerNodes = new Set(ledger.map((p) => p.spec.nodeName));
    workers = sim.sim.cluster
      .nodeNames()
      .filter((n) => !n.startsWith("control-plane") && !ledgerNodes.has(n) && (sim.sim.cluster.podsOnNode(n) as any[]).some((p) => kindOf(p) === "ReplicaSet"));
    assert.ok(workers.length >= 3, "three plain workers");
    await eventually(async () => (await graphql(url, `{ clusters { synced } }`)).body.data?.clusters[0]?.synced, "the cluster synced", 20_000);
  });
  after(async () => {
    await app.stop();
    await sim.stop();
  });

  test("nodes: kubectl get nodes' columns and values, CLUSTER first and usage last; -o wide, -l, json and csv", async () => {
    const { code, stdout } = await cli(["nodes"]);
    assert.equal(code, 0);
    const [header, ...rows] = stdout.trimEnd().split("\n").map((l) => l.split(/\s{2,}/));
    assert.deepEqual(header, ["CLUSTER", "NAME", "STATUS", "ROLES", "AGE", "VERSION", "CPU%", "MEMORY%"]);
    const kubectl = (await sim.kubectl("get", "nodes", "--no-headers")).trimEnd().split("\n").map((l) => l.split(/\s{2,}/));
    // AGE aside: kubectl's is the simulator's (its clock runs 30 times as fast), ours the wall clock's.
    const noAge = (r: string[]) => [...r.slice(0, 3), ...r.slice(4)];
    assert.deepEqual(rows.map((r) => noAge(r.slice(1, 6))).sort(), kubectl.map(noAge).sort());
    assert.ok(rows.every((r) => /^\d+d$/.test(r[4]!)), "the simulator's nodes are days old");
    assert.ok(rows.every((r) => r[0] === "sim" && /^\d+%$/.test(r[6]!) && /^\d+%$/.test(r[7]!)), stdout);

    const wide = (await cli(["nodes", "-o", "wide"])).stdout.trimEnd().split("\n").map((l) => l.split(/\s{2,}/));
    const kubectlWide = (await sim.kubectl("get", "nodes", "-o", "wide")).trimEnd().split("\n").map((l) => l.split(/\s{2,}/));
    assert.deepEqual(wide[0]!.slice(1, -2), kubectlWide[0]);
    assert.deepEqual(wide.slice(1).map((r) => noAge(r.slice(1, -2))).sort(), kubectlWide.slice(1).map(noAge).sort());

    const selected = (await cli(["nodes", "-l", "node-role.kubernetes.io/control-plane", "-o", "json"])).stdout;
    assert.deepEqual(JSON.parse(selected).map((n: any) => n.name), sim.sim.cluster.nodeNames().filter((n) => n.startsWith("control-plane")));
    const csv = (await cli(["nodes", "--cluster", "sim", "-o", "csv"])).stdout.split("\r\n");
    assert.equal(csv[0], "cluster,name,status,roles,age,version,internal-ip,external-ip,os-image,kernel-version,container-runtime,cpu_percent,memory_percent,stale_since");
    assert.equal(csv.filter(Boolean).length, sim.sim.cluster.nodeNames().length + 1);

    const none = await cli(["nodes", "-l", "no-such-label"]);
    assert.deepEqual([none.code, none.stdout, none.stderr], [0, "", "No resources found\n"]);
    const unknown = await cli(["nodes", "--cluster", "elsewhere"]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^node-inventory: NOT_FOUND: /);
    const bad = await cli(["nodes", "-o", "yaml"]);
    assert.deepEqual([bad.code, bad.stderr], [2, `node-inventory: -o: "yaml" is not table, wide, json or csv\n`]);
  });

  test("cordon and uncordon say what kubectl says; CLUSTER/NAME works; the reason is recorded", async () => {
    const node = workers[0]!;
    assert.deepEqual(await cli(["cordon", `sim/${node}`, "--reason", "disk swap"]), { code: 0, stdout: `node/${node} cordoned\n`, stderr: "" });
    assert.equal((sim.sim.cluster.get("nodes", node) as any).spec.unschedulable, true);
    assert.deepEqual(await cli(["cordon", node]), { code: 0, stdout: `node/${node} already cordoned\n`, stderr: "" });
    assert.deepEqual(await cli(["uncordon", node]), { code: 0, stdout: `node/${node} uncordoned\n`, stderr: "" });
    const events = await eventually(async () => {
      const edges = (await graphql(url, `query($n: String) { maintenanceEvents(filter: { node: $n, kinds: [CORDONED] }) { edges { node { actor reason } } } }`, { n: node })).body.data.maintenanceEvents.edges;
      return edges.length ? edges : undefined;
    }, "the cordon recorded", 10_000);
    assert.deepEqual(events[0].node, { actor: "local-admin", reason: "disk swap" });
    const missing = await cli(["cordon", "ghost"]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^node-inventory: NOT_FOUND: /);
  });

  test("label and taint take kubectl's arguments and refuse what it refuses, with its message", async () => {
    const node = workers[0]!;
    assert.deepEqual(await cli(["label", node, "env=prod", "team=web"]), { code: 0, stdout: `node/${node} labeled\n`, stderr: "" });
    assert.deepEqual(await cli(["label", node, "env=prod"]), { code: 0, stdout: `node/${node} not labeled\n`, stderr: "" });
    const refused = await cli(["label", node, "env=dev"]);
    assert.deepEqual(refused, { code: 1, stdout: "", stderr: "node-inventory: BAD_USER_INPUT: 'env' already has a value (prod), and --overwrite is false\n" });
    assert.deepEqual(await cli(["label", node, "env=dev", "--overwrite"]), { code: 0, stdout: `node/${node} labeled\n`, stderr: "" });
    assert.deepEqual(await cli(["label", node, "team-", "absent-"]), { code: 0, stdout: `label "absent" not found.\nnode/${node} unlabeled\n`, stderr: "" });
    assert.equal((sim.sim.cluster.get("nodes", node) as any).metadata.labels.env, "dev");

    assert.deepEqual(await cli(["taint", node, "dedicated=gpu:NoSchedule", "spot:PreferNoSchedule"]), { code: 0, stdout: `node/${node} tainted\n`, stderr: "" });
    const again = await cli(["taint", node, "dedicated=cpu:NoSchedule"]);
    assert.deepEqual(again, { code: 1, stdout: "", stderr: `node-inventory: BAD_USER_INPUT: node ${node} already has dedicated taint(s) with same effect(s) and --overwrite is false\n` });
    assert.deepEqual(await cli(["taint", node, "dedicated=cpu:NoSchedule", "--overwrite"]), { code: 0, stdout: `node/${node} modified\n`, stderr: "" });
    assert.deepEqual(await cli(["taint", node, "dedicated-", "spot:PreferNoSchedule-"]), { code: 0, stdout: `node/${node} untainted\n`, stderr: "" });
    const gone = await cli(["taint", node, "dedicated-"]);
    assert.deepEqual(gone, { code: 1, stdout: "", stderr: `node-inventory: NOT_FOUND: taint "dedicated" not found\n` });
    const badArgs = await cli(["label", node, "nonsense"]);
    assert.deepEqual([badArgs.code, badArgs.stderr], [2, `node-inventory: label: "nonsense" is not KEY=VALUE or KEY-\n`]);
  });

  test("drain --dry-run prints a plan and changes nothing; a plan that would be refused names the pods and the flags that unblock them (exit 1)", async () => {
    const node = workers[1]!;
    const plan = await cli(["drain", node, "--dry-run=server", ...ALL_FLAGS]);
    assert.equal(plan.code, 0, plan.stderr);
    const lines = plan.stdout.trimEnd().split("\n");
    assert.deepEqual(lines.slice(0, 2), [`Plan for draining node/${node} (dry run: nothing was changed)`, `would cordon node/${node}`]);
    const pods = sim.sim.cluster.podsOnNode(node) as any[];
    const evictable = pods.filter((p) => kindOf(p) !== "DaemonSet" && !p.metadata.annotations?.["kubernetes.io/config.mirror"]);
    assert.deepEqual(lines.filter((l) => l.startsWith("would evict pod ")).sort(), evictable.map((p) => `would evict pod ${p.metadata.namespace}/${p.metadata.name}`).sort());
    assert.equal(lines.at(-1), `plan: node/${node} would be drained: ${evictable.length} pod(s) evicted, ${pods.length - evictable.length} left`);
    assert.equal((sim.sim.cluster.get("nodes", node) as any).spec.unschedulable, undefined, "still schedulable");

    const refused = await cli(["drain", node, "--dry-run", "--ignore-daemonsets"]);
    assert.equal(refused.code, 1);
    const said = refused.stdout.trimEnd().split("\n");
    assert.ok(!/error|FAILED/i.test(refused.stdout), refused.stdout);
    const emptyDir = evictable.filter((p) => (p.spec.volumes ?? []).some((v: any) => v.emptyDir));
    const bare = evictable.filter((p) => !kindOf(p));
    assert.ok(emptyDir.length + bare.length > 0, "the worker has a pod that refuses without flags");
    for (const p of emptyDir.filter((p) => kindOf(p)))
      assert.ok(said.includes(`blocks the drain: pod ${p.metadata.namespace}/${p.metadata.name}: has emptyDir data, lost when it is evicted (--delete-emptydir-data to evict it)`), refused.stdout);
    // kubectl's order of filters: local storage decides before the missing controller.
    const flags = [...(emptyDir.length ? ["--delete-emptydir-data"] : []), ...(bare.some((p) => !emptyDir.includes(p)) ? ["--force"] : [])];
    assert.match(said.at(-1)!, new RegExp(`^plan: with these flags the drain would stop before removing any pod: \\d+ pod\\(s\\) block it; add ${flags.join(" ")} to let it go on$`));
  });

  test("drain piped: kubectl drain's lines, one per change, and exit 0 when it SUCCEEDED", async () => {
    // The worker drain.test drains too: the simulated cluster has room for its pods elsewhere.
    const node = workers[0]!;
    const run = await cli(["drain", node, ...ALL_FLAGS, "--reason", "kernel update"], 90_000);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const lines = run.stdout.trimEnd().split("\n");
    assert.equal(lines[0], `node/${node} cordoned`);
    assert.ok(lines.some((l) => /^evicting pod \S+\/\S+$/.test(l)), run.stdout);
    assert.ok(lines.some((l) => /^pod\/\S+ evicted$/.test(l)), run.stdout);
    assert.equal(lines.at(-1), `node/${node} drained`);
    assert.ok(!run.stdout.includes("\r"), "no terminal control when piped");
    assert.equal((sim.sim.cluster.podsOnNode(node) as any[]).filter((p) => kindOf(p) === "ReplicaSet").length, 0);
  });

  test("drain piped, blocked by a PodDisruptionBudget until its timeout: the budget named, exit 1", async () => {
    const run = await cli(["drain", ledgerNode, ...ALL_FLAGS, "--timeout", "4s"], 90_000);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stdout, /^error when evicting pod payments\/\S+ \(will retry\): blocked by PodDisruptionBudget ledger/m);
    assert.match(run.stdout.trimEnd().split("\n").at(-1)!, /^error: .*timeout/);
    await cli(["uncordon", ledgerNode]);
  });

  test("Ctrl-C stops the drain as it stops kubectl drain: CANCELLED, the node stays cordoned, exit 1", async () => {
    const child = spawnCli(["drain", ledgerNode, ...ALL_FLAGS, "--url", url]);
    const done = finished(child, 60_000);
    let seen = "";
    await new Promise<void>((resolve) => child.stdout!.on("data", (d) => (seen += d) && seen.includes("(will retry)") && resolve()));
    child.kill("SIGINT");
    const run = await done;
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stdout.trimEnd().split("\n").at(-1)!, new RegExp(`^drain of node/${ledgerNode} cancelled: cancelled by local-admin; the node stays cordoned$`));
    assert.equal((sim.sim.cluster.get("nodes", ledgerNode) as any).spec.unschedulable, true);
    await cli(["uncordon", ledgerNode]);
  });

  test("drain on a terminal: a progress bar naming the blocking budget, redrawn in place; exit 1 when it FAILED, 0 when it SUCCEEDED", async () => {
    const blocked = await onTerminal(["drain", ledgerNode, ...ALL_FLAGS, "--timeout", "4s", "--url", url], {});
    assert.equal(blocked.code, 1, blocked.stdout + blocked.stderr);
    assert.match(blocked.stdout, /\r\x1b\[2Knode\/\S+ \[[#=~-]{30}\] +\d+%  \d+ gone, \d+ terminating, [1-9]\d* evicting, \d+ not started  blocked by PodDisruptionBudget [^\r]*\bledger\b/);
    assert.ok(!/^error when evicting/m.test(blocked.stdout), "no per-change lines on a terminal");
    assert.match(blocked.stdout, /\r\x1b\[2Kerror: .*timeout/);
    await cli(["uncordon", ledgerNode]);

    // No room is left for another worker's pods: a drain of none of them succeeds at once.
    const node = workers[1]!;
    const done = await onTerminal(["drain", node, ...ALL_FLAGS, "--pod-selector", "app=no-such-app", "--url", url], {});
    assert.equal(done.code, 0, done.stdout + done.stderr);
    assert.ok(done.stdout.includes(`\r\x1b[2Knode/${node} drained\r\n`), JSON.stringify(done.stdout.slice(-200)));
  });
});
