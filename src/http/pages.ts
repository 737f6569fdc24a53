import type { IncomingMessage, ServerResponse } from "node:http";
import { printSchema, type GraphQLSchema } from "graphql";
import { sendExplorer, wantsHtml } from "./explorer.js";
import { sendLandingPage } from "./landing-page.js";
import type { PageSettings } from "./page-settings.js";
import { WebAssets, WEB_PREFIX } from "./web-assets.js";
import { isUiPath, sendWebUi } from "./web-ui.js";

/**
 * The pages for people, mounted in front of the API: `/`, GraphiQL at `GET /graphql` for a
 * browser (Accept: text/html), the web UI under /ui/, `/schema.graphql` and the bundled
 * assets under /assets/. Each
 * answers without authentication; they hold nothing a caller could not read from the source
 * (with introspection off, the schema is not served either).
 */
export function createPages(schema: GraphQLSchema, settings: PageSettings, address: () => string, assets = new WebAssets()) {
  const sdl = printSchema(schema) + "\n";
  return (req: IncomingMessage, res: ServerResponse, path: string): boolean => {
    if (path === "/") sendLandingPage(req, res, settings, address());
    else if (path === "/graphql" && wantsHtml(req.headers.accept)) sendExplorer(res, assets, settings);
    else if (path === "/schema.graphql" && settings.introspection) {
      res.statusCode = 200;
      res.setHeader("content-type", "text/plain; charset=utf-8");
      res.setHeader("cache-control", "no-store");
      res.end(sdl);
    } else if (path === "/ui") {
      res.statusCode = 308;
      res.setHeader("location", "/ui/");
      res.end();
    } else if (isUiPath(path)) sendWebUi(res, assets, settings);
    else if (path.startsWith(WEB_PREFIX)) return assets.serve(path, res);
    else return false;
    return true;
  };
}
