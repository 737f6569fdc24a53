import { readdirSync, readFileSync } from "node:fs";
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
 * served: they carry a content hash, so browsers may keep them for good. Only files that exist
 * are kept: the names under /assets/ are listed once, so an unknown name costs a lookup and is
 * never remembered (any caller may send any number of them).
 */
export class WebAssets {
  private readonly cache = new Map<string, Buffer>();
  private built: ReadonlySet<string> | undefined;

  constructor(private readonly root: string = WEB_ROOT) {}

  /** The built text of `relative` (e.g. `explorer/index.html`), or undefined if it was not built. */
  text(relative: string): string | undefined {
    return this.read(relative)?.toString("utf8");
  }

  /** Answers GET /assets/<file>; false when `path` is not one (the caller answers 404). */
  serve(path: string, res: ServerResponse): boolean {
    if (!path.startsWith(WEB_PREFIX)) return false;
    const name = path.slice(WEB_PREFIX.length);
    if (!SEGMENT.test(name) || !this.builtAssets().has(name)) return false;
    const body = this.read(join("assets", name));
    if (!body) return false;
    res.statusCode = 200;
    res.setHeader("content-type", TYPES[extname(name)] ?? "application/octet-stream");
    res.setHeader("cache-control", "public, max-age=31536000, immutable");
    res.setHeader("x-content-type-options", "nosniff");
    res.end(body);
    return true;
  }

  /** The names the build wrote under assets/, listed once. */
  private builtAssets(): ReadonlySet<string> {
    if (!this.built) {
      try {
        this.built = new Set(readdirSync(join(this.root, "assets")));
      } catch {
        // Not built: no asset is served.
        this.built = new Set();
      }
    }
    return this.built;
  }

  private read(relative: string): Buffer | undefined {
    const kept = this.cache.get(relative);
    if (kept) return kept;
    try {
      const body = readFileSync(join(this.root, relative));
      this.cache.set(relative, body);
      return body;
    } catch {
      // Not built (callers name only the built pages and listed assets, so nothing unbounded is tried twice).
      return undefined;
    }
  }
}
