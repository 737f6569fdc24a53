import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { test } from "node:test";
import ts from "typescript";
import { PACKAGE_ROOT } from "../../src/package-info.js";

/** Every module of src/ (generated code aside) and the modules of src/ it imports, type-only imports included. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "generated") walk(path);
      } else if (entry.name.endsWith(".ts")) {
        const { importedFiles } = ts.preProcessFile(readFileSync(path, "utf8"), true, true);
        const targets = importedFiles
          .filter((f) => f.fileName.startsWith("."))
          .map((f) => join(dirname(path), f.fileName.replace(/\.js$/, ".ts")))
          .filter((target) => existsSync(target));
        graph.set(path, targets);
      }
    }
  };
  walk(join(PACKAGE_ROOT, "src"));
  return graph;
}

/** The strongly connected components of more than one module (Tarjan's algorithm): each is an import circle. */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      for (let w = stack.pop()!; ; w = stack.pop()!) {
        onStack.delete(w);
        component.push(relative(PACKAGE_ROOT, w));
        if (w === v) break;
      }
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test("no import circle in src/, type-only imports included", () => {
  const graph = importGraph();
  assert.ok(graph.size > 100, `read ${graph.size} modules`);
  assert.deepEqual(circles(graph), []);
});

test("the check sees a circle where there is one", () => {
  const graph = new Map(
    [
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", ["a.ts"]],
    ].map(([k, v]) => [join(PACKAGE_ROOT, k as string), (v as string[]).map((x) => join(PACKAGE_ROOT, x))]),
  );
  assert.deepEqual(circles(graph), [["a.ts", "b.ts", "c.ts"]]);
});
