import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { PACKAGE_ROOT } from "../../src/package-info.js";

const STORE = join("dist", "src", "history", "history-store.js");
const LINE = "transitions.push(...diff.transitions);";

/** A copy of the built program whose recorder misbehaves once, as `patch` makes it. */
async function mutant(patch: string): Promise<{ root: string; remove(): Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), "node-inventory-mutant-"));
  for (const file of ["package.json", "schema.graphql", "bin"]) await cp(join(PACKAGE_ROOT, file), join(root, file), { recursive: true });
  await cp(join(PACKAGE_ROOT, "dist"), join(root, "dist"), { recursive: true });
  for (const link of ["node_modules", "prisma"]) await symlink(join(PACKAGE_ROOT, link), join(root, link));
  const source = await readFile(join(root, STORE), "utf8");
  assert.ok(source.includes(LINE), `${STORE} no longer has the line the mutant replaces`);
  await writeFile(join(root, STORE), source.replace(LINE, patch));
  return { root, remove: () => rm(root, { recursive: true, force: true }) };
}

/** `soak-main` as a process against a program; its exit code and what it printed. */
function soak(root: string, seed: number): Promise<{ code: number | null; out: string }> {
  const child = spawn(
    process.execPath,
    [join(PACKAGE_ROOT, "dist", "src", "proof", "soak-main.js"), "--minutes", "1", "--seed", String(seed), "--faults", "none", "--replicas", "1", "--nodes", "8", "--program", root],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, out })));
}

/** A failed soak keeps its folders for a look: these runs fail on purpose. */
async function removeKept(out: string): Promise<void> {
  const kept = /kept (\S+) \(ground truth, replica logs\)(?: and (\S+) \(the database, stopped\))?/.exec(out);
  for (const dir of kept?.slice(1) ?? []) if (dir) await rm(dir, { recursive: true, force: true });
}

// The checker must see a recorder bug: a build that drops one transition, one that writes one twice.
describe("the soak's checker against mutant recorders", () => {
  test("a recorder that drops one transition fails the soak, the transition named as lost", async () => {
    const m = await mutant(`transitions.push(...diff.transitions.filter((t) => !(t.from !== null && !globalThis.__mutantDropped && (globalThis.__mutantDropped = true))));`);
    try {
      const { code, out } = await soak(m.root, 41);
      assert.equal(code, 1, out);
      await removeKept(out);
      assert.match(out, /lost 1 \(and 0 unobservable\), duplicated 0, phantom 0/, out);
    } finally {
      await m.remove();
    }
  });

  test("a recorder that writes one transition twice fails the soak, the transition named as duplicated", async () => {
    // A second row a second later: the table's unique key (node, type, at, to) would absorb an exact copy.
    const m = await mutant(
      `transitions.push(...diff.transitions, ...diff.transitions.filter((t) => t.from !== null && !globalThis.__mutantDoubled && (globalThis.__mutantDoubled = true)).map((t) => ({ ...t, at: new Date(t.at.getTime() + 1000) })));`,
    );
    try {
      const { code, out } = await soak(m.root, 42);
      assert.equal(code, 1, out);
      await removeKept(out);
      assert.match(out, /lost 0 \(and 0 unobservable\), duplicated 1, phantom 0/, out);
    } finally {
      await m.remove();
    }
  });
});
