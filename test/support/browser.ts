import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

/**
 * Debian's Chromium (installed by scripts/test-prerequisites.sh), as this sandbox runs it:
 * without background networking, so every request it makes is the page's own.
 */
export const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

/** A browser with a fresh profile (nothing cached, nothing signed in) that records every URL it asks for. */
export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Every request and WebSocket URL so far. */
  requests: string[];
  close(): Promise<void>;
}

export async function launchBrowser(viewport = { width: 1280, height: 800 }): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), "ni-chromium-"));
  const context = await chromium.launchPersistentContext(profile, { executablePath: "/usr/bin/chromium", headless: true, args: CHROMIUM_ARGS, viewport });
  const requests: string[] = [];
  context.on("request", (request) => requests.push(request.url()));
  const page = context.pages()[0] ?? (await context.newPage());
  page.on("websocket", (ws) => requests.push(ws.url()));
  return {
    context,
    page,
    requests,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** The requests that went anywhere but 127.0.0.1 (data: and blob: URLs stay in the page). */
export const requestsElsewhere = (requests: string[]) => requests.filter((url) => !/^(wss?|https?):\/\/127\.0\.0\.1:\d+\//.test(url) && !/^(data|blob):/.test(url));
