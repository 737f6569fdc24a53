import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, test } from "node:test";
import { fromKubeconfigs } from "../../src/cluster/cluster-sources.js";
import { KubeClient } from "../../src/cluster/kube-client.js";
import { LeaseElector, leaseRetryBackoff } from "../../src/cluster/lease-elector.js";
import { createLogger } from "../../src/log/logger.js";
import { graphql, startTestApp } from "../support/app.js";
import { BACKENDS } from "../support/databases.js";
import { deadClusterKubeconfig, eventually, historyLeaseHolders, startSimWithKubeconfig } from "../support/sim-cluster.js";

const LEASES = "{ service { history { leases { cluster lease holder held } } } }";
const fast = { leaseDurationMs: 2_000, retryPeriodMs: 200 };

describe("history Leases belong to installations", () => {
  test("two installations with their own databases each record the same flip of one node", async () => {
    const cluster = await startSimWithKubeconfig({ nodes: 2, seed: 61, clockSpeed: 0 });
    const config = { clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] } };
    // Each in-memory PGlite is a database of its own: two installations.
    const first = await startTestApp(config, { recorderTuning: { ...fast, identity: "first" } });
    const second = await startTestApp(config, { recorderTuning: { ...fast, identity: "second" } });
    try {
      await eventually(() => [...historyLeaseHolders(cluster).values()].sort().join() === "first,second", "each installation holds a Lease of its own", 10_000);
      for (const { url } of [first, second]) {
        const { body } = await graphql(url, LEASES);
        assert.equal(body.data.service.history.leases[0].held, true);
      }
      const [node] = cluster.sim.cluster.nodeNames();
      cluster.sim.cluster.setNodeCondition(node!, "Ready", "False", "KubeletNotReady", "test flip");
      const flip = `{ conditionTransitions(filter: { cluster: "sim", node: "${node}", type: "Ready", to: FALSE }) { edges { node { from to reason } } } }`;
      for (const { url } of [first, second]) {
        const edges = await eventually(
          async () => {
            const found = (await graphql(url, flip)).body.data.conditionTransitions.edges;
            return found.length ? found : undefined;
          },
          "the flip recorded",
          10_000,
        );
        assert.deepEqual(edges, [{ node: { from: "TRUE", to: "FALSE", reason: "KubeletNotReady" } }]);
      }
    } finally {
      await first.app.stop();
      await second.app.stop();
      await cluster.stop();
    }
  });

  test("replicas sharing one database share one Lease; the one standing by says who holds it, in the log and the API", async () => {
    const cluster = await startSimWithKubeconfig({ nodes: 1, seed: 62, clockSpeed: 0 });
    const fresh = await BACKENDS.find((b) => b.name === "postgres")!.create();
    const config = { clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] }, database: fresh.config };
    const leader = await startTestApp(config, { recorderTuning: { leaseDurationMs: 30_000, retryPeriodMs: 200, identity: "replica-a" } });
    try {
      await eventually(() => [...historyLeaseHolders(cluster).values()].join() === "replica-a", "replica-a leads");
      const standby = await startTestApp(config, { recorderTuning: { leaseDurationMs: 30_000, retryPeriodMs: 200, identity: "replica-b" } });
      try {
        const [lease] = [...historyLeaseHolders(cluster).keys()];
        const leases = await eventually(async () => {
          const found = (await graphql(standby.url, LEASES)).body.data.service.history.leases;
          return found[0]?.holder ? found : undefined;
        }, "the standby read the Lease");
        assert.deepEqual(leases, [{ cluster: "sim", lease: `kube-system/${lease}`, holder: "replica-a", held: false }]);
        const said = standby.logs.lines.filter((line) => String(line.msg).startsWith("standing by"));
        assert.deepEqual(
          said.map((line) => [line.msg, line.holder, line.lease]),
          [["standing by: the Lease is held by replica-a", "replica-a", `kube-system/${lease}`]],
        );
        assert.equal(historyLeaseHolders(cluster).size, 1, "one Lease for the installation");
      } finally {
        await standby.app.stop();
      }
    } finally {
      await leader.app.stop();
      await cluster.stop();
      await fresh.drop();
    }
  });
});

describe("an unreachable cluster's Lease checks", () => {
  test("back off, doubling from the retry period, and are logged once per step", async () => {
    const lines: Record<string, any>[] = [];
    const sink = new Writable({
      write: (chunk, _e, done) => (
        String(chunk)
          .split("\n")
          .filter(Boolean)
          .forEach((l) => lines.push(JSON.parse(l))),
        done()
      ),
    });
    const [dead] = fromKubeconfigs([deadClusterKubeconfig()], []);
    const elector = new LeaseElector({
      client: new KubeClient(dead!.kubeConfig),
      logger: createLogger("info", sink),
      namespace: "kube-system",
      name: "node-inventory-history-test",
      retryPeriodMs: 20,
      onStartedLeading: () => {},
      onStoppedLeading: () => {},
    });
    elector.start();
    const failed = () => lines.filter((line) => line.msg === "lease check failed");
    await eventually(() => failed().length >= 5, "five failed checks", 10_000);
    await elector.stop();
    assert.deepEqual(
      failed()
        .slice(0, 5)
        .map((line) => [line.failures, line.retryInMs]),
      [
        [1, 20],
        [2, 40],
        [3, 80],
        [4, 160],
        [5, 320],
      ],
    );
  });

  test("the backoff stops growing at 30 s, or at the retry period if that is longer", () => {
    assert.equal(leaseRetryBackoff(3_000, 1), 3_000);
    assert.equal(leaseRetryBackoff(3_000, 4), 24_000);
    assert.equal(leaseRetryBackoff(3_000, 5), 30_000);
    assert.equal(leaseRetryBackoff(3_000, 500), 30_000);
    assert.equal(leaseRetryBackoff(60_000, 3), 60_000);
  });
});
