import assert from "node:assert/strict";
import { test } from "node:test";
import { pendingSchemaChange } from "../../scripts/schema-engine.js";

test("prisma/schema.prisma and prisma/migrations describe the same database", async () => {
  const change = await pendingSchemaChange();
  assert.equal(change, "", `schema.prisma has changes no migration applies; run npm run migration:new -- <name>:\n${change}`);
});
