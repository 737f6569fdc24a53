import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { R } from "../../src/sim/index.js";
import { graphql, startTestApp } from "../support/app.js";
import { deadClusterKubeconfig, eventually, startSimWithKubeconfig } from "../support/sim-cluster.js";

const unschedulable = async (url: string, name: string) => (await graphql(url, `query($n: String!) { node(name: $n) { unschedulable } }`, { n: name })).body.data?.node?.unschedulable;

describe("the watch caches recover from faults", () => {
  test("when every connection to the cluster is cut, the cache reconnects and sees later changes", async () => {
    const cluster = await startSimWithKubeconfig({ nodes: 4, seed: 3 });
    const { app, url } = await startTestApp({ clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] } }, { clusterTuning: { backoffInitialMs: 50 } });
    try {
      await eventually(async () => (await graphql(url, "{ clusters { synced } }")).body.data?.clusters[0].synced, "sync");
      const watchesBefore = cluster.sim.requestLog().filter((r) => r.verb === "watch").length;
      cluster.sim.dropConnections();
      const name = cluster.sim.cluster.nodeNames()[0]!;
      cluster.sim.cluster.update(R.nodes, name, (copy: any) => void (copy.spec.unschedulable = true));
      await eventually(() => unschedulable(url, name), "the change made after the cut is seen", 5_000);
      await eventually(async () => (await graphql(url, "{ clusters { connected } }")).body.data?.clusters[0].connected, "connected again");
      const watchesAfter = cluster.sim.requestLog().filter((r) => r.verb === "watch").length;
      assert.ok(watchesAfter > watchesBefore, "new watches were opened");
    } finally {
      await app.stop();
      await cluster.stop();
    }
  });

  test("a watch resumed beyond the server's history gets 410 and the cache relists", async () => {
    const cluster = await startSimWithKubeconfig({ nodes: 4, seed: 4, historySize: 5 });
    const { app, url, logs } = await startTestApp({ clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] } });
    try {
      await eventually(async () => (await graphql(url, "{ clusters { synced } }")).body.data?.clusters[0].synced, "sync");
      // The whole state again: by watch-list (the simulator speaks it) or by LIST.
      const nodeLists = () => logs.lines.filter((l) => l.resource === "nodes" && (l.msg === "listed" || l.msg === "streamed the initial state (watch-list)")).length;
      const listsBefore = nodeLists();
      // Cut the watch, then make more changes than the server remembers, before it can resume.
      cluster.sim.dropConnections();
      const names = cluster.sim.cluster.nodeNames();
      for (let i = 0; i < 12; i++) {
        cluster.sim.cluster.update(R.nodes, names[i % names.length]!, (copy: any) => void (copy.metadata.labels["churn"] = String(i)));
      }
      const last = names[11 % names.length]!;
      await eventually(
        async () => {
          const { body } = await graphql(url, `query($n: String!) { node(name: $n) { label(key: "churn") } }`, { n: last });
          return body.data?.node?.label === "11";
        },
        "the last change is seen",
        5_000,
      );
      assert.ok(nodeLists() > listsBefore, "the nodes were listed again after 410 Gone");
    } finally {
      await app.stop();
      await cluster.stop();
    }
  });

  test("a watch that goes silent is restarted, and nothing is missed", async () => {
    const cluster = await startSimWithKubeconfig({ nodes: 3, seed: 5, bookmarkIntervalMs: 600_000 });
    const { app, url, logs } = await startTestApp({ clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] } }, { clusterTuning: { stallTimeoutMs: 300 } });
    try {
      await eventually(async () => (await graphql(url, "{ clusters { synced } }")).body.data?.clusters[0].synced, "sync");
      const restarts = () => logs.lines.filter((l) => l.resource === "nodes" && /watch silent for too long/.test(String(l.msg))).length;
      await eventually(() => restarts() >= 2, "the silent watch was replaced twice", 3_000);
      const name = cluster.sim.cluster.nodeNames()[1]!;
      cluster.sim.cluster.update(R.nodes, name, (copy: any) => void (copy.spec.unschedulable = true));
      await eventually(() => unschedulable(url, name), "a change after the restarts is seen", 2_000);
    } finally {
      await app.stop();
      await cluster.stop();
    }
  });
});

describe("several clusters, one unreachable", () => {
  test("the reachable clusters are served; the unreachable one is reported and UNAVAILABLE", async () => {
    const east = await startSimWithKubeconfig({ nodes: 3, seed: 11, name: "east" });
    const west = await startSimWithKubeconfig({ nodes: 5, seed: 12, name: "west" });
    const dead = deadClusterKubeconfig();
    const { app, url } = await startTestApp({ clusters: { kubeconfigs: [east.kubeconfigPath, west.kubeconfigPath, dead], contexts: [] } });
    try {
      const clusters = await eventually(async () => {
        const { body } = await graphql(url, "{ clusters { name connected synced nodeCount lastError } }");
        const list = body.data?.clusters as any[];
        return list?.every((c) => c.synced || c.lastError) ? list : undefined;
      }, "every cluster synced or failed");
      assert.deepEqual(
        clusters.map((c: any) => [c.name, c.synced, c.nodeCount]),
        [
          ["east", true, 3],
          ["west", true, 5],
          ["dead", false, 0],
        ],
      );
      assert.match(clusters[2].lastError, /ECONNREFUSED/);

      const all = await graphql(url, "{ nodes { totalCount edges { node { cluster } } } }");
      assert.equal(all.body.data.nodes.totalCount, 8);
      const dead_ = await graphql(url, `{ nodes(cluster: "dead") { totalCount } }`);
      assert.equal(dead_.body.errors![0].extensions.code, "UNAVAILABLE");
      assert.match(dead_.body.errors![0].message, /cluster "dead" cannot be reached/);
      const ambiguous = await graphql(url, `{ node(name: "x") { name } }`);
      assert.equal(ambiguous.body.errors![0].extensions.code, "BAD_USER_INPUT");
      const westNode = west.sim.cluster.nodeNames()[0]!;
      const one = await graphql(url, `query($n: String!) { node(cluster: "west", name: $n) { id } }`, { n: westNode });
      assert.equal(one.body.data.node.id, `west/${westNode}`);

      const ready = await fetch(`${url}/readyz`);
      assert.equal(ready.status, 200, "an unreachable cluster does not hold readiness back");
      const body = (await ready.json()) as any;
      assert.match(body.checks["cluster:dead"].detail, /^unreachable/);
      // Probes are anonymous: the error's text (here the address refused) is not theirs to read.
      const lastError = (await graphql(url, `{ clusters { name lastError } }`)).body.data.clusters.find((c: any) => c.name === "dead").lastError;
      assert.ok(lastError, "the cluster's error is in the API");
      assert.ok(!JSON.stringify(body).includes(lastError), "and not in /readyz");
    } finally {
      await app.stop();
      await east.stop();
      await west.stop();
    }
  });
});
