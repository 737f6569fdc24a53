import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Page } from "playwright-core";
import { PACKAGE_ROOT } from "../../src/package-info.js";
import { R } from "../../src/sim/index.js";
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

const kindOf = (pod: any) => pod.metadata.ownerReferences?.find((r: any) => r.controller)?.kind as string | undefined;
const isMirror = (pod: any) => pod.metadata.annotations?.["kubernetes.io/config.mirror"] !== undefined;

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

  /** Opens `path` in `page`, signing in when the tab has no token yet (the token is kept per tab). */
  async function open(page: Page, path: string): Promise<void> {
    await page.goto(`${program.url}${path}`);
    await page.locator("main").first().waitFor();
    if (await page.getByLabel("Token").count()) {
      await page.getByLabel("Token").fill(OPERATOR);
      await page.getByRole("button", { name: "Sign in" }).click();
    }
  }

  /** A fresh page on the fleet, signed in, grouped as given (the address holds the grouping). */
  async function fleet(query = ""): Promise<Page> {
    const page = browser.page;
    await open(page, `/ui/${query}`);
    await page.locator('.totals[data-loaded="true"]').waitFor({ timeout: 60_000 });
    return page;
  }

  /** A node's page, signed in. */
  async function nodePage(cluster: string, node: string): Promise<Page> {
    const page = await fleet();
    await page.goto(`${program.url}/ui/nodes/${cluster}/${node}`);
    await page.getByRole("heading", { name: new RegExp(`^${node}`) }).waitFor({ timeout: 30_000 });
    return page;
  }
  const unschedulable = (node: string) => (east.sim.cluster.get("nodes", node) as any).spec.unschedulable === true;

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
    let nodeOfWest: Page | undefined;
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
      // A node of it, opened now, says its state is the last known one.
      nodeOfWest = await browser.context.newPage();
      const westNode = west.sim.cluster.nodeNames()[0]!;
      await open(nodeOfWest, `/ui/nodes/west/${westNode}`);
      await nodeOfWest.locator('main[data-stale="true"]').waitFor({ timeout: 30_000 });
      assert.match((await nodeOfWest.locator("[data-stale-cluster=west]").textContent())!, new RegExp(`^Cluster west is not live since ${clock} \\(.+\\): this page shows the node's last known state\\.$`));
      console.log(`# west marked stale ${markedMs} ms after its apiserver stopped`);
    } finally {
      await west.relay.resume();
    }
    const back = Date.now();
    await page.waitForFunction(() => document.querySelectorAll('a.tile[data-node][data-stale="true"], .group-header[data-stale="true"]').length === 0, undefined, { timeout: UNMARKED_WITHIN_MS });
    console.log(`# west unmarked ${Date.now() - back} ms after its apiserver was back`);
    assert.equal(await page.locator("[data-stale-clusters]").count(), 0);
    await nodeOfWest!.locator('main[data-stale="false"]').waitFor({ timeout: 30_000 });
    assert.equal(await nodeOfWest!.locator("[data-stale-cluster]").count(), 0);
    await nodeOfWest!.close();
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
    await page.getByLabel("Text on tiles").check();
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
    // Opened with text on tiles from its address: loaded means every node counted, not an empty drawing first.
    await fleet("?group=CLUSTER&names=1");
    assert.equal((await summary(page)).nodes, 20);
    assert.equal(await page.locator("a.tile[data-node]").count(), 20);

    await page.getByLabel("Grouping level 1").selectOption("LABEL");
    await page.locator("[data-label-key-missing]").waitFor();
    // Still one group per cluster until a key is typed.
    assert.deepEqual(await page.$$eval("h2.group-header", (hs) => hs.map((h) => h.getAttribute("data-group"))), ["east", "west"]);
    await page.getByLabel("Label key").fill("node-pool");
    await page.waitForFunction(() => Array.from(document.querySelectorAll("h2.group-header")).every((h) => !["east", "west"].includes(h.getAttribute("data-group")!)));
    assert.equal(await page.locator("[data-label-key-missing]").count(), 0);
    await page.getByLabel("Text on tiles").uncheck();
  });

  test("a drain asks first, naming the node, its pods and the reason; Cancel changes nothing; then its progress moves pod by pod", async () => {
    // A worker of seed 1 whose pods' budgets let every eviction through.
    const node = "general-c-zmxlw";
    const pods = east.sim.cluster.podsOnNode(node) as any[];
    const leaving = pods.filter((p) => kindOf(p) !== "DaemonSet" && !isMirror(p)).map((p) => `${p.metadata.namespace}/${p.metadata.name}`).sort();
    assert.ok(leaving.length >= 3, `${leaving.length} pods to evict`);
    // Grace periods of 30 k simulated seconds (the clock runs 30 times faster): the pods go a second apart.
    pods.filter((p) => kindOf(p) !== "DaemonSet" && !isMirror(p)).forEach((p, k) => east.sim.cluster.update(R.pods, `${p.metadata.namespace}/${p.metadata.name}`, (copy: any) => void (copy.spec.terminationGracePeriodSeconds = 30 * (k + 1))));
    const page = await nodePage("east", node);
    try {
      await page.getByLabel("Reason").fill("kernel upgrade");
      await page.getByLabel("ignore DaemonSet pods").check();
      await page.getByLabel("delete emptyDir data").check();
      await page.getByLabel("force (pods without a controller)").check();
      await page.getByRole("button", { name: "Drain", exact: true }).click();
      const dialog = page.locator('dialog[data-confirm="drain"]');
      await dialog.waitFor();
      assert.equal(await dialog.evaluate((d: HTMLDialogElement) => d.open && d.matches(":modal")), true);
      assert.equal(await dialog.getByRole("heading").textContent(), `Drain ${node}?`);
      const said = (await dialog.textContent())!;
      assert.match(said, new RegExp(`Node ${node} of cluster east will be cordoned, then its pods evicted\\. Reason: “kernel upgrade”\\.`));
      assert.match(said, new RegExp(`${leaving.length} pods to go:`));
      assert.deepEqual((await dialog.locator("li[data-pod]").evaluateAll((lis) => lis.map((li) => li.getAttribute("data-pod")))).sort(), leaving);
      await dialog.getByRole("button", { name: "Cancel" }).click();
      await dialog.waitFor({ state: "detached" });
      assert.equal(unschedulable(node), false, "not cordoned after Cancel");
      assert.equal(await page.locator("section.drain").count(), 0);

      // Every change of the counts by phase, as the page shows them.
      await page.evaluate(() => {
        const seen: Record<string, number>[] = [];
        (window as any).phasesSeen = seen;
        const record = () => {
          const bar = document.querySelector("[data-phases]");
          if (!bar) return;
          const now = Object.fromEntries(["gone", "terminating", "evicting", "notstarted"].map((k) => [k, Number(bar.getAttribute(`data-${k}`))]));
          if (JSON.stringify(now) !== JSON.stringify(seen.at(-1))) seen.push(now);
        };
        new MutationObserver(record).observe(document.body, { subtree: true, childList: true, attributes: true });
      });
      await page.getByRole("button", { name: "Drain", exact: true }).click();
      await dialog.getByRole("button", { name: `Drain ${node}` }).click();
      // Half-way: some pods gone, some still terminating.
      await page.waitForFunction(() => {
        const bar = document.querySelector("[data-phases]");
        return bar && Number(bar.getAttribute("data-gone")) >= 1 && Number(bar.getAttribute("data-terminating")) >= 1;
      }, undefined, { timeout: 60_000 });
      await page.screenshot({ path: join(ARTIFACTS, "drain-half-way.png"), fullPage: true });
      await page.locator('section.drain[data-status="SUCCEEDED"]').waitFor({ timeout: 120_000 });
      const seen: Record<string, number>[] = await page.evaluate(() => (window as any).phasesSeen);
      const gone = seen.map((s) => s.gone!);
      assert.deepEqual(gone, [...gone].sort((a, b) => a - b), "gone never goes back");
      assert.ok(new Set(gone).size >= 3, `gone counts shown: ${gone.join(", ")}`);
      assert.ok(seen.some((s) => s.gone === 0 && s.terminating! > 0), `terminating shown before any pod was gone: ${JSON.stringify(seen)}`);
      assert.deepEqual(seen.at(-1), { gone: leaving.length, terminating: 0, evicting: 0, notstarted: 0 });
      assert.equal(await page.locator("section.drain tr[data-pod][data-phase=GONE]").count(), leaving.length);
      console.log(`# gone counts shown: ${gone.join(", ")}`);
    } finally {
      await east.kubectl("uncordon", node);
    }
  });

  test("a dry run is shown as a plan: what would be evicted, what stops it and which box would unblock it, never as a failure", async () => {
    // The README's node: pods with emptyDir volumes on it.
    const node = "general-b-ft985";
    const page = await nodePage("east", node);
    await page.getByLabel("dry run (plan only)").check();
    await page.getByRole("button", { name: "Plan drain" }).click();
    const plan = page.locator("section.drain.plan");
    await plan.waitFor({ timeout: 30_000 });
    assert.equal(await page.locator("dialog").count(), 0, "a plan is not asked about");
    const id = await plan.getAttribute("data-drain");
    const op = (await api(`query($id: ID!) { drainOperation(id: $id) { dryRun pods { namespace name action status unblockedBy reason } } }`, { id })).drainOperation;
    assert.equal(op.dryRun, true);
    const name = (p: { namespace: string; name: string }) => `${p.namespace}/${p.name}`;
    const blockers = op.pods.filter((p: any) => p.unblockedBy);
    assert.ok(blockers.some((p: any) => p.unblockedBy === "DELETE_EMPTY_DIR_DATA"), JSON.stringify(op.pods));
    assert.equal(await plan.getAttribute("data-plan"), "blocked");
    const text = (await plan.textContent())!;
    assert.doesNotMatch(text, /FAILED|error|--[a-z]/i);
    assert.match(text, /A dry run: nothing was changed\./);
    const items = await plan.locator(".plan-blockers li[data-pod]").evaluateAll((lis) => lis.map((li) => [li.getAttribute("data-pod"), li.getAttribute("data-unblocked-by"), li.textContent]));
    assert.deepEqual(items.map(([pod, by]) => [pod, by]).sort(), blockers.map((p: any) => [name(p), p.unblockedBy]).sort());
    for (const [pod, by, said] of items) if (by === "DELETE_EMPTY_DIR_DATA") assert.equal(said, `${pod}: has emptyDir data, lost when it is evicted. Tick “delete emptyDir data” to evict it anyway.`);
    assert.match((await plan.locator(".plan-advice").textContent())!, /^Tick “delete emptyDir data”( and “force \(pods without a controller\)”)?, then plan again or drain\.$/);
    assert.deepEqual((await plan.locator('ul[data-would="evict"] li').evaluateAll((lis) => lis.map((li) => li.getAttribute("data-pod")))).sort(), op.pods.filter((p: any) => p.action).map(name).sort());
    await page.screenshot({ path: join(ARTIFACTS, "drain-dry-run-plan.png"), fullPage: true });

    // The boxes it names, ticked: a plan that drains.
    await page.getByLabel("delete emptyDir data").check();
    if (blockers.some((p: any) => p.unblockedBy === "FORCE")) await page.getByLabel("force (pods without a controller)").check();
    await page.getByRole("button", { name: "Plan drain" }).click();
    await page.locator('section.drain.plan[data-plan="drains"]').waitFor({ timeout: 30_000 });
    assert.match((await page.locator("section.drain.plan h3").textContent())!, /would drain the node$/);
    assert.equal(unschedulable(node), false, "a plan changes nothing");
  });

  test("cordoning the last Ready node of its pool asks first; a node with Ready peers is cordoned at once", async () => {
    // Seed 1 has one gpu node.
    const last = "gpu-b-k2hxq";
    let page = await nodePage("east", last);
    try {
      await page.getByLabel("Reason").fill("driver update");
      await page.getByRole("button", { name: "Cordon" }).click();
      const dialog = page.locator('dialog[data-confirm="cordon"]');
      await dialog.waitFor();
      const said = (await dialog.textContent())!;
      assert.match(said, new RegExp(`${last} is the last Ready node of pool gpu of cluster east that takes new pods: once it is cordoned, nothing new can be scheduled there\\. Reason: “driver update”\\.`));
      const pods = (east.sim.cluster.podsOnNode(last) as any[]).map((p) => `${p.metadata.namespace}/${p.metadata.name}`).sort();
      assert.deepEqual((await dialog.locator("li[data-pod]").evaluateAll((lis) => lis.map((li) => li.getAttribute("data-pod")))).sort(), pods);
      await dialog.getByRole("button", { name: "Cancel" }).click();
      await dialog.waitFor({ state: "detached" });
      assert.equal(unschedulable(last), false);
      await page.getByRole("button", { name: "Cordon" }).click();
      await dialog.getByRole("button", { name: `Cordon ${last}` }).click();
      await page.locator('main[data-cordoned="true"]').waitFor({ timeout: 30_000 });
      assert.equal(unschedulable(last), true);
      // Cordoned and Ready: its badge is amber, not green.
      assert.equal(await page.locator("h1 .badge").getAttribute("class"), "badge state-cordoned");
      assert.equal(await page.locator("h1 .badge").evaluate((b) => getComputedStyle(b).color), "rgb(138, 83, 0)");
    } finally {
      await east.kubectl("uncordon", last);
    }

    const peer = "general-a-7l6t8";
    page = await nodePage("east", peer);
    try {
      await page.getByRole("button", { name: "Cordon" }).click();
      await page.locator('main[data-cordoned="true"]').waitFor({ timeout: 30_000 });
      assert.equal(await page.locator("dialog").count(), 0);
    } finally {
      await east.kubectl("uncordon", peer);
    }
  });
});
