// Builds the browser pages the service serves (today the API explorer) into dist/web, as
// part of `npm run build`. Everything the page needs is bundled: it loads nothing from
// any other host.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here("."),
  // The service mounts the built files under /ui/ (src/http/web-assets.ts).
  base: "/ui/",
  logLevel: "warn",
  build: {
    outDir: here("../dist/web"),
    emptyOutDir: true,
    // Monaco (GraphiQL's editor) is large; it is fetched once from our own origin and cached.
    chunkSizeWarningLimit: 6_000,
    rollupOptions: {
      input: { explorer: here("explorer/index.html") },
      onwarn(warning, warn) {
        // React libraries' "use client" lines mean nothing outside a server-components build.
        if (warning.code === "MODULE_LEVEL_DIRECTIVE") return;
        warn(warning);
      },
    },
  },
  worker: { format: "es" },
});
