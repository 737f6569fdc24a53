import type { ServerResponse } from "node:http";
import { sendBuiltPage } from "./explorer.js";
import type { PageSettings } from "./page-settings.js";
import type { WebAssets } from "./web-assets.js";

/** Where the web UI lives: the fleet at /ui/, a node at /ui/nodes/<cluster>/<name>, reports at /ui/reports. */
export const UI_PREFIX = "/ui/";

/**
 * Stricter than the explorer's: the UI sets no inline style attributes from markup and makes
 * no workers, so styles and scripts come only from this origin's bundle; it talks to
 * /graphql over HTTP and WebSocket on the same origin.
 */
const POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** True for the paths the web UI answers: /ui/ and every route under it (the page routes itself). */
export function isUiPath(path: string): boolean {
  return path === UI_PREFIX || (path.startsWith(UI_PREFIX) && !path.includes(".."));
}

/** The web UI's single page (web/ui, bundled by Vite into dist/web/ui), whatever route under /ui/ was asked. */
export function sendWebUi(res: ServerResponse, assets: WebAssets, settings: PageSettings): void {
  sendBuiltPage(res, assets, settings, { page: "ui/index.html", what: "The web UI", policy: POLICY });
}
