import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { PACKAGE_ROOT } from "../../src/package-info.js";

// biome.json: the formatter, the recommended lint rules less the ones this code base chose
// against (each named there), and Biome's import-cycle rule; import-cycles.test.ts also counts
// type-only imports.
test("Biome finds nothing to format or lint (biome.json), import cycles included", () => {
  const run = spawnSync(join(PACKAGE_ROOT, "node_modules", ".bin", "biome"), ["ci", "--colors=off", "--max-diagnostics=20", "."], { cwd: PACKAGE_ROOT, encoding: "utf8" });
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
});
