/**
 * node-inventory as an Apollo Federation 2 subgraph (/subgraph), composed with a second small
 * subgraph (team ownership, which extends Node) by @apollo/composition and queried through
 * @apollo/gateway: nodes come from our cache, owners from the other service, and a node named
 * only by its key in the other subgraph is resolved as an entity from our cache.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ApolloServer } from "@apollo/server";
import { startStandaloneServer } from "@apollo/server/standalone";
import { composeServices } from "@apollo/composition";
import { ApolloGateway, RemoteGraphQLDataSource } from "@apollo/gateway";
import { buildSubgraphSchema } from "@apollo/subgraph";
import { parse, print } from "graphql";
import type { App } from "../../src/app/create-app.js";
import { subgraphTypeDefs } from "../../src/federation/subgraph.js";
import { graphql, startTestApp } from "../support/app.js";
import { startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";
import { bearer, tokensFile, TOKENS } from "../auth/support.js";

const OWNERSHIP_SDL = parse(`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  type Node @key(fields: "id") { id: ID! owner: Team }
  type Team { name: String! nodes: [Node]! }
  type Query { teams: [Team!]! }
`);

describe("node-inventory in a federated supergraph", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;
  let tokens: ReturnType<typeof tokensFile>;
  let ownership: ApolloServer;
  let gateway: ApolloServer;
  let gatewayUrl: string;
  let nodeIds: string[];

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 4, seed: 9, clockSpeed: 0 });
    tokens = tokensFile();
    ({ app, url } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] }, auth: { tokensFile: tokens.path } }));
    nodeIds = sim.sim.cluster.nodeNames().sort().map((name) => `sim/${name}`);
    // The team that owns a node: the first two nodes are "storage", the rest "compute".
    const teamOf = (id: string) => (nodeIds.indexOf(id) < 2 ? "storage" : "compute");
    ownership = new ApolloServer({
      schema: buildSubgraphSchema([{
        typeDefs: OWNERSHIP_SDL,
        resolvers: {
          Node: { owner: ({ id }: { id: string }) => ({ name: teamOf(id) }), __resolveReference: (ref: { id: string }) => ref },
          // The storage team also names a node that no longer exists.
          Team: { nodes: ({ name }: { name: string }) => [...nodeIds.filter((id) => teamOf(id) === name), ...(name === "storage" ? ["sim/deleted-node"] : [])].map((id) => ({ id })) },
          Query: { teams: () => [{ name: "storage" }, { name: "compute" }] },
        },
      }]),
    });
    const { url: ownershipUrl } = await startStandaloneServer(ownership, { listen: { port: 0, host: "127.0.0.1" } });
    const served = await fetch(`${url}/subgraph`, {
      method: "POST",
      headers: { "content-type": "application/json", ...bearer(TOKENS.viewer) },
      body: JSON.stringify({ query: "{ _service { sdl } }" }),
    });
    const sdl = ((await served.json()) as { data: { _service: { sdl: string } } }).data._service.sdl;
    const composed = composeServices([
      { name: "inventory", typeDefs: parse(sdl), url: `${url}/subgraph` },
      { name: "ownership", typeDefs: OWNERSHIP_SDL, url: ownershipUrl },
    ]);
    assert.deepEqual(composed.errors ?? [], []);
    gateway = new ApolloServer({
      gateway: new ApolloGateway({
        supergraphSdl: composed.supergraphSdl!,
        // The gateway authenticates to node-inventory as any client does.
        buildService: ({ url: serviceUrl }) => new RemoteGraphQLDataSource({ url: serviceUrl!, willSendRequest: ({ request }) => request.http?.headers.set("authorization", `Bearer ${TOKENS.viewer}`) }),
      }),
    });
    ({ url: gatewayUrl } = await startStandaloneServer(gateway, { listen: { port: 0, host: "127.0.0.1" } }));
  });
  after(async () => {
    await gateway?.stop();
    await ownership?.stop();
    await app?.stop();
    await sim?.stop();
    tokens?.remove();
  });

  const throughGateway = async (query: string) => {
    const res = await fetch(gatewayUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query }) });
    return (await res.json()) as { data?: any; errors?: unknown[] };
  };

  test("the served SDL is schema.graphql with the keys: Node by id, Cluster by name", async () => {
    const res = await fetch(`${url}/subgraph`, { method: "POST", headers: { "content-type": "application/json", ...bearer(TOKENS.viewer) }, body: JSON.stringify({ query: "{ _service { sdl } }" }) });
    const sdl = ((await res.json()) as any).data._service.sdl as string;
    assert.match(sdl, /type Node\s+@key\(fields: "id"\)\s*\{/);
    assert.match(sdl, /type Cluster\s+@key\(fields: "name"\)\s*\{/);
    assert.ok(print(subgraphTypeDefs()).includes("@link"));
  });

  test("a query through the gateway joins our nodes with their owners", async () => {
    const answer = await throughGateway("{ nodes(first: 10) { totalCount edges { node { id name owner { name } } } } }");
    assert.equal(answer.errors, undefined);
    assert.equal(answer.data.nodes.totalCount, 4);
    assert.deepEqual(
      answer.data.nodes.edges.map((e: any) => [e.node.id, e.node.owner.name]).sort(),
      nodeIds.map((id, i) => [id, i < 2 ? "storage" : "compute"]).sort(),
    );
  });

  test("nodes the other subgraph names by key are entities resolved from our cache", async () => {
    const answer = await throughGateway("{ teams { name nodes { id name cluster allocatable { cpuMillicores } } } }");
    assert.equal(answer.errors, undefined);
    const storage = answer.data.teams.find((t: any) => t.name === "storage");
    // The deleted node is null in its place: the nullable list keeps the rest of the answer.
    assert.equal(storage.nodes.length, 3);
    assert.equal(storage.nodes[2], null);
    assert.deepEqual(storage.nodes.slice(0, 2).map((n: any) => n.id), nodeIds.slice(0, 2));
    for (const node of storage.nodes.slice(0, 2)) {
      const direct = (await graphql(url, `query($n: String!) { node(name: $n) { allocatable { cpuMillicores } } }`, { n: node.name }, bearer(TOKENS.viewer))).body.data.node;
      assert.deepEqual(node.allocatable, direct.allocatable);
      assert.equal(node.cluster, "sim");
    }
  });

  test("it composes with a subgraph that has its own (Relay) PageInfo and KeyValue", () => {
    const tags = parse(`
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@shareable"])
      type PageInfo @shareable { hasNextPage: Boolean! hasPreviousPage: Boolean! startCursor: String endCursor: String }
      type KeyValue @shareable { key: String! value: String! }
      type TagConnection { edges: [KeyValue!]! pageInfo: PageInfo! }
      type Query { tags(first: Int, after: String): TagConnection! }
    `);
    const composed = composeServices([
      { name: "inventory", typeDefs: subgraphTypeDefs(), url: "http://inventory.invalid/subgraph" },
      { name: "tags", typeDefs: tags, url: "http://tags.invalid/graphql" },
    ]);
    assert.deepEqual((composed.errors ?? []).map((e) => e.message), []);
    assert.match(composed.supergraphSdl!, /type PageInfo[^{]*\{[^}]*hasPreviousPage/);
  });

  test("the subgraph is authenticated like /graphql; /graphql itself has no federation fields", async () => {
    const anonymous = await fetch(`${url}/subgraph`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: "{ _service { sdl } }" }) });
    assert.equal(anonymous.status, 401);
    const direct = await graphql(url, "{ _service { sdl } }", undefined, bearer(TOKENS.viewer));
    assert.equal(direct.body.errors?.[0]?.extensions?.code, "GRAPHQL_VALIDATION_FAILED");
  });
});
