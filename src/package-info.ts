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

/** The program users run; its first line starts node with {@link BIN_NODE_FLAGS}. */
export const BIN = join(PACKAGE_ROOT, "bin", "node-inventory.js");

/**
 * The node flags of the program's `#!/usr/bin/env -S node …` line: what a launcher that starts
 * the program with a node binary of its own (benches, tests) passes to run it as shipped.
 */
export const BIN_NODE_FLAGS: readonly string[] = (() => {
  const shebang = /^#!\/usr\/bin\/env -S node((?: --[\w-]+(?:=\S+)?)*)\n/.exec(readFileSync(BIN, "utf8"));
  if (!shebang) throw new Error(`${BIN} does not start with #!/usr/bin/env -S node …`);
  return shebang[1]!.split(" ").filter(Boolean);
})();
