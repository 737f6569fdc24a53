/**
 * The schema describes itself: graphql-schema-linter on the committed config
 * (.graphql-schema-linterrc: its rules less the ones that only sort) finds nothing, so every
 * type, field, argument, input field and enum value has a description and the Relay rules hold.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { buildSchema, GraphQLScalarType } from "graphql";
import { PACKAGE_ROOT } from "../../src/package-info.js";
import { SCHEMA_SDL } from "../../src/graphql/schema.js";

test("graphql-schema-linter finds nothing in schema.graphql", () => {
  const linter = join(PACKAGE_ROOT, "node_modules", "graphql-schema-linter", "lib", "cli.js");
  const run = spawnSync(process.execPath, [linter, "--format", "compact", "schema.graphql"], { cwd: PACKAGE_ROOT, encoding: "utf8" });
  assert.deepEqual({ status: run.status, said: (run.stdout + run.stderr).trim() }, { status: 0, said: "" });
});

test("DateTime says which standard it follows", () => {
  const dateTime = buildSchema(SCHEMA_SDL).getType("DateTime") as GraphQLScalarType;
  assert.equal(dateTime.specifiedByURL, "https://datatracker.ietf.org/doc/html/rfc3339");
});
