import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import type { App } from "../../src/app/create-app.js";
import { migrate } from "../../src/db/migrator.js";
import { createLogger } from "../../src/log/logger.js";
import { graphql, startTestApp } from "../support/app.js";
import { runCli } from "../support/cli.js";
import { BACKENDS } from "../support/databases.js";

const NOT_CONFIGURED = 'cluster "prod" is not configured (clusters: sim)';
const NOT_KNOWN = 'cluster "prod" is not configured and has no recorded history (clusters: sim)';
const PERIOD = 'from: "2026-01-01T00:00:00Z", to: "2026-01-02T00:00:00Z"';

/** The one rule: a cluster the service does not know is NOT_FOUND, whoever asks. */
describe("a cluster that is not configured", () => {
  let app: App;
  let url: string;
  before(async () => ({ app, url } = await startTestApp()));
  after(() => app.stop());

  const cases: [string, string, string][] = [
    ["nodes", `{ nodes(cluster: "prod") { totalCount } }`, NOT_CONFIGURED],
    ["node", `{ node(cluster: "prod", name: "a") { name } }`, NOT_CONFIGURED],
    ["capacityReport", `{ capacityReport(cluster: "prod") { total { nodeCount } } }`, NOT_CONFIGURED],
    ["conditionTransitions", `{ conditionTransitions(filter: { cluster: "prod" }) { edges { cursor } } }`, NOT_KNOWN],
    ["maintenanceEvents", `{ maintenanceEvents(filter: { cluster: "prod" }) { edges { cursor } } }`, NOT_KNOWN],
    ["availabilityReport", `{ availabilityReport(cluster: "prod", ${PERIOD}) { total { nodeCount } } }`, NOT_KNOWN],
    ["cordonNode", `mutation { cordonNode(cluster: "prod", name: "a") { name } }`, NOT_CONFIGURED],
    ["drainNode", `mutation { drainNode(cluster: "prod", name: "a", options: { dryRun: true }) { id } }`, NOT_CONFIGURED],
  ];
  for (const [field, query, message] of cases) {
    test(`${field} answers NOT_FOUND naming the configured clusters`, async () => {
      const { body } = await graphql(url, query);
      assert.equal(body.errors?.length, 1, JSON.stringify(body));
      assert.equal(body.errors![0].extensions.code, "NOT_FOUND");
      assert.equal(body.errors![0].message, message);
    });
  }

  for (const subscription of [`subscription { nodeStatusChanged(cluster: "prod") { name } }`, `subscription { maintenanceEvents(cluster: "prod") { kind } }`]) {
    test(`${subscription.split(/[ (]/)[2]} over graphql-ws errors at once with NOT_FOUND (never a stream that waits)`, async () => {
      const client = createClient({ url: `${url.replace(/^http/, "ws")}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
      try {
        const result = await new Promise<{ errors?: readonly any[] }>((resolve, reject) => {
          client.subscribe({ query: subscription }, { next: (value) => resolve(value), error: reject, complete: () => reject(new Error("completed without an answer")) });
        });
        assert.equal(result.errors![0].extensions.code, "NOT_FOUND");
        assert.equal(result.errors![0].message, NOT_CONFIGURED);
      } finally {
        await client.dispose();
      }
    });
  }

  test("the CLI's reports exit 1 with the code, through the service", async () => {
    const availability = await runCli(["report", "availability", "--url", url, "--cluster", "prod", "--since", "1d"]);
    assert.equal(availability.code, 1);
    assert.equal(availability.stderr, `node-inventory: NOT_FOUND: ${NOT_KNOWN}\n`);
    const capacity = await runCli(["report", "capacity", "--url", url, "--cluster", "prod"]);
    assert.equal(capacity.code, 1);
    assert.equal(capacity.stderr, `node-inventory: NOT_FOUND: ${NOT_CONFIGURED}\n`);
  });
});

describe("straight from the database, a cluster it holds no history of", () => {
  test("report availability --database-url exits 1 with NOT_FOUND", async () => {
    const fresh = await BACKENDS.find((b) => b.name === "postgres")!.create();
    const db = await fresh.open();
    try {
      await db.withConnection((c) => migrate(c, createLogger("silent")));
      const { code, stderr } = await runCli(["report", "availability", "--cluster", "prod", "--since", "1d"], { DATABASE_URL: (fresh.config as { url: string }).url });
      assert.equal(code, 1);
      assert.equal(stderr, 'node-inventory: NOT_FOUND: cluster "prod" is not configured and has no recorded history\n');
    } finally {
      await db.close();
      await fresh.drop();
    }
  });
});
