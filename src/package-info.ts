import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The folder holding package.json, schema.graphql and prisma/, from src/ or dist/src/. */
export const PACKAGE_ROOT = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "schema.graphql"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error("schema.graphql not found above " + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
})();

export const VERSION: string = JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")).version;
