import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { ready, startTestApp } from "../support/app.js";
import { deadClusterKubeconfig, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";
import { bearer, TOKENS, tokensFile } from "../auth/support.js";

describe("anonymous /readyz says ready or not in general terms; details need a caller (issue 13, finding 12)", () => {
  let app: App;
  let url: string;
  let cluster: SimWithKubeconfig;
  const file = tokensFile();
  const dead = deadClusterKubeconfig();
  before(async () => {
    cluster = await startSimWithKubeconfig({ nodes: 2, seed: 12, clockSpeed: 0 });
    ({ app, url } = await startTestApp({ auth: { tokensFile: file.path }, clusters: { kubeconfigs: [cluster.kubeconfigPath, dead], contexts: [] } }));
    await ready(url);
  });
  after(async () => (await app.stop(), await cluster.stop(), file.remove()));

  test("an anonymous probe gets no context names, counts or errors", async () => {
    const response = await fetch(`${url}/readyz`);
    assert.equal(response.status, 200);
    const text = await response.text();
    assert.deepEqual(JSON.parse(text), { status: "ready", checks: { database: { ok: true }, clusters: { ok: true }, history: { ok: true } } });
    for (const internal of ["sim", "dead", "buffered", "unreachable"]) assert.ok(!text.includes(internal), `${internal} in ${text}`);
  });

  test("a bad token is anonymous too; a viewer sees each cluster and what is wrong with it", async () => {
    assert.deepEqual(Object.keys(((await (await fetch(`${url}/readyz`, { headers: bearer("not-a-token") })).json()) as any).checks), ["database", "clusters", "history"]);
    const detailed = (await (await fetch(`${url}/readyz`, { headers: bearer(TOKENS.viewer) })).json()) as any;
    assert.deepEqual(Object.keys(detailed.checks).sort(), ["cluster:dead", "cluster:sim", "database", "history"]);
    assert.match(detailed.checks["cluster:dead"].detail, /^unreachable/);
  });
});
