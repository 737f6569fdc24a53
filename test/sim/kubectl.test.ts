/**
 * The real kubectl against the standalone simulator (spawned as a child
 * process, as a user would run it), in both of its modes: the open demo over
 * plain HTTP, and `--rbac --tls` (bearer token, RBAC, HTTPS), where every
 * check must pass just the same as the kubeconfig's administrator. kubectl
 * must be on PATH: these tests fail, never skip, without it.
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { eventually, kubeconfigClient, runKubectl, spawnSimulator, type Run, type SimProcess } from "./support.js";

const SIM_MAIN = fileURLToPath(new URL("../../src/sim/sim-main.js", import.meta.url));

/** Outputs worth quoting in the closing note are kept here when SIM_KUBECTL_TRANSCRIPT is set. */
const transcript: string[] = [];

const MODES = [
  { title: "kubectl against the standalone simulator", flags: [] as string[], scheme: "http" },
  { title: "kubectl against the standalone simulator with --rbac --tls", flags: ["--rbac", "--tls"], scheme: "https" },
];

for (const mode of MODES)
  describe(mode.title, () => {
    let sim: SimProcess;
    let kubeconfig: string;
    let client: ReturnType<typeof kubeconfigClient>;
    /** kubectl's minor version, read by the first test. */
    let minor = 0;

    const kubectl = async (...args: string[]): Promise<Run> => {
      const r = await runKubectl(kubeconfig, args);
      transcript.push(`$ kubectl ${args.join(" ")}\n${r.stdout}${r.stderr}`);
      return r;
    };

    const api = (path: string): Promise<any> => client.json(path);

    /** Split kubectl's aligned columns. */
    const rows = (out: string): string[][] =>
      out
        .trim()
        .split("\n")
        .map((l) => l.trim().split(/\s{2,}/));

    before(async () => {
      // Simulated time runs 30x: a 30 s grace period passes in one wall second.
      sim = await spawnSimulator(["--nodes", "24", "--seed", "11", "--name", "kubectl-sim", "--clock-speed", "30", ...mode.flags]);
      kubeconfig = sim.kubeconfig;
      client = kubeconfigClient(sim.kubeconfigText);
      assert.match(sim.url, new RegExp(`^${mode.scheme}://127\\.0\\.0\\.1:\\d+$`));
    });

    after(async () => {
      await sim?.stop();
      if (process.env["SIM_KUBECTL_TRANSCRIPT"]) await writeFile(process.env["SIM_KUBECTL_TRANSCRIPT"], transcript.join("\n"));
    });

    test("kubectl is installed", async () => {
      const r = await kubectl("version", "--client");
      assert.equal(r.code, 0);
      // 1.2x prints "Client Version: v1.32.4", 1.20 "Client Version: version.Info{Major:"1", Minor:"20", ...".
      const m = /Client Version: (?:v1\.(\d+)|version\.Info\{Major:"1", Minor:"(\d+))/.exec(r.stdout);
      assert.ok(m, r.stdout);
      minor = Number(m[1] ?? m[2]);
    });

    test("the kubeconfig's context is the --name given", async () => {
      const r = await kubectl("config", "current-context");
      assert.equal(r.stdout.trim(), "kubectl-sim");
    });

    test("get nodes -o wide shows kubectl's columns with the nodes' real values", async () => {
      const r = await kubectl("get", "nodes", "-o", "wide");
      assert.equal(r.code, 0, r.stderr);
      const [header, ...lines] = rows(r.stdout);
      assert.deepEqual(header, ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"]);
      const nodes = (await api("/api/v1/nodes")).items as any[];
      assert.equal(lines.length, nodes.length);
      for (const cells of lines) {
        const n = nodes.find((x) => x.metadata.name === cells[0])!;
        assert.ok(n, `row for ${cells[0]}`);
        const ready = n.status.conditions.find((c: any) => c.type === "Ready").status === "True";
        assert.equal(cells[1], (ready ? "Ready" : "NotReady") + (n.spec.unschedulable ? ",SchedulingDisabled" : ""));
        assert.equal(cells[2], "node-role.kubernetes.io/control-plane" in n.metadata.labels ? "control-plane" : "worker");
        assert.match(cells[3]!, /^\d+(d|m|h|y)/);
        assert.equal(cells[4], n.status.nodeInfo.kubeletVersion);
        assert.equal(cells[5], n.status.addresses.find((a: any) => a.type === "InternalIP").address);
        assert.equal(cells[6], n.status.addresses.find((a: any) => a.type === "ExternalIP")?.address ?? "<none>");
        assert.equal(cells[7], n.status.nodeInfo.osImage);
        assert.equal(cells[8], n.status.nodeInfo.kernelVersion);
        assert.equal(cells[9], n.status.nodeInfo.containerRuntimeVersion);
        assert.match(cells[9]!, /^(containerd:\/\/1\.7\.\d+|cri-o:\/\/1\.29\.\d+)$/);
      }
      assert.equal(lines.filter((c) => c[2] === "control-plane").length, 3);
    });

    test("describe node shows conditions, capacity, pods, allocated resources, events and the lease", async () => {
      const node = ((await api("/api/v1/nodes")).items as any[]).find((n) => n.metadata.labels["node-pool"] === "general" && !n.spec.unschedulable).metadata.name;
      await kubectl("cordon", node);
      await kubectl("uncordon", node);
      const r = await kubectl("describe", "node", node);
      assert.equal(r.code, 0, r.stderr);
      const out = r.stdout;
      assert.match(out, new RegExp(`^Name:\\s+${node}$`, "m"));
      assert.match(out, /^Roles:\s+worker$/m);
      assert.match(out, new RegExp(`^Lease:\\n  HolderIdentity:  ${node}\\n  AcquireTime:     <unset>\\n  RenewTime:       \\w{3}, `, "m"));
      for (const type of ["NetworkUnavailable", "MemoryPressure", "DiskPressure", "PIDPressure"]) assert.match(out, new RegExp(`^  ${type}\\s+False\\s`, "m"));
      assert.match(out, /^  Ready\s+True\s.*KubeletReady\s+kubelet is posting ready status$/m);
      assert.match(out, /^Capacity:\n  cpu:\s+\d+\n/m);
      assert.match(out, /^Allocatable:\n  cpu:\s+\d+m\n/m);
      const pods = (await api(`/api/v1/pods?fieldSelector=spec.nodeName=${node}`)).items as any[];
      assert.match(out, new RegExp(`^Non-terminated Pods:\\s+\\(${pods.length} in total\\)$`, "m"));
      for (const p of pods) assert.match(out, new RegExp(`^  ${p.metadata.namespace}\\s+${p.metadata.name}\\s`, "m"));
      assert.match(out, /^Allocated resources:\n/m);
      assert.match(out, /^  cpu\s+\d+m? \(\d+%\)\s+\d+m? \(\d+%\)$/m);
      assert.match(out, /^Events:\n  Type\s+Reason\s+Age\s+From\s+Message/m);
      assert.match(out, new RegExp(`Normal\\s+NodeNotSchedulable\\s+.*kubelet\\s+Node ${node} status is now: NodeNotSchedulable`));
      assert.match(out, new RegExp(`Normal\\s+NodeSchedulable\\s+.*kubelet\\s+Node ${node} status is now: NodeSchedulable`));
    });

    test("get pods -A --field-selector spec.nodeName=<n> lists exactly that node's pods", async () => {
      const node = ((await api("/api/v1/nodes")).items as any[]).find((n) => n.metadata.labels["node-pool"] === "general").metadata.name;
      const r = await kubectl("get", "pods", "-A", "--field-selector", `spec.nodeName=${node}`, "-o", "wide");
      assert.equal(r.code, 0, r.stderr);
      const [header, ...lines] = rows(r.stdout);
      assert.deepEqual(header, ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"]);
      const pods = (await api(`/api/v1/pods?fieldSelector=spec.nodeName=${node}`)).items as any[];
      assert.deepEqual(lines.map((c) => `${c[0]}/${c[1]}`).sort(), pods.map((p) => `${p.metadata.namespace}/${p.metadata.name}`).sort());
      assert.ok(lines.every((c) => c[7] === node && c[3] === "Running" && c[2] === "1/1"));
    });

    test("cordon and uncordon change the node's spec and STATUS", async () => {
      const node = ((await api("/api/v1/nodes")).items as any[]).find((n) => n.metadata.labels["node-pool"] === "general" && !n.spec.unschedulable).metadata.name;
      let r = await kubectl("cordon", node);
      assert.equal(r.stdout.trim(), `node/${node} cordoned`);
      let n = await api(`/api/v1/nodes/${node}`);
      assert.equal(n.spec.unschedulable, true);
      assert.ok(n.spec.taints.some((t: any) => t.key === "node.kubernetes.io/unschedulable" && t.effect === "NoSchedule"));
      r = await kubectl("get", "node", node, "--no-headers");
      assert.equal(rows(r.stdout)[0]![1], "Ready,SchedulingDisabled");
      r = await kubectl("cordon", node);
      assert.equal(r.stdout.trim(), `node/${node} already cordoned`);
      r = await kubectl("uncordon", node);
      assert.equal(r.stdout.trim(), `node/${node} uncordoned`);
      n = await api(`/api/v1/nodes/${node}`);
      assert.equal(n.spec.unschedulable, undefined);
      assert.ok(!(n.spec.taints ?? []).some((t: any) => t.key === "node.kubernetes.io/unschedulable"));
    });

    test("drain evicts what it may, ReplicaSets replace those pods on other nodes, DaemonSet pods stay", async () => {
      const nodes = (await api("/api/v1/nodes")).items as any[];
      const pdbPods = ((await api("/api/v1/namespaces/payments/pods?labelSelector=app=ledger")).items as any[]).map((p) => p.spec.nodeName);
      const node = nodes.find((n) => n.metadata.labels["node-pool"] === "general" && !n.spec.unschedulable && !pdbPods.includes(n.metadata.name)).metadata.name;
      const before = (await api(`/api/v1/pods?fieldSelector=spec.nodeName=${node}`)).items as any[];
      const daemon = before.filter((p) => p.metadata.ownerReferences?.[0]?.kind === "DaemonSet");
      const evictable = before.filter((p) => p.metadata.ownerReferences?.[0]?.kind !== "DaemonSet");
      assert.ok(evictable.length > 0 && daemon.length === 3);
      const r = await kubectl("drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--force", "--timeout=60s");
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^node/${node} cordoned$`, "m"));
      assert.match(r.stderr, /(Warning|WARNING): ignoring DaemonSet-managed Pods: /);
      for (const p of evictable) assert.match(r.stdout, new RegExp(`^pod/${p.metadata.name} evicted$`, "m"));
      // kubectl 1.20 closes with "node/<n> evicted", later versions with "drained".
      assert.match(r.stdout, new RegExp(`^node/${node} (drained|evicted)$`, "m"));
      const after = (await api(`/api/v1/pods?fieldSelector=spec.nodeName=${node}`)).items as any[];
      assert.deepEqual(after.map((p) => p.metadata.name).sort(), daemon.map((p) => p.metadata.name).sort());
      // Every ReplicaSet that lost a pod is back to its replicas, all on other nodes.
      const rsNames = new Set(evictable.filter((p) => p.metadata.ownerReferences?.[0]?.kind === "ReplicaSet").map((p) => `${p.metadata.namespace}/${p.metadata.ownerReferences[0].name}`));
      for (const key of rsNames) {
        const [ns, name] = key.split("/");
        const rs = await api(`/apis/apps/v1/namespaces/${ns}/replicasets/${name}`);
        const owned = ((await api(`/api/v1/namespaces/${ns}/pods`)).items as any[]).filter((p) => p.metadata.ownerReferences?.[0]?.uid === rs.metadata.uid);
        assert.equal(owned.length, rs.spec.replicas, `${key} has its replicas`);
        assert.ok(
          owned.every((p) => p.spec.nodeName && p.spec.nodeName !== node),
          `${key} pods are on other nodes`,
        );
      }
      await kubectl("uncordon", node);
    });

    test("create deployment makes a ReplicaSet whose pods are scheduled and run", async () => {
      const r = await kubectl("create", "deployment", "hello", "--image=registry.example/hello:1", "--replicas=3", "-n", "default");
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), "deployment.apps/hello created");
      const pods = await eventually(async () => {
        const found = (await api("/api/v1/namespaces/default/pods?labelSelector=app=hello")).items as any[];
        return found.filter((p) => p.status?.phase === "Running").length >= 3 && found;
      }, "three pods running");
      assert.equal(pods.filter((p) => p.status?.phase === "Running" && p.spec.nodeName).length, 3);
      const rs = (await api("/apis/apps/v1/namespaces/default/replicasets")).items.find((x: any) => x.metadata.ownerReferences?.[0]?.name === "hello");
      assert.ok(pods.every((p) => p.metadata.ownerReferences[0].uid === rs.metadata.uid));
      const ready = await kubectl("get", "deployment", "hello", "-n", "default", "-o", "jsonpath={.status.readyReplicas}");
      assert.equal(ready.stdout, "3");
      await kubectl("delete", "deployment", "hello", "-n", "default");
    });

    test("top node shows usage against allocatable for every Ready node", async () => {
      const r = await kubectl("top", "node");
      assert.equal(r.code, 0, r.stderr);
      const [header, ...lines] = rows(r.stdout);
      assert.deepEqual(header, ["NAME", "CPU(cores)", "CPU%", "MEMORY(bytes)", "MEMORY%"]);
      const nodes = (await api("/api/v1/nodes")).items as any[];
      assert.equal(lines.length, nodes.length);
      for (const c of lines) {
        assert.match(c[1]!, /^\d+m$/);
        assert.match(c[2]!, /^\d+%$/);
        assert.match(c[3]!, /^\d+Mi$/);
        assert.ok(Number(c[2]!.slice(0, -1)) <= 100 && Number(c[2]!.slice(0, -1)) > 0);
      }
    });

    test("patch --subresource=status --type=merge of a condition makes the node NotReady", async () => {
      const node = ((await api("/api/v1/nodes")).items as any[]).find((n) => n.metadata.labels["node-pool"] === "compute")?.metadata.name ?? "general";
      const current = (await api(`/api/v1/nodes/${node}`)).status.conditions as any[];
      const patched = current.map((c) => (c.type === "Ready" ? { ...c, status: "False", reason: "KubeletNotReady", message: "PLEG is not healthy: pleg was last seen active 3m0s ago" } : c));
      const patchStatus = async (conditions: unknown[]): Promise<void> => {
        const body = JSON.stringify({ status: { conditions } });
        if (minor >= 24) {
          const r = await kubectl("patch", "node", node, "--subresource=status", "--type=merge", "-p", body);
          assert.equal(r.code, 0, r.stderr);
          assert.equal(r.stdout.trim(), `node/${node} patched`);
        } else {
          // kubectl before 1.24 has no --subresource: send the same request it would.
          const res = await client.request("PATCH", `/api/v1/nodes/${node}/status`, { headers: { "content-type": "application/merge-patch+json" }, body: JSON.parse(body) });
          assert.equal(res.status, 200);
        }
      };
      await patchStatus(patched);
      const after = await api(`/api/v1/nodes/${node}`);
      const ready = after.status.conditions.find((c: any) => c.type === "Ready");
      assert.equal(ready.status, "False");
      assert.equal(ready.message, "PLEG is not healthy: pleg was last seen active 3m0s ago");
      assert.equal(after.status.conditions.length, 5);
      const g = await kubectl("get", "node", node, "--no-headers");
      assert.equal(rows(g.stdout)[0]![1], "NotReady");
      await patchStatus(current);
      assert.equal(rows((await kubectl("get", "node", node, "--no-headers")).stdout)[0]![1], "Ready");
    });

    test("a drain blocked by a PodDisruptionBudget keeps retrying with kubectl's own message and fails at its timeout", async () => {
      const ledger = (await api("/api/v1/namespaces/payments/pods?labelSelector=app=ledger")).items as any[];
      const node = ledger[0].spec.nodeName;
      const r = await kubectl("drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--force", "--timeout=12s");
      assert.notEqual(r.code, 0);
      const retries =
        r.stderr.match(
          new RegExp(`error when evicting pods/"${ledger[0].metadata.name}" -n "payments" \\(will retry after 5s\\): Cannot evict pod as it would violate the pod's disruption budget\\.`, "g"),
        ) ?? [];
      assert.ok(retries.length >= 2, `retried (saw ${retries.length}):\n${r.stderr}`);
      assert.match(r.stderr, /global timeout reached: 12s/);
      const still = await api(`/api/v1/namespaces/payments/pods/${ledger[0].metadata.name}`);
      assert.equal(still.metadata.deletionTimestamp, undefined);
      await kubectl("uncordon", node);
    });
  });

describe("the sim command", () => {
  test("prints help and rejects unknown flags", async () => {
    const run = (args: string[]) =>
      new Promise<Run>((resolve) => execFile(process.execPath, [SIM_MAIN, ...args], (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, stdout, stderr })));
    const help = await run(["--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: node-inventory sim \[options\]/);
    assert.match(help.stdout, /--kubeconfig-out FILE/);
    assert.match(help.stdout, /--rbac {16}enforce bearer-token authentication \(401\) and RBAC/);
    const bad = await run(["--bogus"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /Unknown option '--bogus'/);
  });
});
