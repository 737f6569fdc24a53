import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { PACKAGE_ROOT } from "../../src/package-info.js";
import { CHROMIUM_ARGS } from "../support/browser.js";
import { startProgram, type RunningProgram } from "../support/program.js";
import { eventually } from "../support/sim-cluster.js";

/** Where the explorer's screenshot is kept (test-artifacts/ is not committed). */
export const SCREENSHOT = join(PACKAGE_ROOT, "test-artifacts", "explorer.png");

/**
 * Replaces the query editor's text: select all, then put the text in as a paste does (typed
 * keys would be completed and closed by the editor as a person types), and wait until shown.
 */
async function replaceQuery(page: Page, text: string): Promise<void> {
  await page.locator(".graphiql-query-editor .monaco-editor").first().click();
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Delete");
  await page.keyboard.insertText(text);
  await page.waitForFunction((wanted) => (document.querySelector(".graphiql-query-editor .view-lines")?.textContent ?? "").replace(/\u00a0/g, " ").includes(wanted), text);
}

describe("the API explorer in a real browser", () => {
  let program: RunningProgram;
  let profile: string;
  let browser: BrowserContext;
  let page: Page;
  const requests: string[] = [];
  const frames: { url: string; sent: boolean; payload: string }[] = [];

  before(async () => {
    program = await startProgram(["--port", "0", "--data-dir", "memory", "--simulate", "3"]);
    profile = mkdtempSync(join(tmpdir(), "ni-chromium-"));
    // A fresh profile each run: nothing cached, nothing signed in.
    browser = await chromium.launchPersistentContext(profile, { executablePath: "/usr/bin/chromium", headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 800 } });
    browser.on("request", (request) => requests.push(request.url()));
    page = browser.pages()[0] ?? (await browser.newPage());
    page.on("websocket", (ws) => {
      requests.push(ws.url());
      ws.on("framesent", (frame) => frames.push({ url: ws.url(), sent: true, payload: String(frame.payload) }));
      ws.on("framereceived", (frame) => frames.push({ url: ws.url(), sent: false, payload: String(frame.payload) }));
    });
  });
  after(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await program?.terminate();
  });

  test("GraphiQL loads from the service alone, runs { nodes { totalCount } } over HTTP and shows the answer", async () => {
    await page.goto(`${program.url}/graphql`);
    await page.locator(".graphiql-container").waitFor({ timeout: 60_000 });
    // The banner says the cluster is the simulator.
    await page.getByText("Simulated cluster: sim (not a real cluster)").waitFor();
    await replaceQuery(page, "{ nodes { totalCount } }");
    await page.locator(".graphiql-execute-button").click();
    await page.waitForFunction(() => (document.querySelector(".graphiql-response")?.textContent ?? "").replace(/\u00a0/g, " ").includes('"totalCount": 3'), null, { timeout: 30_000 });
    const query = ((await page.locator(".graphiql-query-editor .view-lines").first().textContent()) ?? "").replace(/\u00a0/g, " ");
    assert.equal(query.trim(), "{ nodes { totalCount } }");
    mkdirSync(join(PACKAGE_ROOT, "test-artifacts"), { recursive: true });
    await page.screenshot({ path: SCREENSHOT });
  });

  test("the schema's docs are there (introspection over HTTP)", async () => {
    await page.locator('button[aria-label="Show Documentation Explorer"]').click();
    await page.locator(".graphiql-doc-explorer").getByText("Query", { exact: true }).first().waitFor({ timeout: 30_000 });
  });

  test("a subscription goes over graphql-ws to the same origin", async () => {
    await replaceQuery(page, "subscription { maintenanceEvents { kind } }");
    await page.locator(".graphiql-execute-button").click();
    // The explorer's graphql-ws client may have connected already; the subscribe frame is this operation's.
    const subscribed = await eventually(() => frames.find((f) => f.sent && f.payload.includes('"type":"subscribe"') && f.payload.includes("maintenanceEvents")), "the subscribe frame", 30_000);
    assert.equal(subscribed.url, `${program.url.replace(/^http/, "ws")}/graphql`);
    assert.ok(
      frames.some((f) => !f.sent && f.payload.includes('"type":"connection_ack"') && f.url === subscribed.url),
      "acknowledged by the service",
    );
  });

  test("no request left 127.0.0.1", () => {
    assert.ok(requests.length > 5, `requests: ${requests.join(", ")}`);
    const elsewhere = requests.filter((url) => !/^(wss?|https?):\/\/127\.0\.0\.1:\d+\//.test(url) && !/^(data|blob):/.test(url));
    assert.deepEqual(elsewhere, []);
  });
});
