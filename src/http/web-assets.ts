import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { extname, join } from "node:path";
import { PACKAGE_ROOT } from "../package-info.js";

/**
 * What `npm run build` bundles for browsers (web/, built by Vite): the pages' hashed files,
 * shared by the explorer (GET /graphql) and the web UI (/ui/), are served under /assets/.
 */
export const WEB_ROOT = join(PACKAGE_ROOT, "dist", "web");
export const WEB_PREFIX = "/assets/";

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".html": "text/html; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".ttf": "font/ttf",
  ".woff2": "font/woff2",
  ".png": "image/png",
};

/** One path segment a bundler writes: no `..`, no separators, nothing to escape the root with. */
const SEGMENT = /^[\w][\w.-]*$/;

/**
 * Reads a built file once and keeps it (a few megabytes in all). Only /assets/ names are
 * served: they carry a content hash, so browsers may keep them for good.
 */
export class WebAssets {
  private readonly cache = new Map<string, Buffer | null>();

  constructor(private readonly root: string = WEB_ROOT) {}

  /** The built text of `relative` (e.g. `explorer/index.html`), or undefined if it was not built. */
  text(relative: string): string | undefined {
    return this.read(relative)?.toString("utf8");
  }

  /** Answers GET /assets/<file>; false when `path` is not one (the caller answers 404). */
  serve(path: string, res: ServerResponse): boolean {
    if (!path.startsWith(WEB_PREFIX)) return false;
    const name = path.slice(WEB_PREFIX.length);
    if (!SEGMENT.test(name)) return false;
    const body = this.read(join("assets", name));
    if (!body) return false;
    res.statusCode = 200;
    res.setHeader("content-type", TYPES[extname(name)] ?? "application/octet-stream");
    res.setHeader("cache-control", "public, max-age=31536000, immutable");
    res.setHeader("x-content-type-options", "nosniff");
    res.end(body);
    return true;
  }

  private read(relative: string): Buffer | undefined {
    if (!this.cache.has(relative)) {
      let body: Buffer | null = null;
      try {
        body = readFileSync(join(this.root, relative));
      } catch {
        // Not built: the caller says so.
      }
      this.cache.set(relative, body);
    }
    return this.cache.get(relative) ?? undefined;
  }
}
