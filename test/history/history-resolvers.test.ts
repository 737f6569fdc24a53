import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { graphql, type ExecutionResult, type GraphQLSchema } from "graphql";
import type { CachedNode } from "../../src/cluster/model.js";
import type { Database } from "../../src/db/database.js";
import type { RequestContext } from "../../src/graphql/context.js";
import { formatError } from "../../src/graphql/errors.js";
import { buildSchema, type Resolvers } from "../../src/graphql/schema.js";
import { HistoryQueries } from "../../src/history/history-queries.js";
import { historyQueryResolvers } from "../../src/history/history-resolvers.js";
import { createLogger } from "../../src/log/logger.js";
import { BACKENDS } from "../support/databases.js";
import { at, countingDatabase, migratedDatabase, seed, type StatementCounts } from "./history-fixtures.js";

const logger = createLogger("silent");
const BIG = 500;
const bigNode = (i: number) => `big-${String(i).padStart(3, "0")}`;

/**
 * Query.nodes and Query.node standing in for the inventory: parents shaped as CachedNode
 * ({cluster, name}) are all the history fields read.
 */
function inventoryStub(): Resolvers {
  const stubNode = (cluster: string, name: string) => ({ cluster, name }) as CachedNode;
  const nodes = Array.from({ length: BIG }, (_, i) => stubNode("big", bigNode(i)));
  return {
    Query: {
      nodes: () => ({
        edges: nodes.map((node) => ({ cursor: node.name, node })),
        pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
        totalCount: nodes.length,
      }),
      node: (_root, args) => stubNode(args.cluster ?? "prod", args.name),
    },
  };
}

function context(): RequestContext {
  return { requestId: "test", logger, loaders: new Map() };
}

/** Executes `source` as one request; `data` comes back as plain JSON, as a client would read it. */
async function run(schema: GraphQLSchema, source: string, variableValues?: Record<string, unknown>): Promise<ExecutionResult<any>> {
  const result = await graphql({ schema, source, variableValues, contextValue: context() });
  return result.data == null ? result : { ...result, data: JSON.parse(JSON.stringify(result.data)) };
}

/** The errors as a client would see them, through the one formatter. */
function clientErrors(result: ExecutionResult): { message: string; path?: readonly (string | number)[]; code: unknown }[] {
  return (result.errors ?? []).map((error) => {
    const formatted = formatError(error.toJSON(), error);
    return { message: formatted.message, ...(formatted.path ? { path: formatted.path } : {}), code: formatted.extensions?.code };
  });
}

for (const backend of BACKENDS) {
  describe(`history resolvers on ${backend.name}`, () => {
    let db: Database;
    let dispose: () => Promise<void>;
    let counts: StatementCounts;
    let schema: GraphQLSchema;

    before(async () => {
      ({ db, dispose } = await migratedDatabase(backend));
      await seed(db);
      // Each big node: a Ready flap (False at i, True at i + 1000) and, for even nodes, a cordon.
      await db.prisma.conditionTransition.createMany({
        data: Array.from({ length: BIG }, (_, i) => [
          { cluster: "big", node: bigNode(i), type: "Ready", from: "True", to: "False", at: at(i) },
          { cluster: "big", node: bigNode(i), type: "Ready", from: "False", to: "True", at: at(i + 1000) },
        ]).flat(),
      });
      await db.prisma.maintenanceEvent.createMany({
        data: Array.from({ length: BIG / 2 }, (_, j) => ({
          cluster: "big",
          node: bigNode(2 * j),
          kind: "CORDONED",
          actor: "alice",
          at: at(j),
          dedupeKey: `big-${j}`,
        })),
      });
      const counting = countingDatabase(db);
      counts = counting.counts;
      schema = buildSchema([inventoryStub(), historyQueryResolvers(new HistoryQueries(counting.database))]);
    });
    after(() => dispose());

    test("a page of 500 nodes costs one database query per history field", async () => {
      counts.reset();
      const result = await run(
        schema,
        `{ nodes { edges { node { name
             conditionTransitions(first: 1) { from to at }
             maintenanceEvents { kind actor } } } } }`,
      );
      assert.equal(result.errors, undefined);
      assert.equal(counts.raw, 2);
      assert.equal(counts.total(), 2);
      const edges = result.data.nodes.edges as { node: any }[];
      assert.equal(edges.length, BIG);
      assert.deepEqual(edges[0]!.node, {
        name: "big-000",
        conditionTransitions: [{ from: "FALSE", to: "TRUE", at: "2026-01-01T16:40:00.000Z" }],
        maintenanceEvents: [{ kind: "CORDONED", actor: "alice" }],
      });
      assert.deepEqual(edges[499]!.node, {
        name: "big-499",
        conditionTransitions: [{ from: "FALSE", to: "TRUE", at: at(1499).toISOString() }],
        maintenanceEvents: [],
      });
      for (const [i, { node }] of edges.entries()) {
        assert.equal(node.name, bigNode(i));
        assert.equal(node.conditionTransitions[0].at, at(i + 1000).toISOString());
        assert.equal(node.maintenanceEvents.length, i % 2 === 0 ? 1 : 0);
      }
    });

    test("the same field with other arguments is its own batch, still not one query per node", async () => {
      counts.reset();
      const result = await run(
        schema,
        `query ($since: DateTime) { nodes { edges { node { name
             recent: conditionTransitions(since: $since) { to at }
             all: conditionTransitions { to }
             failures: conditionTransitions(type: "Ready", first: 5) { to }
             none: conditionTransitions(type: "DiskPressure") { to } } } } }`,
        { since: at(1498).toISOString() },
      );
      assert.equal(result.errors, undefined);
      assert.equal(counts.raw, 4);
      const edges = result.data.nodes.edges as { node: any }[];
      assert.deepEqual(edges[0]!.node, {
        name: "big-000",
        recent: [],
        all: [{ to: "TRUE" }, { to: "FALSE" }],
        failures: [{ to: "TRUE" }, { to: "FALSE" }],
        none: [],
      });
      // since is inclusive: big-498's True at 1498 is in, its False at 498 is not.
      assert.deepEqual(edges[498]!.node.recent, [{ to: "TRUE", at: at(1498).toISOString() }]);
    });

    test("each request has its own loaders: nothing is cached from one request to the next", async () => {
      const query = `{ node(cluster: "scratch", name: "s1") { conditionTransitions { message: type to } } }`;
      const before = await run(schema, query);
      assert.deepEqual(before.data, { node: { conditionTransitions: [] } });
      await db.prisma.conditionTransition.create({ data: { cluster: "scratch", node: "s1", type: "Ready", to: "True", at: at(5) } });
      const after = await run(schema, query);
      assert.deepEqual(after.data, { node: { conditionTransitions: [{ message: "Ready", to: "TRUE" }] } });
    });

    test("Query.conditionTransitions serves the contract's connection and pages with its cursors", async () => {
      const query = `query ($after: String) {
        conditionTransitions(filter: { cluster: "prod", node: "n1", type: "Ready" }, first: 2, after: $after) {
          edges { cursor node { id cluster node type from to reason message at } }
          pageInfo { hasNextPage endCursor } } }`;
      const first = await run(schema, query);
      assert.equal(first.errors, undefined);
      const page = first.data.conditionTransitions;
      assert.deepEqual(
        page.edges.map((e: any) => ({ ...e.node, id: typeof e.node.id })),
        [
          { id: "string", cluster: "prod", node: "n1", type: "Ready", from: "FALSE", to: "TRUE", reason: "KubeletReady", message: "t6", at: "2026-01-01T00:40:00.000Z" },
          { id: "string", cluster: "prod", node: "n1", type: "Ready", from: "TRUE", to: "FALSE", reason: "KubeletNotReady", message: "t2", at: "2026-01-01T00:10:00.000Z" },
        ],
      );
      assert.deepEqual(page.pageInfo, { hasNextPage: true, endCursor: page.edges[1].cursor });
      const second = await run(schema, query, { after: page.pageInfo.endCursor });
      assert.deepEqual(
        second.data.conditionTransitions.edges.map((e: any) => [e.node.message, e.node.from]),
        [["t1", null]],
      );
      assert.equal(second.data.conditionTransitions.pageInfo.hasNextPage, false);
    });

    test("Query.conditionTransitions filters by `to` and by a half-open interval", async () => {
      const result = await run(
        schema,
        `{ conditionTransitions(filter: { cluster: "prod", to: TRUE, since: "2026-01-01T00:00:00Z", until: "2026-01-01T00:40:00Z" }) {
             edges { node { message } } } }`,
      );
      assert.deepEqual(
        result.data.conditionTransitions.edges.map((e: any) => e.node.message),
        ["t3", "t1"],
      );
    });

    test("Query.maintenanceEvents serves the contract's connection, filtered by kinds", async () => {
      const result = await run(
        schema,
        `{ maintenanceEvents(filter: { cluster: "prod", kinds: [POD_EVICTED, DRAIN_SUCCEEDED] }) {
             edges { node { cluster node kind actor reason at operationId pod detail } }
             pageInfo { hasNextPage } } }`,
      );
      assert.equal(result.errors, undefined);
      assert.deepEqual(result.data.maintenanceEvents, {
        edges: [
          {
            node: {
              cluster: "prod",
              node: "n1",
              kind: "DRAIN_SUCCEEDED",
              actor: "alice",
              reason: null,
              at: "2026-01-01T00:12:00.000Z",
              operationId: "6f1c1d4e-2a3b-4c5d-8e9f-0a1b2c3d4e5f",
              pod: null,
              detail: "e6",
            },
          },
          {
            node: {
              cluster: "prod",
              node: "n1",
              kind: "POD_EVICTED",
              actor: "alice",
              reason: null,
              at: "2026-01-01T00:05:00.000Z",
              operationId: "6f1c1d4e-2a3b-4c5d-8e9f-0a1b2c3d4e5f",
              pod: "default/web-1",
              detail: "e3",
            },
          },
        ],
        pageInfo: { hasNextPage: false },
      });
    });

    test("Node.maintenanceEvents of one node", async () => {
      const result = await run(schema, `{ node(cluster: "prod", name: "n1") { maintenanceEvents(first: 2) { kind pod } } }`);
      assert.deepEqual(result.data, {
        node: {
          maintenanceEvents: [
            { kind: "DRAIN_SUCCEEDED", pod: null },
            { kind: "POD_EVICTED", pod: "default/web-1" },
          ],
        },
      });
    });

    test("bad arguments are BAD_USER_INPUT on the field that has them, before any query", async () => {
      counts.reset();
      const tooMany = await run(schema, `{ node(cluster: "prod", name: "n1") { conditionTransitions(first: 501) { to } } }`);
      // The field is non-null, so its error nulls the node, as GraphQL says.
      assert.deepEqual(tooMany.data, { node: null });
      assert.deepEqual(clientErrors(tooMany), [{ message: "first: must be at most 500, got 501", path: ["node", "conditionTransitions"], code: "BAD_USER_INPUT" }]);
      const negative = await run(schema, `{ node(cluster: "prod", name: "n1") { maintenanceEvents(first: -1) { kind } } }`);
      assert.deepEqual(clientErrors(negative), [{ message: "first: must be zero or more, got -1", path: ["node", "maintenanceEvents"], code: "BAD_USER_INPUT" }]);
      const zero = await run(schema, `{ node(cluster: "prod", name: "n1") { conditionTransitions(first: 0) { to } maintenanceEvents(first: 0) { kind } } }`);
      assert.deepEqual(zero, { data: { node: { conditionTransitions: [], maintenanceEvents: [] } } });
      assert.equal(counts.total(), 0);

      const cursor = await run(schema, `{ conditionTransitions(after: "not-ours") { edges { cursor } } }`);
      assert.deepEqual(clientErrors(cursor), [{ message: "after: not a cursor of this list", path: ["conditionTransitions"], code: "BAD_USER_INPUT" }]);
      const interval = await run(schema, `{ maintenanceEvents(filter: { since: "2026-01-02T00:00:00Z", until: "2026-01-01T00:00:00Z" }) { edges { cursor } } }`);
      assert.deepEqual(clientErrors(interval), [{ message: "filter.since must be before filter.until", path: ["maintenanceEvents"], code: "BAD_USER_INPUT" }]);
    });

    test("a database that cannot be reached is UNAVAILABLE for clients, with no SQL or connection detail", async () => {
      const broken = await migratedDatabase(backend);
      const brokenSchema = buildSchema([inventoryStub(), historyQueryResolvers(new HistoryQueries(broken.db))]);
      await broken.db.close();
      try {
        const unavailable = { message: "the history database cannot be reached", code: "UNAVAILABLE" };
        const connection = await run(brokenSchema, `{ conditionTransitions { edges { cursor } } }`);
        assert.deepEqual(clientErrors(connection), [{ ...unavailable, path: ["conditionTransitions"] }]);
        const events = await run(brokenSchema, `{ maintenanceEvents { edges { cursor } } }`);
        assert.deepEqual(clientErrors(events), [{ ...unavailable, path: ["maintenanceEvents"] }]);
        const transitions = await run(brokenSchema, `{ node(cluster: "prod", name: "n1") { conditionTransitions { to } } }`);
        assert.deepEqual(clientErrors(transitions), [{ ...unavailable, path: ["node", "conditionTransitions"] }]);
        const nodeEvents = await run(brokenSchema, `{ node(cluster: "prod", name: "n1") { maintenanceEvents { kind } } }`);
        assert.deepEqual(clientErrors(nodeEvents), [{ ...unavailable, path: ["node", "maintenanceEvents"] }]);
      } finally {
        await broken.dispose();
      }
    });
  });
}
