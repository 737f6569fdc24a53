import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { graphql, startTestApp } from "../support/app.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const DETAILS = `name providerID podCIDRs volumesAttached { name devicePath } volumesInUse images { names sizeBytes }`;

describe("node details served from the cache, as kubectl reads the node", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 7, seed: 15, clockSpeed: 0 });
    ({ app, url } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] } }));
    await eventually(async () => (await graphql(url, "{ clusters { synced } }")).body.data?.clusters[0].synced, "sync", 20_000);
  });
  after(async () => {
    await app?.stop();
    await sim?.stop();
  });

  test("providerID, podCIDRs, volumesAttached, volumesInUse and images (largest first) of every node are what `kubectl get nodes -o json` shows", async () => {
    const fromKubectl = JSON.parse(await sim.kubectl("get", "nodes", "-o", "json")).items as any[];
    const { body } = await graphql(url, `{ nodes { edges { node { ${DETAILS} } } } }`);
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    const served = new Map(body.data.nodes.edges.map((e: any) => [e.node.name, e.node]));
    assert.equal(served.size, fromKubectl.length);
    let withVolumes = 0;
    for (const o of fromKubectl) {
      if (o.status.volumesAttached?.length) withVolumes++;
      assert.deepEqual(served.get(o.metadata.name), {
        name: o.metadata.name,
        providerID: o.spec.providerID,
        podCIDRs: o.spec.podCIDRs,
        volumesAttached: (o.status.volumesAttached ?? []).map((v: any) => ({ name: v.name, devicePath: v.devicePath || null })),
        volumesInUse: o.status.volumesInUse ?? [],
        images: [...o.status.images].sort((a: any, b: any) => b.sizeBytes - a.sizeBytes).map((i: any) => ({ names: i.names, sizeBytes: i.sizeBytes })),
      });
    }
    assert.ok(withVolumes > 0, "some simulated nodes have a volume attached");
    assert.match(fromKubectl[0].spec.providerID, /^aws:\/\/\/eu-west-1[abc]\/i-0[0-9a-f]{16}$/);
  });

  test("images(first) gives the largest; a negative first is BAD_USER_INPUT", async () => {
    const name = (await graphql(url, "{ nodes(first: 1) { edges { node { name } } } }")).body.data.nodes.edges[0].node.name;
    const { body } = await graphql(url, `query($n: String!) { node(name: $n) { images(first: 1) { names sizeBytes } all: images { sizeBytes } } }`, { n: name });
    assert.equal(body.errors, undefined);
    const sizes = body.data.node.all.map((i: any) => i.sizeBytes);
    assert.deepEqual(
      body.data.node.images.map((i: any) => i.sizeBytes),
      [Math.max(...sizes)],
    );
    const bad = (await graphql(url, `query($n: String!) { node(name: $n) { images(first: -1) { names } } }`, { n: name })).body;
    assert.equal(bad.errors?.[0]?.extensions?.code, "BAD_USER_INPUT");
    assert.match(bad.errors[0].message, /first: must be zero or more, got -1/);
  });
});
