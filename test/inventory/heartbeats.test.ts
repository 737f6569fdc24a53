import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { graphql, startTestApp } from "../support/app.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const LEASES = "coordination.k8s.io/leases";

describe("heartbeats from the kubelets' Leases in kube-node-lease", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;
  let names: string[];

  const renewTime = (node: string) => (sim.sim.cluster.get(LEASES, node, "kube-node-lease") as any).spec.renewTime as string;
  const heartbeats = async (filter?: object) => {
    const { body } = await graphql(url, `query($f: NodeFilter) { nodes(filter: $f) { edges { node { name ready heartbeatTime heartbeatAgeSeconds } } } }`, { f: filter ?? null });
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    return new Map<string, { ready: string; heartbeatTime: string; heartbeatAgeSeconds: number }>(body.data.nodes.edges.map((e: any) => [e.node.name, e.node]));
  };
  /** Once the cache holds every node's current Lease as the simulator has it. */
  const caughtUp = () =>
    eventually(
      async () => {
        const served = await heartbeats();
        return names.every((n) => served.get(n)?.heartbeatTime === new Date(renewTime(n)).toISOString()) && served;
      },
      "the cache holds every Lease's renewTime",
      10_000,
    );

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 5, seed: 21, clockSpeed: 0 });
    names = sim.sim.cluster.nodeNames();
    ({ app, url } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] } }));
    await eventually(async () => (await graphql(url, "{ clusters { synced } }")).body.data?.clusters[0].synced, "sync", 20_000);
  });
  after(async () => {
    await app?.stop();
    await sim?.stop();
  });

  test("heartbeatTime is each node's Lease renewTime as kubectl shows it", async () => {
    const leases = JSON.parse(await sim.kubectl("get", "leases", "-n", "kube-node-lease", "-o", "json")).items as any[];
    assert.equal(leases.length, names.length);
    const served = await caughtUp();
    for (const lease of leases) assert.equal(served.get(lease.metadata.name)?.heartbeatTime, new Date(lease.spec.renewTime).toISOString(), lease.metadata.name);
  });

  test("a node whose kubelet stops renewing shows its heartbeat age growing, the others' staying fresh", async () => {
    const silent = names.find((n) => !n.startsWith("control-plane"))!;
    const cluster = sim.sim.cluster;
    cluster.stopKubelet(silent);
    const last = new Date(renewTime(silent)).toISOString();
    cluster.advance(10_000);
    const first = await caughtUp();
    cluster.advance(10_000);
    const second = await caughtUp();
    assert.equal(second.get(silent)!.heartbeatTime, last, "its Lease is not renewed");
    const grown = second.get(silent)!.heartbeatAgeSeconds - first.get(silent)!.heartbeatAgeSeconds;
    // The cluster's clock is estimated from the latest renewals, which arrive a little late on a
    // busy machine: the estimate may move by a fraction of a second between two reads.
    assert.ok(grown > 9 && grown < 11, `its age grew by ${grown} s over 10 simulated seconds`);
    assert.ok(second.get(silent)!.heartbeatAgeSeconds >= 19, `age ${second.get(silent)!.heartbeatAgeSeconds} s after 20 simulated seconds`);
    for (const n of names.filter((n) => n !== silent)) {
      assert.ok(second.get(n)!.heartbeatAgeSeconds < second.get(silent)!.heartbeatAgeSeconds - 9, `${n} renewed: age ${second.get(n)!.heartbeatAgeSeconds} s`);
    }
    // Past the grace period the node controller marks it Unknown: overdue, but no longer Ready.
    cluster.advance(30_000);
    await eventually(async () => (await heartbeats()).get(silent)!.ready === "UNKNOWN", "the node goes Unknown", 10_000);
    const stale = await heartbeats({ staleHeartbeat: true });
    assert.equal(stale.has(silent), false, "a node already Unknown is not 'stale while Ready'");
  });

  test("staleHeartbeat finds a Ready node whose Lease is older than 40 s, and only it", async () => {
    const overdue = names.filter((n) => !sim.sim.cluster.stoppedKubelets.has(n)).at(-1)!;
    const twoMinutesAgo = new Date(Date.parse(renewTime(names.find((n) => n !== overdue && !sim.sim.cluster.stoppedKubelets.has(n))!)) - 120_000);
    const micro = twoMinutesAgo.toISOString().replace("Z", "000Z");
    await sim.kubectl("patch", "lease", overdue, "-n", "kube-node-lease", "--type", "merge", "-p", JSON.stringify({ spec: { renewTime: micro } }));
    await eventually(async () => ((await heartbeats()).get(overdue)?.heartbeatAgeSeconds ?? 0) > 100, "the overdue Lease is seen", 10_000);
    const stale = await heartbeats({ staleHeartbeat: true });
    assert.deepEqual([...stale.keys()], [overdue]);
    assert.equal(stale.get(overdue)!.ready, "TRUE");
    const report = (await graphql(url, "{ capacityReport(filter: { staleHeartbeat: true }) { total { nodeCount } } }")).body;
    assert.equal(report.data?.capacityReport.total.nodeCount, 1, "capacityReport takes the same filter");
    const fresh = await heartbeats({ staleHeartbeat: false });
    assert.deepEqual([...fresh.keys()].sort(), names.filter((n) => n !== overdue).sort());
  });
});
