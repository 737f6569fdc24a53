import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { R } from "../../src/sim/index.js";
import { graphql, startTestApp } from "../support/app.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

/**
 * The default order across clusters (by name, then cluster ascending in both directions) is
 * kept between queries while no node comes or goes: these check it follows every node that
 * does, in each direction.
 */
describe("nodes of several clusters in the default order", () => {
  let east: SimWithKubeconfig;
  let west: SimWithKubeconfig;
  let app: App;
  let url: string;

  before(async () => {
    // The same seed: the same node names in both, so every name is a tie broken by cluster.
    east = await startSimWithKubeconfig({ nodes: 6, seed: 4, clockSpeed: 0, name: "east" });
    west = await startSimWithKubeconfig({ nodes: 6, seed: 4, clockSpeed: 0, name: "west" });
    ({ app, url } = await startTestApp({ clusters: { kubeconfigs: [west.kubeconfigPath, east.kubeconfigPath], contexts: [] } }));
    await eventually(async () => (await graphql(url, "{ clusters { synced } }")).body.data?.clusters.every((c: any) => c.synced), "sync");
  });
  after(async () => {
    await app.stop();
    await east.stop();
    await west.stop();
  });

  test("every cluster has an id of its own, the same from query to query and unlike any node's", async () => {
    const query = "{ clusters { id name } nodes(first: 100) { edges { node { id } } } }";
    const { body } = await graphql(url, query);
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    const clusterIds = body.data.clusters.map((c: { id: string }) => c.id);
    assert.deepEqual(
      body.data.clusters.map((c: { id: string; name: string }) => Buffer.from(c.id, "base64url").toString()),
      ["Cluster:west", "Cluster:east"],
    );
    const nodeIds = body.data.nodes.edges.map((e: { node: { id: string } }) => e.node.id);
    assert.equal(new Set([...clusterIds, ...nodeIds]).size, 2 + 12);
    assert.deepEqual(
      (await graphql(url, query)).body.data.clusters.map((c: { id: string }) => c.id),
      clusterIds,
    );
  });

  /** "cluster/name" of every node the service lists, in its order. */
  const listed = async (direction: "ASC" | "DESC", first = 100) => {
    const { body } = await graphql(url, `query($d: OrderDirection) { nodes(first: ${first}, orderBy: { field: NAME, direction: $d }) { totalCount edges { node { cluster name } } } }`, {
      d: direction,
    });
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    return (body.data.nodes.edges as { node: { cluster: string; name: string } }[]).map(({ node }) => `${node.cluster}/${node.name}`);
  };

  /** What the simulators hold, ordered by name (code units) in `direction`, then cluster ascending. */
  const expected = (direction: "ASC" | "DESC") => {
    const all = [east, west].flatMap((sim) => sim.sim.cluster.nodeNames().map((name) => ({ cluster: sim.sim.name, name })));
    const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    all.sort((a, b) => (direction === "ASC" ? byCodeUnit(a.name, b.name) : byCodeUnit(b.name, a.name)) || byCodeUnit(a.cluster, b.cluster));
    return all.map(({ cluster, name }) => `${cluster}/${name}`);
  };

  test("by name, ties by cluster ascending, in both directions; a page is the order's first nodes", async () => {
    const asc = await listed("ASC");
    assert.equal(asc.length, 12);
    assert.deepEqual(asc, expected("ASC"));
    assert.equal(asc[0]!.split("/")[1], asc[1]!.split("/")[1], "a tie");
    assert.deepEqual(asc.slice(0, 2), ["east/" + asc[0]!.split("/")[1], "west/" + asc[0]!.split("/")[1]]);
    assert.deepEqual(await listed("DESC"), expected("DESC"));
    assert.deepEqual(await listed("ASC", 5), expected("ASC").slice(0, 5));
  });

  test("a node added to one cluster and one removed from the other are in the next answers, in order", async () => {
    await listed("ASC");
    await listed("DESC");
    const added = east.sim.cluster.addNode({ pool: "general", zone: "a", name: "aaa-first" }).metadata.name;
    const removed = west.sim.cluster.nodeNames().at(-1)!;
    west.sim.cluster.store.remove(R.nodes, removed);
    await eventually(async () => (await listed("ASC")).includes(`east/${added}`) && !(await listed("ASC")).includes(`west/${removed}`), "the cache saw both");
    assert.deepEqual(await listed("ASC"), expected("ASC"));
    assert.equal((await listed("ASC"))[0], `east/${added}`);
    assert.deepEqual(await listed("DESC"), expected("DESC"));
    assert.equal((await listed("DESC")).at(-1), `east/${added}`);
  });
});
