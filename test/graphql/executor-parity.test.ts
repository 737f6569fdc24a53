import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { AppProbes } from "../../src/app/app-probes.js";
import type { App } from "../../src/app/create-app.js";
import { graphql, startTestApp } from "../support/app.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

/**
 * The live inventory's queries and the capacity report run on graphql-jit from their first
 * sighting on (src/performance/executor.ts). The reference is the same cluster served with the
 * answer cache off (plain graphql-js). Each case is sent three times to the compiled app: the
 * three answers (status, content type, body bytes) must be the reference's, and the probe must
 * show whether the compiled path ran.
 */
const NODE_FIELDS = `
  id cluster name uid createdAt
  labels { key value } annotations { key value } taints { key value effect }
  roles zone region instanceType unschedulable ready status label(key: "kubernetes.io/arch")
  conditions { type status reason message lastHeartbeatTime lastTransitionTime }
  addresses { type address }
  nodeInfo { kubeletVersion containerRuntimeVersion containerRuntime containerRuntimeRelease osImage kernelVersion operatingSystem architecture }
  capacity { cpuMillicores memoryBytes pods ephemeralStorageBytes quantities { key value } }
  allocatable { cpuMillicores memoryBytes pods ephemeralStorageBytes quantities { key value } }
  requests { cpuMillicores memoryBytes } limits { cpuMillicores memoryBytes }
  podCount usage { cpuMillicores memoryBytes cpuPercent memoryPercent timestamp }
  pods { namespace name phase ownerKind daemonSet mirror requests { cpuMillicores memoryBytes } }`;

const CAPACITY_FIELDS = `
  key { dimension value } nodeCount readyNodeCount schedulableNodeCount
  cpu { unit capacity allocatable requests limits usage headroom requestRatio overcommitRatio usageRatio }
  memory { unit capacity allocatable requests limits usage headroom requestRatio overcommitRatio usageRatio }
  pods { allocatable requests headroom } ephemeralStorage { allocatable requests }
  extended { name figures { unit capacity allocatable requests limits } }`;

interface Case {
  name: string;
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  /** Whether the live-inventory executor compiles it (false: graphql-js runs it every time). */
  compiled: boolean;
}

const CASES: Case[] = [
  {
    name: "every field of every node (the bench's kind of answer)",
    query: `{ nodes(first: 1000) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { ${NODE_FIELDS} } } } }`,
    compiled: true,
  },
  {
    name: "the README's live-inventory example",
    query: `{
      clusters { name connected synced nodeCount readyNodeCount metricsAvailable lastError }
      nodes(filter: { labelSelector: "topology.kubernetes.io/zone in (eu-west-1a,eu-west-1b),!spot", ready: true }, orderBy: { field: CPU_USAGE, direction: DESC }, first: 20) {
        totalCount pageInfo { hasNextPage endCursor }
        edges { node { id status roles zone instanceType nodeInfo { kubeletVersion containerRuntime containerRuntimeRelease }
          allocatable { cpuMillicores memoryBytes pods } requests { cpuMillicores memoryBytes } usage { cpuMillicores cpuPercent memoryPercent }
          taints { key value effect } pods(namespace: "kube-system") { name daemonSet mirror } } }
      }
    }`,
    compiled: true,
  },
  {
    name: "aliases, fragments, __typename, @skip and @include",
    query: `query($skip: Boolean!) { __typename all: nodes(first: 3, orderBy: { field: POD_COUNT, direction: DESC }) { edges { node { ...N n2: name __typename usage @skip(if: $skip) { cpuPercent } } } } one: nodes(first: 1) { edges { node { name @include(if: $skip) } } } } fragment N on Node { name podCount ready }`,
    variables: { skip: true },
    compiled: true,
  },
  {
    name: "a variable of an input type",
    query: `query($f: NodeFilter, $first: Int) { nodes(filter: $f, first: $first) { totalCount edges { node { name roles } } } }`,
    variables: { f: { roles: ["worker"], schedulable: true }, first: 4 },
    compiled: true,
  },
  { name: "the next page by cursor", query: `query($after: String) { nodes(first: 2, after: $after) { edges { cursor node { name } } } }`, variables: { after: null }, compiled: true },
  {
    name: "one node by name",
    query: `query($n: String!) { node(name: $n) { name status conditions { type status lastTransitionTime } pods(namespace: "kube-system") { name } } }`,
    variables: { n: "" },
    compiled: true,
  },
  {
    name: "history fields below the live nodes (batched loaders, async)",
    query: `{ nodes(first: 5) { edges { node { name conditionTransitions(type: "Ready", first: 5) { type to at } maintenanceEvents(first: 3) { kind at } activeDrain { id } } } } }`,
    compiled: true,
  },
  { name: "an operation chosen by name", query: `query A { clusters { name } } query B { nodes(first: 2) { edges { node { name } } } }`, operationName: "B", compiled: true },
  {
    name: "a capacity report by node, with a pod shape asking for hugepages",
    query: `{ capacityReport(groupBy: [{ by: LABEL, labelKey: "kubernetes.io/hostname" }], podShape: { cpu: "500m", memory: "1Gi", tolerations: [{ operator: "Exists" }], extended: [{ name: "hugepages-2Mi", quantity: "4Mi" }] }) {
      groupBy incompleteClusters podShape { cpuMillicores memoryBytes extended { name value quantity } }
      groups { ${CAPACITY_FIELDS} fit { pods nodesWithRoom nodesExcluded } trends { samples } }
      total { nodeCount fit { pods } } } }`,
    compiled: true,
  },
  {
    name: "a capacity report by cluster, pool and zone with trends of a past day (read from the database)",
    query: `{ capacityReport(groupBy: [{ by: CLUSTER }, { by: NODE_POOL }, { by: ZONE }], trendsSince: "2020-01-01T00:00:00Z", trendsUntil: "2020-01-02T00:00:00Z") {
      groups { ${CAPACITY_FIELDS} trends { from to samples cpu { peakUsage p95Usage peakRequests p95Requests } memory { peakUsage p95Usage } } }
      total { nodeCount trends { samples } } } }`,
    compiled: true,
  },
  { name: "a capacity report of an unknown cluster (NOT_FOUND)", query: `{ capacityReport(cluster: "nope") { total { nodeCount } } }`, compiled: true },
  { name: "a capacity report grouped by a label without its key (BAD_USER_INPUT)", query: `{ capacityReport(groupBy: [{ by: LABEL }]) { total { nodeCount } } }`, compiled: true },
  // Errors: the same messages, codes, paths and locations, and the same nulls.
  { name: "an unknown node (NOT_FOUND, nullable field)", query: `{ node(name: "no-such-node") { name } clusters { name } }`, compiled: true },
  { name: "an unknown cluster (NOT_FOUND on a non-null root)", query: `{ nodes(cluster: "nope") { totalCount } }`, compiled: true },
  { name: "a page too large (BAD_USER_INPUT)", query: `{ nodes(first: 5001) { totalCount } }`, compiled: true },
  { name: "a bad label selector (BAD_USER_INPUT)", query: `{ nodes(filter: { labelSelector: "a in (" }) { totalCount } }`, compiled: true },
  { name: "a bad cursor", query: `{ nodes(after: "not-a-cursor") { totalCount } }`, compiled: true },
  { name: "an error deep inside one node among good ones", query: `{ a: node(name: "no-such-node") { name } b: nodes(first: 2) { edges { node { name } } } }`, compiled: true },
  { name: "a missing required variable (graphql-js coerces)", query: `query($n: String!) { node(name: $n) { name } }`, variables: {}, compiled: false },
  { name: "a variable of the wrong type", query: `query($first: Int) { nodes(first: $first) { totalCount } }`, variables: { first: "ten" }, compiled: false },
  // Not large-answer queries: graphql-js every time.
  { name: "a query mixing live and other root fields", query: `{ nodes(first: 1) { totalCount } service { version } }`, compiled: false },
  { name: "introspection", query: `{ __schema { queryType { name } } __type(name: "Node") { fields { name } } }`, compiled: false },
  { name: "a mutation refused for a missing node", query: `mutation { cordonNode(name: "no-such-node", reason: "parity") { name } }`, compiled: false },
];

describe("the compiled executor answers as graphql-js does", () => {
  let cluster: SimWithKubeconfig;
  let app: App;
  let url: string;
  let probes: AppProbes;
  let plain: App;
  let plainUrl: string;

  before(async () => {
    // A frozen clock and no churn: nothing changes between the three sendings of a case.
    cluster = await startSimWithKubeconfig({ nodes: 12, seed: 1, clockSpeed: 0, name: "sim" });
    const clusters = { kubeconfigs: [cluster.kubeconfigPath], contexts: [] };
    ({ app, url, probes } = await startTestApp({ clusters }, { clusterTuning: { metricsIntervalMs: 100 } }));
    ({ app: plain, url: plainUrl } = await startTestApp({ clusters, answerCache: false }, { clusterTuning: { metricsIntervalMs: 100 } }));
    for (const u of [url, plainUrl]) {
      await eventually(async () => (await graphql(u, "{ clusters { synced metricsAvailable } }")).body.data?.clusters[0]?.metricsAvailable, "sync", 30_000);
      // The first reconcile's history is written before the cases read it.
      await eventually(
        async () => {
          const { body } = await graphql(u, "{ service { history { recordedTransitions pendingWrites } } }");
          return body.data?.service.history.recordedTransitions > 0 && body.data.service.history.pendingWrites === 0;
        },
        "history written",
        30_000,
      );
    }
  });
  after(async () => {
    await app?.stop();
    await plain?.stop();
    await cluster?.stop();
  });

  for (const c of CASES) {
    test(c.name, async () => {
      const variables = c.name === "one node by name" ? { n: cluster.sim.cluster.nodeNames()[3] } : c.variables;
      const send = async (to = url) => {
        const response = await fetch(`${to}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/graphql-response+json" },
          body: JSON.stringify({ query: c.query, variables, operationName: c.operationName }),
        });
        return { status: response.status, type: response.headers.get("content-type"), body: await response.text() };
      };
      const before = probes.compiledOperations();
      const byGraphqlJs = await send(plainUrl);
      const first = await send();
      assert.equal(probes.compiledOperations(), before + (c.compiled ? 1 : 0), c.compiled ? "compiled at its first sighting" : "never compiled");
      const second = await send();
      const third = await send();
      assert.equal(probes.compiledOperations(), before + (c.compiled ? 1 : 0), c.compiled ? "compiled once, then reused" : "never compiled");
      assert.deepEqual(first, byGraphqlJs);
      assert.deepEqual(second, byGraphqlJs);
      assert.deepEqual(third, byGraphqlJs);
      // The case is about what it says: errors where it expects them, data where it does not.
      const body = JSON.parse(byGraphqlJs.body);
      assert.equal(Boolean(body.errors), /NOT_FOUND|BAD_USER_INPUT|error|wrong|missing|refused|bad/i.test(c.name), JSON.stringify(body).slice(0, 500));
    });
  }
});
