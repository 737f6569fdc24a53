import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { loadConfig } from "../../src/config/config.js";
import { SHIPPED_OPERATIONS } from "../../src/observability/operation-names.js";
import { PACKAGE_ROOT } from "../../src/package-info.js";
import { graphql, startTestApp } from "../support/app.js";
import { servedMeanwhile } from "./support.js";

/** The `node_inventory_graphql_operations_total` series of a scrape, by their `operation` label. */
async function operationCounts(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const counts = new Map<string, number>();
  for (const match of text.matchAll(/^node_inventory_graphql_operations_total\{operation="([^"]*)",[^}]*\} (\d+)$/gm)) {
    counts.set(match[1]!, (counts.get(match[1]!) ?? 0) + Number(match[2]));
  }
  return counts;
}

describe("/metrics names only the operations it was told to, whatever callers send", () => {
  let app: App;
  let url: string;
  before(async () => ({ app, url } = await startTestApp({ metricsOperations: loadConfig(["--metrics-operations", "Mine, Dashboard"], {}).metricsOperations! })));
  after(() => app.stop());

  test("400 invented names count as other and leave the shipped and configured names their own", async () => {
    for (let i = 0; i < 400; i++) await graphql(url, `query Invented${i} { __typename }`);
    await graphql(url, "query Fleet { __typename }");
    await graphql(url, "query Mine { __typename }");
    await graphql(url, "{ __typename }");
    const counts = await operationCounts(url);
    assert.deepEqual(Object.fromEntries([...counts].sort()), { Fleet: 1, Mine: 1, anonymous: 1, other: 400 });
    await servedMeanwhile(url);
    assert.throws(() => loadConfig(["--metrics-operations", "ok,not-a-name"], {}), /--metrics-operations: "not-a-name" is not a GraphQL operation name/);
  });
});

test("every operation the web UI and the CLI name is on the shipped list", () => {
  const named = new Set<string>();
  for (const dir of ["web/ui", "src/cli"]) {
    for (const file of readdirSync(join(PACKAGE_ROOT, dir), { recursive: true, encoding: "utf8" })) {
      if (!/\.tsx?$/.test(file)) continue;
      for (const match of readFileSync(join(PACKAGE_ROOT, dir, file), "utf8").matchAll(/`(?:query|mutation|subscription) ([A-Z]\w*)/g)) named.add(match[1]!);
    }
  }
  assert.deepEqual(
    [...named].filter((name) => !SHIPPED_OPERATIONS.includes(name)),
    [],
  );
  assert.ok(named.size >= 15, `found ${named.size} names`);
});
