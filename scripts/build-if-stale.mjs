#!/usr/bin/env node
// The install step's build: it builds only when the sources differ from those dist/ was built
// from, and one build at a time. `npx node-inventory` in a checkout runs the package's install
// scripts again (npx links the checkout into its cache): with nothing changed that is a no-op,
// and an interrupted or concurrent run never leaves the checkout without a dist/.
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";

const root = new URL("..", import.meta.url).pathname;
const INPUTS = ["src", "web", "test", "bench", "scripts", "prisma", "schema.graphql", "codegen.ts", "tsconfig.json", "package.json", "package-lock.json"];
const SKIP = new Set(["generated", "node_modules", "dist", "test-artifacts"]);
const stampFile = join(root, "dist", ".build-stamp");
const lockDir = join(root, ".build-lock");

function digest() {
  const hash = createHash("sha256");
  const add = (path) => {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) {
      for (const name of readdirSync(path).sort()) if (!SKIP.has(name)) add(join(path, name));
    } else {
      hash.update(path.slice(root.length)).update("\0").update(readFileSync(path)).update("\0");
    }
  };
  for (const input of INPUTS) add(join(root, input));
  return hash.digest("hex");
}

const upToDate = (want) => existsSync(join(root, "dist", "src", "cli", "main.js")) && existsSync(stampFile) && readFileSync(stampFile, "utf8") === want;

async function lock() {
  for (let waited = 0; ; waited += 200) {
    try {
      mkdirSync(lockDir);
      return;
    } catch {
      // Another build holds it; a lock older than ten minutes is left from a killed build.
      const age = Date.now() - (statSync(lockDir, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 600_000) rmSync(lockDir, { recursive: true, force: true });
      if (waited === 0) console.log("build: waiting for another build of this checkout");
      await delay(200);
    }
  }
}

const want = digest();
if (upToDate(want)) {
  console.log("build: dist/ is up to date with the sources");
  process.exit(0);
}
await lock();
try {
  if (!upToDate(want)) {
    for (const step of [
      ["run", "generate"],
      ["run", "build"],
    ]) {
      const run = spawnSync("npm", step, { cwd: root, stdio: "inherit" });
      if (run.status !== 0) process.exit(run.status ?? 1);
    }
    writeFileSync(stampFile, want);
  }
} finally {
  rmSync(lockDir, { recursive: true, force: true });
}
