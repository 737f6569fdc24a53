import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Page } from "playwright-core";
import { PACKAGE_ROOT } from "../../src/package-info.js";
import { launchBrowser, type TestBrowser } from "../support/browser.js";
import { programApi, startProgram, type RunningProgram } from "../support/program.js";
import { startRelayedSim, type RelayedSim } from "../support/tcp-proxy.js";

const ARTIFACTS = join(PACKAGE_ROOT, "test-artifacts");
const OPERATOR = "operator-token-for-the-fleet-truth-test";
const WAIT_SCALE = Math.max(1, Number(process.env.TEST_WAIT_SCALE ?? 4) || 4);
/** A cluster's watch fails at once when its apiserver is gone; the page is told after the feed's settling second. */
const MARKED_WITHIN_MS = 10_000 * WAIT_SCALE;
/** Back: the reflector retries with a backoff capped at 30 s. */
const UNMARKED_WITHIN_MS = 45_000 * WAIT_SCALE;

/** The summary line's hooks, and its text. */
async function summary(page: Page) {
  return page.locator("[data-summary]").evaluate((p) => ({
    nodes: Number(p.getAttribute("data-nodes")),
    ready: Number(p.getAttribute("data-ready")),
    notReady: Number(p.getAttribute("data-notready")),
    unknown: Number(p.getAttribute("data-unknown")),
    cordoned: Number(p.getAttribute("data-cordoned")),
    draining: Number(p.getAttribute("data-draining")),
    text: p.textContent ?? "",
  }));
}

const summaryText = (s: Awaited<ReturnType<typeof summary>>) =>
  `${s.nodes} nodes shown: ${s.ready} Ready, ${s.notReady} NotReady, ${s.unknown} Unknown; ${s.cordoned} cordoned, ${s.draining} draining`;

/** What the tiles say: counted as the summary counts them. */
const tileCounts = (page: Page) =>
  page.$$eval("a.tile[data-node]", (tiles) => ({
    nodes: tiles.length,
    ready: tiles.filter((t) => t.getAttribute("data-ready") === "true").length,
    notReady: tiles.filter((t) => t.getAttribute("data-ready") === "false").length,
    unknown: tiles.filter((t) => t.getAttribute("data-ready") === "unknown").length,
    cordoned: tiles.filter((t) => t.getAttribute("data-cordoned") === "true").length,
    draining: tiles.filter((t) => t.getAttribute("data-draining") === "true").length,
  }));

describe("the wallboard says what it knows and what it does not, in a real browser", () => {
  let east: RelayedSim;
  let west: RelayedSim;
  let program: RunningProgram;
  let dir: string;
  let browser: TestBrowser;

  const api = programApi(() => program, OPERATOR);

  /** A fresh page on the fleet, signed in, grouped as given (the address holds the grouping). */
  async function fleet(query = ""): Promise<Page> {
    const page = browser.page;
    await page.goto(`${program.url}/ui/${query}`);
    if (await page.getByLabel("Token").count()) {
      await page.getByLabel("Token").fill(OPERATOR);
      await page.getByRole("button", { name: "Sign in" }).click();
    }
    await page.locator('.totals[data-loaded="true"]').waitFor({ timeout: 60_000 });
    return page;
  }

  before(async () => {
    // Seed 1's twelve nodes are the demo cluster's (README); the clock runs 30 times faster so
    // evicted pods finish their grace periods within the test.
    east = await startRelayedSim({ nodes: 12, seed: 1, clockSpeed: 30, name: "east" });
    west = await startRelayedSim({ nodes: 8, seed: 2, clockSpeed: 30, name: "west" });
    dir = mkdtempSync(join(tmpdir(), "ni-fleet-truth-"));
    const tokens = join(dir, "tokens.json");
    writeFileSync(tokens, JSON.stringify([{ subject: "oncall", role: "operator", token: OPERATOR }]));
    program = await startProgram(["--port", "0", "--data-dir", "memory", "--kubeconfig", `${east.kubeconfigPath}:${west.kubeconfigPath}`, "--auth-tokens-file", tokens]);
    browser = await launchBrowser({ width: 1280, height: 900 });
    mkdirSync(ARTIFACTS, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await program?.terminate();
    await east?.stop();
    await west?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("a cluster whose apiserver stops is marked stale on its group and every tile, with since when, and unmarked when it is back", async () => {
    const page = await fleet("?group=CLUSTER,NODE_POOL");
    assert.equal(await page.locator('a.tile[data-node][data-stale="true"], .group-header[data-stale="true"]').count(), 0);
    const cut = Date.now();
    await west.relay.pause();
    try {
      await page.locator('h2.group-header[data-group="west"][data-stale="true"]').waitFor({ timeout: MARKED_WITHIN_MS });
      const markedMs = Date.now() - cut;
      const since = (await api(`{ clusters { name disconnectedSince } }`)).clusters.find((c: { name: string }) => c.name === "west").disconnectedSince;
      assert.ok(since, "the API says since when");
      const marks = await page.$$eval("a.tile[data-node]", (tiles) => tiles.map((t) => [t.getAttribute("data-node")!.split("/")[0], t.getAttribute("data-stale")]));
      assert.deepEqual([...new Set(marks.filter(([c]) => c === "west").map(([, s]) => s))], ["true"]);
      assert.deepEqual([...new Set(marks.filter(([c]) => c === "east").map(([, s]) => s))], ["false"]);
      assert.equal(marks.filter(([c]) => c === "west").length, 8);
      // Its pools are stale too; the other cluster's groups are not.
      assert.deepEqual(await page.$$eval('.group-header[data-stale="true"]', (hs) => [...new Set(hs.map((h) => h.getAttribute("data-group")!.split("/")[0]))]), ["west"]);
      assert.equal(await page.locator('h2.group-header[data-group="east"]').getAttribute("data-stale"), "false");
      const note = (await page.locator('h2.group-header[data-group="west"] .stale-note').textContent())!;
      const clock = new Date(since).toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
      assert.match(note, new RegExp(`^⚠ last known state: cluster west not live since ${clock}`));
      assert.match((await page.locator("[data-stale-clusters]").textContent())!, new RegExp(`^Cluster west is not live since ${clock} \\(.+\\): its nodes show their last known state\\.$`));
      assert.match((await page.locator('a.tile[data-node^="west/"]').first().getAttribute("aria-label"))!, new RegExp(`; last known, cluster not live since ${clock}$`));
      await page.screenshot({ path: join(ARTIFACTS, "fleet-cluster-down.png"), fullPage: true });
      console.log(`# west marked stale ${markedMs} ms after its apiserver stopped`);
    } finally {
      await west.relay.resume();
    }
    const back = Date.now();
    await page.waitForFunction(() => document.querySelectorAll('a.tile[data-node][data-stale="true"], .group-header[data-stale="true"]').length === 0, undefined, { timeout: UNMARKED_WITHIN_MS });
    console.log(`# west unmarked ${Date.now() - back} ms after its apiserver was back`);
    assert.equal(await page.locator("[data-stale-clusters]").count(), 0);
  });

  test("the summary line follows cordons and readiness, its hooks matching its text and the tiles", async () => {
    const page = await fleet();
    const first = await summary(page);
    assert.equal(first.text, summaryText(first));
    const { text: _, ...counts } = first;
    assert.deepEqual(counts, await tileCounts(page));
    const nodes = east.sim.cluster.nodeNames().filter((n) => !n.startsWith("control-plane")).slice(0, 3);
    try {
      for (const node of nodes) await east.kubectl("cordon", node);
      await page.waitForFunction((n) => Number(document.querySelector("[data-summary]")!.getAttribute("data-cordoned")) === n, first.cordoned + 3, { timeout: 30_000 });
      const cordoned = await summary(page);
      assert.equal(cordoned.text, summaryText(cordoned));
      assert.deepEqual({ ...first, cordoned: first.cordoned + 3, text: cordoned.text }, cordoned);
      assert.deepEqual((({ text, ...c }) => c)(cordoned), await tileCounts(page));

      east.sim.cluster.setNodeCondition(nodes[0]!, "Ready", "False", "KubeletNotReady");
      await page.waitForFunction((n) => Number(document.querySelector("[data-summary]")!.getAttribute("data-notready")) === n, first.notReady + 1, { timeout: 30_000 });
      const notReady = await summary(page);
      assert.equal(notReady.text, summaryText(notReady));
      assert.deepEqual({ ...notReady, text: "" }, { ...cordoned, ready: cordoned.ready - 1, notReady: cordoned.notReady + 1, text: "" });
      assert.deepEqual((({ text, ...c }) => c)(notReady), await tileCounts(page));
    } finally {
      east.sim.cluster.setNodeCondition(nodes[0]!, "Ready", "True", "KubeletReady");
      for (const node of nodes) await east.kubectl("uncordon", node);
    }
    await page.waitForFunction((s) => document.querySelector("[data-summary]")!.textContent === s, first.text, { timeout: 30_000 });
  });

  test("names mode shows each node's name on its tile; a label level without a key keeps the clusters apart", async () => {
    const page = await fleet("?group=CLUSTER");
    await page.getByLabel("Show names").check();
    await page.waitForFunction(() => document.querySelector(".fleet-groups")!.classList.contains("names"));
    await page.waitForFunction(() => {
      const tile = document.querySelector('a.tile[data-node="east/general-b-ft985"]');
      return tile?.textContent === "general-b-ft985";
    });
    const texts = await page.$$eval("a.tile[data-node]", (tiles) => tiles.map((t) => [t.getAttribute("data-node")!.split("/")[1], t.textContent!.replace(/^[✕?] /, "")]));
    assert.ok(texts.every(([name, text]) => name === text), JSON.stringify(texts));
    // Each name is drawn whole, not cut by its tile.
    const clipped = await page.$$eval("a.tile[data-node]", (tiles) => tiles.filter((t) => t.scrollWidth > t.clientWidth).map((t) => t.textContent));
    assert.deepEqual(clipped, []);
    assert.match(page.url(), /[?&]names=1/);
    await page.screenshot({ path: join(ARTIFACTS, "fleet-names-mode.png"), fullPage: true });

    await page.getByLabel("Grouping level 1").selectOption("LABEL");
    await page.locator("[data-label-key-missing]").waitFor();
    // Still one group per cluster until a key is typed.
    assert.deepEqual(await page.$$eval("h2.group-header", (hs) => hs.map((h) => h.getAttribute("data-group"))), ["east", "west"]);
    await page.getByLabel("Label key").fill("node-pool");
    await page.waitForFunction(() => Array.from(document.querySelectorAll("h2.group-header")).every((h) => !["east", "west"].includes(h.getAttribute("data-group")!)));
    assert.equal(await page.locator("[data-label-key-missing]").count(), 0);
    await page.getByLabel("Show names").uncheck();
  });
});
