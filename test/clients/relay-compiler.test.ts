/**
 * Relay's compiler (the relay-compiler package, the real Rust binary) compiles fragments with
 * @connection on the live inventory and on a history connection, paged back with last/before:
 * it refuses @connection on a connection whose PageInfo lacks hasPreviousPage and startCursor.
 * The operations it writes are then valid against the schema.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { after, describe, test } from "node:test";
import { buildSchema, parse, printSchema, validate } from "graphql";
import { PACKAGE_ROOT } from "../../src/package-info.js";
import { SCHEMA_SDL } from "../../src/graphql/schema.js";

const FRAGMENTS = `
import { graphql } from "react-relay";
export const nodes = graphql\`
  fragment Inventory_nodes on Query
  @refetchable(queryName: "InventoryNodesPaginationQuery")
  @argumentDefinitions(count: { type: "Int", defaultValue: 20 }, cursor: { type: "String" }) {
    clusters { id name }
    nodes(first: $count, after: $cursor) @connection(key: "Inventory_nodes") {
      totalCount
      edges { node { id name status } }
    }
  }
\`;
export const changes = graphql\`
  fragment Inventory_changes on Query
  @refetchable(queryName: "InventoryChangesPaginationQuery")
  @argumentDefinitions(count: { type: "Int", defaultValue: 20 }, cursor: { type: "String" }) {
    nodeChanges(last: $count, before: $cursor) @connection(key: "Inventory_nodeChanges") {
      edges { node { id kind at } }
    }
  }
\`;
`;

describe("relay-compiler", () => {
  const dir = mkdtempSync(join(tmpdir(), "relay-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("compiles @connection on nodes and on a history connection paged back", async () => {
    mkdirSync(join(dir, "src"));
    // As a portal gets it: the schema as introspection prints it (Relay reads no `extend input`).
    writeFileSync(join(dir, "schema.graphql"), printSchema(buildSchema(SCHEMA_SDL)));
    writeFileSync(join(dir, "src", "Inventory.js"), FRAGMENTS);
    // Relay writes its artifacts as ES modules.
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
    writeFileSync(join(dir, "relay.config.json"), JSON.stringify({ src: "./src", schema: "./schema.graphql", language: "javascript" }));
    const cli = join(PACKAGE_ROOT, "node_modules", "relay-compiler", "cli.js");
    const { stdout } = await promisify(execFile)(process.execPath, [cli], { cwd: dir });
    assert.match(stdout, /Compilation completed/);
    const generated = join(dir, "src", "__generated__");
    assert.deepEqual(readdirSync(generated).sort(), [
      "InventoryChangesPaginationQuery.graphql.js",
      "InventoryNodesPaginationQuery.graphql.js",
      "Inventory_changes.graphql.js",
      "Inventory_nodes.graphql.js",
    ]);
    const schema = buildSchema(SCHEMA_SDL);
    const textOf = async (name: string): Promise<string> => (await import(pathToFileURL(join(generated, `${name}.graphql.js`)).href)).default.params.text;
    for (const name of ["InventoryNodesPaginationQuery", "InventoryChangesPaginationQuery"]) {
      assert.deepEqual(validate(schema, parse(await textOf(name))).map((e) => e.message), [], name);
    }
    const back = await textOf("InventoryChangesPaginationQuery");
    assert.match(back, /pageInfo \{\s+hasPreviousPage\s+startCursor\s+\}/);
  });
});
