import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { PACKAGE_ROOT } from "../../src/package-info.js";
import { graphql, startTestApp } from "../support/app.js";
import { launchBrowser, type TestBrowser } from "../support/browser.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const ARTIFACTS = join(PACKAGE_ROOT, "test-artifacts");

describe("the node page of a NotReady node", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;
  let browser: TestBrowser;

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 4, seed: 37, clockSpeed: 0 });
    ({ app, url } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] } }));
    await eventually(async () => (await graphql(url, "{ clusters { synced } }")).body.data?.clusters[0].synced, "sync", 20_000);
    browser = await launchBrowser({ width: 1280, height: 1000 });
  });
  after(async () => {
    await browser?.close();
    await app?.stop();
    await sim?.stop();
  });

  test("shows the eviction countdown ticking, the kubelet's arithmetic and its log", async () => {
    const node = sim.sim.cluster.nodeNames().find((n) => !n.startsWith("control-plane"))!;
    // The taint's timeAdded is simulated time, which the frozen clock keeps at "now".
    sim.sim.cluster.setNodeCondition(node, "Ready", "False", "KubeletNotReady");
    await eventually(async () => (await graphql(url, `query($n: String!) { node(name: $n) { evictionOutlook { taintedSince } } }`, { n: node })).body.data?.node.evictionOutlook, "the outlook", 10_000);
    const { page } = browser;
    await page.goto(`${url}/ui/nodes/sim/${node}`);
    const timer = page.locator('[data-eviction-countdown="running"] [role="timer"]');
    await timer.waitFor({ timeout: 20_000 });
    const first = await timer.textContent();
    assert.match(first!, /^Next eviction in \d+ ?m? ?\d* ?s?/);
    await page.waitForFunction((text) => document.querySelector('[role="timer"]')?.textContent !== text, first, { timeout: 10_000 });
    assert.equal(await page.locator("table.arithmetic tr.mismatch").count(), 0, "the simulator's allocatable adds up");
    await page.locator("pre.node-log").waitFor({ timeout: 20_000 });
    assert.match((await page.locator("pre.node-log").textContent())!, /kubelet\[\d+\]/);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "node-eviction-countdown.png"), fullPage: true });
    // The fleet marks its tile, and only its.
    await page.goto(`${url}/ui/`);
    await page.locator(`[data-node="sim/${node}"]`).waitFor({ timeout: 20_000 });
    const marked = await page.$$eval('[data-eviction-countdown="true"]', (tiles) => tiles.map((t) => (t as HTMLElement).dataset.node));
    assert.deepEqual(marked, [`sim/${node}`]);
  });
});
