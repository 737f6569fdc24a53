import assert from "node:assert/strict";
import { test } from "node:test";
import { buildSchema, isObjectType } from "graphql";
import type { InventoryService } from "../../src/inventory/inventory-service.js";
import { nodeAnswerFragments, UNCACHED_NODE_FIELDS } from "../../src/inventory/node-answer-fragments.js";
import { SCHEMA_SDL } from "../../src/graphql/schema.js";

test("every Node field of the schema is in exactly one cached group or listed as never cached", () => {
  const node = buildSchema(SCHEMA_SDL).getType("Node");
  assert.ok(isObjectType(node));
  const inSchema = Object.keys(node.getFields()).sort();
  // The groups only name fields; no inventory is read here.
  const grouped = nodeAnswerFragments({} as InventoryService).groups.flatMap((g) => g.fields.filter((f) => f !== "__typename"));
  assert.equal(new Set(grouped).size, grouped.length, "no field in two groups");
  for (const field of UNCACHED_NODE_FIELDS) assert.ok(!grouped.includes(field), `${field} is both cached and not`);
  assert.deepEqual([...grouped, ...UNCACHED_NODE_FIELDS].sort(), inSchema);
});
