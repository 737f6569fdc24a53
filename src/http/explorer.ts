import type { ServerResponse } from "node:http";
import type { PageSettings } from "./page-settings.js";
import type { WebAssets } from "./web-assets.js";

const MARK = "<!--node-inventory:settings-->";

/**
 * Only this origin: the explorer's scripts, styles, fonts and workers are all bundled, and
 * it talks to /graphql over HTTP and WebSocket. A request to any other host is refused by
 * the browser itself. GraphiQL sets inline styles, and Monaco makes blob: workers.
 */
const POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * GET /graphql for a browser: GraphiQL (the `graphiql` package, bundled by `npm run build`
 * into dist/web), with this service's settings written into the page as JSON.
 */
export function sendExplorer(res: ServerResponse, assets: WebAssets, settings: PageSettings): void {
  sendBuiltPage(res, assets, settings, { page: "explorer/index.html", what: "The API explorer", policy: POLICY });
}

/**
 * Sends a page Vite built (`page`, relative to dist/web) with the service's settings in it
 * as JSON, under a content security policy that keeps it on this origin; 503 saying how to
 * build it when it was not built.
 */
export function sendBuiltPage(res: ServerResponse, assets: WebAssets, settings: PageSettings, how: { page: string; what: string; policy: string }): void {
  const page = assets.text(how.page);
  if (!page) {
    res.statusCode = 503;
    res.setHeader("content-type", "text/plain; charset=utf-8");
    res.end(`${how.what} is not built: run \`npm run build\` (npm install does it).\n`);
    return;
  }
  // JSON in a script element: `<` escaped so no value can close the element.
  const json = JSON.stringify(settings).replace(/</g, "\\u003c");
  res.statusCode = 200;
  res.setHeader("content-type", "text/html; charset=utf-8");
  res.setHeader("cache-control", "no-store");
  res.setHeader("content-security-policy", how.policy);
  res.setHeader("x-content-type-options", "nosniff");
  res.end(page.replace(MARK, `<script id="node-inventory-settings" type="application/json">${json}</script>`));
}

/** A browser navigating to /graphql asks for HTML first; GraphQL clients never do. */
export function wantsHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept.split(",").map((part) => part.split(";")[0]!.trim().toLowerCase());
  return types.includes("text/html");
}
