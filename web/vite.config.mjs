// Builds the browser pages the service serves into dist/web, as part of `npm run build`:
// the API explorer (GraphiQL, React) and the web UI (Preact). Everything the pages need is
// bundled: they load nothing from any other host.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here("."),
  // The service serves the hashed files under /assets/ (src/http/web-assets.ts); the pages
  // themselves at GET /graphql (explorer) and /ui/ (web UI).
  base: "/",
  logLevel: "warn",
  // The web UI's TSX is Preact's (the explorer's React is written without JSX).
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: here("../dist/web"),
    emptyOutDir: true,
    // Monaco (GraphiQL's editor) is large; it is fetched once from our own origin and cached.
    chunkSizeWarningLimit: 6_000,
    rollupOptions: {
      input: { explorer: here("explorer/index.html"), ui: here("ui/index.html") },
      onwarn(warning, warn) {
        // React libraries' "use client" lines mean nothing outside a server-components build.
        if (warning.code === "MODULE_LEVEL_DIRECTIVE") return;
        warn(warning);
      },
    },
  },
  worker: { format: "es" },
});
