import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Page } from "playwright-core";
import { PACKAGE_ROOT } from "../../src/package-info.js";
import { launchBrowser, requestsElsewhere, type TestBrowser } from "../support/browser.js";
import { programApi, startProgram, type RunningProgram } from "../support/program.js";
import { startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const ARTIFACTS = join(PACKAGE_ROOT, "test-artifacts");
const OPERATOR = "operator-token-for-the-web-ui-test";
const VIEWER = "viewer-token-for-the-web-ui-test";
/** The bound: a change made with kubectl shows on its tile within 2 s of kubectl returning. */
const TILE_BOUND_MS = 2_000;

interface ApiNode {
  id: string;
  ready: string;
  unschedulable: boolean;
  activeDrain: { id: string } | null;
}

/** What the tiles say, as their test hooks read: `[data-node, data-ready, data-cordoned, data-draining]`, sorted. */
const tileHooks = (page: Page) =>
  page.$$eval("a.tile[data-node]", (tiles) => tiles.map((t) => [t.getAttribute("data-node"), t.getAttribute("data-ready"), t.getAttribute("data-cordoned"), t.getAttribute("data-draining")]).sort());

async function signIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(`${url}/ui/`);
  await page.getByLabel("Token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator('.totals[data-loaded="true"]').waitFor({ timeout: 60_000 });
}

describe("the web UI in a real browser, on the real program watching the simulator", () => {
  let sim: SimWithKubeconfig;
  let program: RunningProgram;
  let dir: string;
  let operator: TestBrowser;
  let viewer: TestBrowser | undefined;

  const api = programApi(() => program, OPERATOR);
  const apiNodes = async (filter?: unknown): Promise<ApiNode[]> =>
    (await api(`query($filter: NodeFilter) { nodes(first: 5000, filter: $filter) { edges { node { id ready unschedulable activeDrain { id } } } } }`, { filter })).nodes.edges.map((e: { node: ApiNode }) => e.node);
  const expectedHooks = (nodes: ApiNode[]) =>
    nodes.map((n) => [n.id, n.ready === "TRUE" ? "true" : n.ready === "FALSE" ? "false" : "unknown", String(n.unschedulable), String(n.activeDrain !== null)]).sort();

  before(async () => {
    // Seed 1's twelve nodes are the demo cluster's (README); the clock runs 30 times faster so
    // evicted pods finish their grace periods within the test.
    sim = await startSimWithKubeconfig({ nodes: 12, seed: 1, clockSpeed: 30 });
    dir = mkdtempSync(join(tmpdir(), "ni-web-ui-"));
    const tokens = join(dir, "tokens.json");
    writeFileSync(
      tokens,
      JSON.stringify([
        { subject: "oncall", role: "operator", token: OPERATOR },
        { subject: "wallboard", role: "viewer", token: VIEWER },
      ]),
    );
    // Trends sampled every second, so the reports page has lines to draw by the time it is opened.
    program = await startProgram(["--port", "0", "--data-dir", "memory", "--kubeconfig", sim.kubeconfigPath, "--auth-tokens-file", tokens, "--trends-interval", "1"]);
    operator = await launchBrowser({ width: 1280, height: 900 });
    mkdirSync(ARTIFACTS, { recursive: true });
  });
  after(async () => {
    await operator?.close();
    await viewer?.close();
    await program?.terminate();
    await sim?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("with authentication on, the page asks for a token, refuses a wrong one, and keeps the right one for the tab's session", async () => {
    const { page } = operator;
    await page.goto(`${program.url}/ui/`);
    await page.getByRole("heading", { name: "Sign in" }).waitFor({ timeout: 60_000 });
    await page.getByLabel("Token").fill("not-a-token-of-this-service");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "The service did not accept this token." }).waitFor();
    await signIn(page, program.url, OPERATOR);
    assert.equal(await page.locator(".caller").textContent(), "oncall (operator)Sign out");
    assert.equal(await page.evaluate(() => sessionStorage.getItem("node-inventory.token")), OPERATOR);
    assert.equal(await page.evaluate(() => localStorage.length), 0);
  });

  test("the tiles match `nodes` one for one; group headers count their nodes", async () => {
    const { page } = operator;
    const nodes = await apiNodes();
    assert.equal(nodes.length, 12);
    assert.deepEqual(await tileHooks(page), expectedHooks(nodes));
    // Grouped cluster → pool → zone: one cluster header counting all, pools summing to it.
    const headers = await page.$$eval(".group-header", (hs) => hs.map((h) => [h.tagName, h.getAttribute("data-group"), Number(h.getAttribute("data-count"))] as const));
    assert.deepEqual(headers.filter(([tag]) => tag === "H2"), [["H2", "sim", 12]]);
    const pools = headers.filter(([tag]) => tag === "H3");
    assert.equal(pools.reduce((sum, [, , n]) => sum + n, 0), 12);
    assert.ok(pools.some(([, group]) => group === "sim/general"), JSON.stringify(pools));
    const zones = headers.filter(([tag]) => tag === "H4");
    assert.ok(zones.every(([, group]) => /^sim\/[\w-]+\/eu-west-1[abc]$/.test(group!)), JSON.stringify(zones));
    assert.equal(zones.reduce((sum, [, , n]) => sum + n, 0), 12);
    await page.screenshot({ path: join(ARTIFACTS, "ui-fleet.png"), fullPage: true });
  });

  test("grouping is switchable, and the label selector and the name filter narrow the tiles", async () => {
    const { page } = operator;
    await page.getByLabel("Grouping level 1").selectOption("ZONE");
    await page.getByLabel("Grouping level 2").selectOption("");
    await page.getByLabel("Grouping level 3").selectOption("");
    await page.waitForFunction(() => Array.from(document.querySelectorAll("h2.group-header")).every((h) => /^eu-west-1[abc]$/.test(h.getAttribute("data-group")!)));
    const zones = await page.$$eval("h2.group-header", (hs) => hs.map((h) => h.getAttribute("data-group")));
    assert.deepEqual(zones, ["eu-west-1a", "eu-west-1b", "eu-west-1c"]);

    await page.getByLabel("Label selector").fill("node-pool=general");
    await page.getByRole("button", { name: "Apply" }).click();
    const general = await apiNodes({ labelSelector: "node-pool=general" });
    await page.waitForFunction((n) => document.querySelectorAll("a.tile[data-node]").length === n, general.length);
    assert.deepEqual(await tileHooks(page), expectedHooks(general));

    await page.getByLabel("Name").fill("general-b");
    await page.waitForFunction(() => Array.from(document.querySelectorAll("a.tile[data-node]")).every((t) => t.getAttribute("data-node")!.startsWith("sim/general-b")));
    assert.deepEqual(await tileHooks(page), expectedHooks(general.filter((n) => n.id.startsWith("sim/general-b"))));

    // Back to everything, grouped as at first (the address keeps the settings).
    await page.goto(`${program.url}/ui/`);
    await page.locator('.totals[data-loaded="true"]').waitFor();
    assert.equal(await page.locator("a.tile[data-node]").count(), 12);
  });

  test("a `kubectl cordon` turns its tile cordoned, and a status patch of Ready=False turns it not ready, each within 2 s", async () => {
    const { page } = operator;
    const node = "memory-b-n44gm";
    const tile = `a.tile[data-node="sim/${node}"]`;
    await page.locator(`${tile}[data-cordoned="false"][data-ready="true"]`).waitFor();

    await sim.kubectl("cordon", node);
    let start = performance.now();
    await page.locator(`${tile}[data-cordoned="true"]`).waitFor({ timeout: 30_000 });
    const cordonMs = performance.now() - start;
    assert.ok(cordonMs <= TILE_BOUND_MS, `cordoned after ${cordonMs.toFixed(0)} ms`);

    const current = JSON.parse(await sim.kubectl("get", "node", node, "-o", "json")).status.conditions as { type: string }[];
    const now = () => new Date().toISOString().replace(/\.\d+Z$/, "Z");
    const conditions = current.map((c) => (c.type === "Ready" ? { ...c, status: "False", reason: "KubeletNotReady", message: "PLEG is not healthy", lastTransitionTime: now() } : c));
    await sim.kubectl("patch", "node", node, "--subresource=status", "--type=merge", "-p", JSON.stringify({ status: { conditions } }));
    start = performance.now();
    await page.locator(`${tile}[data-ready="false"]`).waitFor({ timeout: 30_000 });
    const notReadyMs = performance.now() - start;
    assert.ok(notReadyMs <= TILE_BOUND_MS, `not ready after ${notReadyMs.toFixed(0)} ms`);
    // Told in words too, and counted in its groups.
    assert.equal(await page.locator(tile).getAttribute("aria-label"), `${node} (sim): NotReady, cordoned`);
    assert.match((await page.locator('h2.group-header[data-group="sim"]').textContent())!, /12 nodes · 11 Ready · 1 NotReady · 1 cordoned/);

    // Back as it was (its pods count for PodDisruptionBudgets again), and the tile follows.
    await sim.kubectl("patch", "node", node, "--subresource=status", "--type=merge", "-p", JSON.stringify({ status: { conditions: current.map((c) => (c.type === "Ready" ? { ...c, lastTransitionTime: now() } : c)) } }));
    await sim.kubectl("uncordon", node);
    await page.locator(`${tile}[data-cordoned="false"][data-ready="true"]`).waitFor({ timeout: 30_000 });
  });

  test("keyboard: one tile is in the tab order, arrow keys and Home/End move between tiles, every tile says its state in words", async () => {
    const { page } = operator;
    assert.equal(await page.locator('a.tile[tabindex="0"]').count(), 1);
    const order = await page.$$eval("a.tile[data-node]", (tiles) => tiles.map((t) => t.getAttribute("data-node")));
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute("data-node"));
    await page.locator("a.tile").first().focus();
    await page.keyboard.press("ArrowRight");
    assert.equal(await focused(), order[1]);
    await page.keyboard.press("End");
    assert.equal(await focused(), order.at(-1));
    await page.keyboard.press("Home");
    assert.equal(await focused(), order[0]);
    assert.equal(await page.locator('a.tile[tabindex="0"]').getAttribute("data-node"), order[0]);
    const labels = await page.$$eval("a.tile[data-node]", (tiles) => tiles.map((t) => t.getAttribute("aria-label")));
    assert.ok(labels.every((label) => /^[\w-]+ \(sim\): (Ready|NotReady|Unknown)(, cordoned)?(, draining)?$/.test(label!)), JSON.stringify(labels));
  });

  test("an operator opens a node from its tile with the keyboard, drains it with options and a reason, and sees every pod go", async () => {
    const { page } = operator;
    // A worker of seed 1 whose pods' budgets let every eviction through.
    const node = "general-c-zmxlw";
    await page.locator(`a.tile[data-node="sim/${node}"]`).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: new RegExp(`^${node}`) }).waitFor();
    assert.equal(new URL(page.url()).pathname, `/ui/nodes/sim/${node}`);
    await page.locator(".timeline .entry").first().waitFor();

    await page.getByLabel("Reason").fill("kernel upgrade");
    await page.getByLabel("ignore DaemonSet pods").check();
    await page.getByLabel("delete emptyDir data").check();
    await page.getByRole("button", { name: "Drain", exact: true }).click();
    await page.locator('dialog[data-confirm="drain"]').getByRole("button", { name: `Drain ${node}` }).click();
    const drain = page.locator("section.drain");
    await drain.waitFor();
    await page.locator('section.drain[data-status="SUCCEEDED"]').waitFor({ timeout: 120_000 });
    const id = await drain.getAttribute("data-drain");
    const done = (await api(`query($id: ID!) { drainOperation(id: $id) { status requestedBy reason pods { namespace name status } } }`, { id })).drainOperation;
    assert.equal(done.status, "SUCCEEDED");
    assert.equal(done.requestedBy, "oncall");
    assert.equal(done.reason, "kernel upgrade");
    // The page shows each pod as the service has it at the end.
    const rows = await page.$$eval("section.drain tr[data-pod]", (trs) => trs.map((tr) => [tr.getAttribute("data-pod"), tr.getAttribute("data-status")]).sort());
    assert.deepEqual(rows, done.pods.map((p: { namespace: string; name: string; status: string }) => [`${p.namespace}/${p.name}`, p.status]).sort());
    assert.ok(rows.some(([, status]) => status === "EVICTED"), JSON.stringify(rows));
    await drain.locator('[data-phases][data-notstarted="0"][data-evicting="0"][data-terminating="0"]').waitFor();
    assert.match((await drain.locator(".phase-words").textContent())!, /^100% gone of \d+ pods to remove: \d+ gone, 0 terminating/);
    // The history shows the drain, and the node is cordoned.
    await page.locator(".timeline .entry.maintenance").filter({ hasText: "drain succeeded by oncall" }).waitFor({ timeout: 30_000 });
    await page.locator('main[data-cordoned="true"]').waitFor();
    // Node changes and Kubernetes events are in the timeline too, as many as the API holds.
    const facts = (await api(`query($name: String!) { node(cluster: "sim", name: $name) { changes(first: 200) { kind } events(first: 100) { reason } } }`, { name: node })).node;
    assert.ok(facts.changes.some((c: { kind: string }) => c.kind === "SCHEDULABILITY"), JSON.stringify(facts.changes));
    await page.waitForFunction((n) => document.querySelectorAll(".timeline .entry.change").length >= n, facts.changes.length, { timeout: 30_000 });
    await page.waitForFunction((n) => document.querySelectorAll(".timeline .entry.event").length >= n, facts.events.length, { timeout: 30_000 });
    await page.locator(".timeline .entry.change").filter({ hasText: "schedulability" }).first().waitFor();
    await page.screenshot({ path: join(ARTIFACTS, "ui-node.png"), fullPage: true });
  });

  test("an eviction a PodDisruptionBudget refuses shows the budget by name, and the operator cancels the drain", async () => {
    const { page } = operator;
    // The payments ledger's budget (minAvailable 2 of 2) allows no eviction at all.
    const ledger = (sim.sim.cluster.list("pods", "payments") as any[]).find((p) => p.metadata.labels?.app === "ledger");
    const node = ledger.spec.nodeName as string;
    await page.goto(`${program.url}/ui/nodes/sim/${node}`);
    await page.getByRole("heading", { name: new RegExp(`^${node}`) }).waitFor();
    await page.getByLabel("ignore DaemonSet pods").check();
    await page.getByLabel("delete emptyDir data").check();
    await page.getByLabel("force (pods without a controller)").check();
    await page.getByRole("button", { name: "Drain", exact: true }).click();
    await page.locator('dialog[data-confirm="drain"]').getByRole("button", { name: `Drain ${node}` }).click();
    const row = page.locator(`section.drain tr[data-pod="payments/${ledger.metadata.name}"][data-status="BLOCKED"]`);
    await row.waitFor({ timeout: 60_000 });
    assert.equal(await row.locator("td").last().textContent(), "PodDisruptionBudget ledger");
    await page.getByRole("button", { name: "Cancel drain" }).click();
    await page.locator('section.drain[data-status="CANCELLED"]').waitFor({ timeout: 30_000 });
    assert.equal(await page.getByRole("button", { name: "Cancel drain" }).count(), 0);
  });

  test("a viewer sees the fleet and a node page but no button to change anything", async () => {
    viewer = await launchBrowser();
    const { page } = viewer;
    await signIn(page, program.url, VIEWER);
    assert.equal(await page.locator(".caller").textContent(), "wallboard (viewer)Sign out");
    assert.deepEqual(await tileHooks(page), expectedHooks(await apiNodes()));
    await page.locator('a.tile[data-node="sim/general-b-ft985"]').click();
    await page.locator(".timeline .entry").first().waitFor({ timeout: 30_000 });
    assert.deepEqual(await page.$$eval("main button", (bs) => bs.map((b) => b.outerHTML)), []);
    assert.equal(await page.locator("main .maintenance").count(), 0);
    assert.equal(await page.getByLabel("Reason").count(), 0);
  });

  test("the reports page draws capacity per pool as the service counts it, trends as lines, and the outage of the node made NotReady", async () => {
    const { page } = operator;
    await page.getByRole("link", { name: "Reports" }).click();
    await page.getByRole("heading", { name: "Reports", level: 1 }).waitFor();
    const pools = (await api(`{ capacityReport(groupBy: [{ by: NODE_POOL }], podShape: { cpu: "500m", memory: "1Gi" }) { groups { key { value } fit { pods } } } }`)).capacityReport.groups;
    await page.locator("[data-report=capacity] article.report-group").first().waitFor({ timeout: 30_000 });
    assert.deepEqual(
      await page.$$eval("[data-report=capacity] article.report-group", (articles) => articles.map((a) => a.getAttribute("data-group"))),
      pools.map((g: { key: { value: string }[] }) => g.key[0]!.value),
    );
    const general = pools.find((g: { key: { value: string }[] }) => g.key[0]!.value === "general");
    assert.match((await page.locator('[data-report=capacity] article[data-group="general"]').textContent())!, new RegExp(`fit${general.fit.pods} pods`));
    await page.locator("[data-report=trends] svg.chart").nth(1).waitFor({ timeout: 30_000 });
    const lines = await page.$$eval("[data-report=trends] svg.chart path", (paths) => paths.map((p) => p.getAttribute("d") ?? ""));
    assert.ok(lines.some((d) => d.startsWith("M")), `no line drawn: ${JSON.stringify(lines)}`);
    // memory-b-n44gm was NotReady for a moment in the kubectl test: one outage, in its strip.
    const strips = page.locator("[data-report=availability] svg.outages");
    await strips.waitFor({ timeout: 30_000 });
    assert.match((await strips.getAttribute("aria-label"))!, /memory-b-n44gm [\d.]+% available, 1 outage/);
    // A moment's outage in a day: a sliver of its strip, not the strip.
    const [period, outage] = await strips.evaluate((svg) => Array.from(svg.querySelectorAll("g > rect")).map((r) => Number(r.getAttribute("width"))));
    assert.ok(outage! < period! / 50, `outage ${outage} of ${period}`);
    await page.screenshot({ path: join(ARTIFACTS, "ui-reports.png"), fullPage: true });
  });

  test("no request left the service's origin", () => {
    for (const browser of [operator, viewer!]) {
      assert.ok(browser.requests.length > 3, browser.requests.join(", "));
      assert.deepEqual(requestsElsewhere(browser.requests), []);
      const origins = new Set(browser.requests.map((url) => new URL(url).host));
      assert.deepEqual([...origins], [new URL(program.url).host]);
    }
  });
});
