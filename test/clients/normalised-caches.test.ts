/**
 * The clients portals are built with, against the real app: Apollo Client 4's InMemoryCache
 * with relayStylePagination and urql's graphcache with relayPagination and no `keys` at all
 * (so every object they normalise is normalised by its own `id`), each paging the live
 * inventory and a history connection forwards and then back, with nothing warned.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import "./apollo-development.js";
import { ApolloClient, gql, HttpLink, InMemoryCache } from "@apollo/client";
import { relayStylePagination } from "@apollo/client/utilities";
import { Client, fetchExchange } from "@urql/core";
import { cacheExchange } from "@urql/exchange-graphcache";
import { relayPagination } from "@urql/exchange-graphcache/extras";
import type { App } from "../../src/app/create-app.js";
import { bearer, tokensFile, TOKENS } from "../auth/support.js";
import { graphql, startTestApp } from "../support/app.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const NODES = `query Nodes($first: Int, $after: String, $last: Int, $before: String) {
  clusters { id name nodeCount }
  nodes(first: $first, after: $after, last: $last, before: $before) {
    totalCount
    edges { cursor node { id cluster name status } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;
const CHANGES = `query Changes($first: Int, $after: String, $last: Int, $before: String) {
  nodeChanges(first: $first, after: $after, last: $last, before: $before) {
    totalCount
    edges { cursor node { id cluster node kind at } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;

/** Every warning and error a client library prints while `run` runs. */
async function warningsDuring(run: () => Promise<void>): Promise<string[]> {
  const said: string[] = [];
  const { warn, error } = console;
  console.warn = (...args: unknown[]) => void said.push(args.map(String).join(" "));
  console.error = (...args: unknown[]) => void said.push(args.map(String).join(" "));
  try {
    await run();
  } finally {
    Object.assign(console, { warn, error });
  }
  return said;
}

describe("normalised client caches page both ways without a warning", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;
  let tokens: ReturnType<typeof tokensFile>;
  /** What the service lists, in its order: node ids and node change ids. */
  let allNodes: string[];
  let allChanges: string[];

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 8, seed: 5, clockSpeed: 0 });
    tokens = tokensFile();
    ({ app, url } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] }, auth: { tokensFile: tokens.path } }));
    const viewer = bearer(TOKENS.viewer);
    // Every simulated node recorded as created: a history connection of a known length.
    const listed = await eventually(async () => {
      const { body } = await graphql(url, "{ nodes(first: 5000) { edges { node { id } } } nodeChanges(first: 5000, filter: { kinds: [CREATED] }) { edges { node { id } } } }", undefined, viewer);
      const nodes = body.data?.nodes.edges.map((e: { node: { id: string } }) => e.node.id) ?? [];
      return nodes.length === 8 && body.data.nodeChanges.edges.length >= nodes.length ? body.data : undefined;
    }, "the nodes and their CREATED changes", 30_000);
    allNodes = listed.nodes.edges.map((e: { node: { id: string } }) => e.node.id);
    allChanges = (await graphql(url, "{ nodeChanges(first: 5000) { edges { node { id } } } }", undefined, viewer)).body.data.nodeChanges.edges.map((e: { node: { id: string } }) => e.node.id);
  });
  after(async () => {
    await app?.stop();
    await sim?.stop();
    tokens?.remove();
  });

  test("Apollo Client 4: InMemoryCache with relayStylePagination", async () => {
    const client = new ApolloClient({
      link: new HttpLink({ uri: `${url}/graphql`, headers: bearer(TOKENS.viewer) }),
      cache: new InMemoryCache({ typePolicies: { Query: { fields: { nodes: relayStylePagination(["cluster", "filter", "orderBy"]), nodeChanges: relayStylePagination(["filter"]) } } } }),
    });
    const said = await warningsDuring(async () => {
      for (const [query, field, all] of [[NODES, "nodes", allNodes], [CHANGES, "nodeChanges", allChanges]] as const) {
        const document = gql(query);
        // Each page from the network; relayStylePagination answers with the pages merged.
        const page = async (variables: Record<string, unknown>) => ((await client.query({ query: document, variables, fetchPolicy: "network-only" })).data as any)[field];
        const ids = (connection: any) => connection.edges.map((e: any) => e.node.id);
        const first = await page({ first: 3 });
        assert.deepEqual(ids(first), all.slice(0, 3));
        const more = await page({ first: 3, after: first.pageInfo.endCursor });
        assert.deepEqual(ids(more), all.slice(0, 6));
        // From the far end backwards: the last page, merged after what is cached.
        const end = await page({ last: 2 });
        assert.deepEqual(ids(end).slice(-2), all.slice(-2));
        const cached = client.cache.readQuery({ query: document, variables: {} }) as any;
        assert.equal(cached[field].totalCount, all.length);
        // The page before the second page's start: the first page, already held.
        const back = await page({ last: 3, before: more.edges[3].cursor });
        assert.deepEqual(ids(back).slice(0, 3), all.slice(0, 3));
        assert.equal(back.pageInfo.hasPreviousPage, false);
      }
      // Normalised by id: every cluster and node has an entry of its own.
      const entries = Object.keys(client.cache.extract() as object);
      assert.ok(entries.some((key) => key.startsWith("Cluster:")), entries.join());
      assert.ok(entries.includes(`Node:${allNodes[0]}`));
    });
    assert.deepEqual(said, []);
    client.stop();
  });

  test("urql graphcache with relayPagination and no keys, over urql's default GET", async () => {
    const client = new Client({
      url: `${url}/graphql`,
      fetchOptions: { headers: bearer(TOKENS.viewer) },
      exchanges: [cacheExchange({ resolvers: { Query: { nodes: relayPagination(), nodeChanges: relayPagination() } } }), fetchExchange],
    });
    const said = await warningsDuring(async () => {
      for (const [query, field, all] of [[NODES, "nodes", allNodes], [CHANGES, "nodeChanges", allChanges]] as const) {
        const first = await client.query(query, { first: 3 }).toPromise();
        assert.equal(first.error, undefined, String(first.error));
        const endCursor = first.data[field].pageInfo.endCursor;
        const merged = await client.query(query, { first: 3, after: endCursor }).toPromise();
        // relayPagination answers with every page fetched so far, merged.
        assert.deepEqual(merged.data[field].edges.map((e: any) => e.node.id), all.slice(0, 6));
        const last = await client.query(query, { last: 2 }).toPromise();
        assert.deepEqual(last.data[field].edges.map((e: any) => e.node.id).slice(-2), all.slice(-2));
        const before = await client.query(query, { last: 2, before: last.data[field].pageInfo.startCursor }).toPromise();
        assert.equal(before.error, undefined, String(before.error));
        assert.deepEqual(before.data[field].edges.map((e: any) => e.node.id).slice(-4), all.slice(-4));
      }
    });
    assert.deepEqual(said, []);
  });

  test("a GET with a bearer token and no content type is served: a browser cannot send one unasked", async () => {
    const withToken = await fetch(`${url}/graphql?query=${encodeURIComponent("{ __typename }")}`, { headers: bearer(TOKENS.viewer) });
    assert.deepEqual([withToken.status, await withToken.json()], [200, { data: { __typename: "Query" } }]);
  });
});
