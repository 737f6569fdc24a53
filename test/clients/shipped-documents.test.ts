/**
 * Every GraphQL document the web UI (web/ui) and the CLI (src/cli) send, validated against
 * schema.graphql: a schema change that breaks one of them fails here, not in a user's browser.
 * Documents are the template literals that start with `query`, `mutation` or `subscription`;
 * `${NAME}` of a constant of the same file (else of another file scanned) is filled in. The few built from parts at
 * run time are named below, so a new document that cannot be read this way fails the test.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { buildSchema, parse, validate } from "graphql";
import { PACKAGE_ROOT } from "../../src/package-info.js";
import { SCHEMA_SDL } from "../../src/graphql/schema.js";

/** Documents built from parts at run time, by file: checked by the tests of their features. */
const BUILT_AT_RUN_TIME: Record<string, number> = { "web/ui/reports/trends-section.tsx": 1, "src/cli/fleet-commands.ts": 1 };

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

test("every document of the web UI and the CLI is valid against the schema", () => {
  const schema = buildSchema(SCHEMA_SDL);
  const invalid: string[] = [];
  const dynamic: Record<string, number> = {};
  let checked = 0;
  const files = [...sources(join(PACKAGE_ROOT, "web", "ui")), ...sources(join(PACKAGE_ROOT, "src", "cli"))];
  const constantsOf = (text: string) => new Map([...text.matchAll(/const ([A-Z][A-Z0-9_]*) =\s*(?:`([^`$]*)`|"([^"]*)")/g)].map((m) => [m[1]!, m[2] ?? m[3]!]));
  const everywhere = new Map(files.flatMap((file) => [...constantsOf(readFileSync(file, "utf8"))]));
  for (const file of files) {
    const name = relative(PACKAGE_ROOT, file);
    const text = readFileSync(file, "utf8");
    const constants = constantsOf(text);
    for (const [, body] of text.matchAll(/`((?:query|mutation|subscription)\b[^`]*)`/g)) {
      const document = body!.replace(/\$\{([A-Z][A-Z0-9_]*)\}/g, (whole, constant: string) => constants.get(constant) ?? everywhere.get(constant) ?? whole);
      if (document.includes("${")) {
        dynamic[name] = (dynamic[name] ?? 0) + 1;
        continue;
      }
      checked++;
      for (const error of validate(schema, parse(document))) invalid.push(`${name}: ${error.message}`);
    }
  }
  assert.deepEqual(invalid, []);
  assert.deepEqual(dynamic, BUILT_AT_RUN_TIME);
  assert.ok(checked >= 20, `only ${checked} documents found`);
});
