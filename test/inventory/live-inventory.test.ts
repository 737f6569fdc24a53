import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { cpuMillicores, bytes } from "../../src/k8s/quantity.js";
import { R } from "../../src/sim/index.js";
import { graphql, startTestApp } from "../support/app.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const NODE_FIELDS = `
  id cluster name uid createdAt
  labels { key value } annotations { key value } taints { key value effect }
  roles zone region instanceType unschedulable ready status
  conditions { type status reason message lastHeartbeatTime lastTransitionTime }
  addresses { type address }
  nodeInfo { kubeletVersion containerRuntimeVersion containerRuntime containerRuntimeRelease osImage kernelVersion operatingSystem architecture }
  capacity { cpuMillicores memoryBytes pods ephemeralStorageBytes quantities { key value } }
  allocatable { cpuMillicores memoryBytes pods ephemeralStorageBytes quantities { key value } }
  requests { cpuMillicores memoryBytes } limits { cpuMillicores memoryBytes }
  podCount usage { cpuMillicores memoryBytes cpuPercent memoryPercent timestamp }
  pods { namespace name phase ownerKind daemonSet mirror }`;

const sortedPairs = (map: Record<string, string> = {}) =>
  Object.keys(map)
    .sort()
    .map((key) => ({ key, value: map[key] }));
const STATUS = { True: "TRUE", False: "FALSE", Unknown: "UNKNOWN" } as Record<string, string>;
const iso = (text?: string) => (text ? new Date(text).toISOString() : null);

/** What the simulator's own object says a node's fields must be. */
function expectedFromObject(o: any) {
  const runtime = o.status.nodeInfo.containerRuntimeVersion as string;
  const resources = (list: Record<string, string>) => ({
    cpuMillicores: cpuMillicores(list.cpu ?? "0"),
    memoryBytes: bytes(list.memory ?? "0"),
    pods: list.pods ? Number(list.pods) : null,
    ephemeralStorageBytes: list["ephemeral-storage"] ? bytes(list["ephemeral-storage"]) : null,
    quantities: sortedPairs(list),
  });
  return {
    id: `sim/${o.metadata.name}`,
    cluster: "sim",
    name: o.metadata.name,
    uid: o.metadata.uid,
    createdAt: iso(o.metadata.creationTimestamp),
    labels: sortedPairs(o.metadata.labels),
    annotations: sortedPairs(o.metadata.annotations),
    taints: (o.spec.taints ?? []).map((t: any) => ({ key: t.key, value: t.value ?? null, effect: t.effect })),
    zone: o.metadata.labels["topology.kubernetes.io/zone"] ?? null,
    region: o.metadata.labels["topology.kubernetes.io/region"] ?? null,
    instanceType: o.metadata.labels["node.kubernetes.io/instance-type"] ?? null,
    unschedulable: o.spec.unschedulable === true,
    ready: STATUS[o.status.conditions.find((c: any) => c.type === "Ready")?.status] ?? "UNKNOWN",
    conditions: o.status.conditions.map((c: any) => ({
      type: c.type,
      status: STATUS[c.status],
      reason: c.reason ?? null,
      message: c.message ?? null,
      lastHeartbeatTime: iso(c.lastHeartbeatTime),
      lastTransitionTime: iso(c.lastTransitionTime),
    })),
    addresses: o.status.addresses,
    nodeInfo: {
      kubeletVersion: o.status.nodeInfo.kubeletVersion,
      containerRuntimeVersion: runtime,
      containerRuntime: runtime.split("://")[0],
      containerRuntimeRelease: runtime.split("://")[1],
      osImage: o.status.nodeInfo.osImage,
      kernelVersion: o.status.nodeInfo.kernelVersion,
      operatingSystem: o.status.nodeInfo.operatingSystem,
      architecture: o.status.nodeInfo.architecture,
    },
    capacity: resources(o.status.capacity),
    allocatable: resources(o.status.allocatable),
  };
}

function expectedPods(pods: any[]) {
  return pods
    .map((p) => {
      const controller = (p.metadata.ownerReferences ?? []).find((r: any) => r.controller);
      return {
        namespace: p.metadata.namespace,
        name: p.metadata.name,
        phase: p.status.phase,
        ownerKind: controller?.kind ?? null,
        daemonSet: controller?.kind === "DaemonSet",
        mirror: Boolean(p.metadata.annotations?.["kubernetes.io/config.mirror"]),
      };
    })
    .sort((a, b) => (a.namespace + "/" + a.name < b.namespace + "/" + b.name ? -1 : 1));
}

/** `kubectl describe node`'s Allocated resources and pod count: the oracle for requests and limits. */
function parseDescribe(text: string) {
  const row = (name: string) => {
    const match = new RegExp(`^\\s+${name}\\s+(\\S+) \\(\\d+%\\)\\s+(\\S+) \\(\\d+%\\)`, "m").exec(text.split("Allocated resources:")[1]!);
    assert.ok(match, `no ${name} row in kubectl describe`);
    return [match[1]!, match[2]!];
  };
  const [cpuRequests, cpuLimits] = row("cpu");
  const [memoryRequests, memoryLimits] = row("memory");
  const pods = /Non-terminated Pods:\s+\((\d+) in total\)/.exec(text);
  return {
    requests: { cpuMillicores: cpuMillicores(cpuRequests!), memoryBytes: bytes(memoryRequests!) },
    limits: { cpuMillicores: cpuMillicores(cpuLimits!), memoryBytes: bytes(memoryLimits!) },
    podCount: Number(pods![1]),
  };
}

describe("live inventory against the simulator", () => {
  let cluster: SimWithKubeconfig;
  let app: App;
  let url: string;

  before(async () => {
    // A frozen clock: metrics only move when the test advances time, so kubectl top and the
    // service see the same sample.
    cluster = await startSimWithKubeconfig({ nodes: 8, seed: 7, clockSpeed: 0, name: "sim" });
    ({ app, url } = await startTestApp({ clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] } }, { clusterTuning: { metricsIntervalMs: 100 } }));
    await eventually(async () => (await graphql(url, "{ clusters { synced metricsAvailable } }")).body.data?.clusters[0]?.metricsAvailable, "sync");
  });
  after(async () => {
    await app.stop();
    await cluster.stop();
  });

  const allNodes = async () => {
    const { body } = await graphql(url, `{ nodes(first: 1000) { totalCount edges { node { ${NODE_FIELDS} } } } }`);
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    return body.data.nodes as { totalCount: number; edges: { node: any }[] };
  };

  test("every node field matches the simulator's object, kubectl get, describe and top", async () => {
    const nodes = await allNodes();
    const objects = cluster.sim.cluster.list(R.nodes);
    assert.equal(nodes.totalCount, objects.length);

    const kubectlGet = new Map(
      (await cluster.kubectl("get", "nodes", "--no-headers"))
        .trim()
        .split("\n")
        .map((line) => line.split(/\s+/))
        .map(([name, status, roles]) => [name, { status, roles: roles === "<none>" ? [] : roles!.split(",") }]),
    );
    const kubectlTop = new Map(
      (await cluster.kubectl("top", "node", "--no-headers"))
        .trim()
        .split("\n")
        .map((line) => line.split(/\s+/))
        .map(([name, cpu, cpuPct, memory, memoryPct]) => [name, { cpu: cpuMillicores(cpu!), cpuPct, memoryMi: memory, memoryPct }]),
    );

    for (const { node } of nodes.edges) {
      const object = objects.find((o) => o.metadata.name === node.name);
      assert.ok(object, `${node.name} exists in the simulator`);
      const { requests, limits, podCount, usage, pods, roles, status, ...fields } = node;
      assert.deepEqual(fields, expectedFromObject(object), node.name);
      assert.deepEqual({ status, roles }, kubectlGet.get(node.name), `${node.name}: kubectl get nodes columns`);
      const described = parseDescribe(await cluster.kubectl("describe", "node", node.name));
      assert.deepEqual({ requests, limits, podCount }, described, `${node.name}: kubectl describe node sums`);
      assert.deepEqual(pods, expectedPods(cluster.sim.cluster.podsOnNode(node.name)), `${node.name}: pods`);
      const top = kubectlTop.get(node.name)!;
      assert.equal(usage.cpuMillicores, top.cpu, `${node.name}: kubectl top cpu`);
      assert.equal(`${Math.floor(usage.cpuPercent)}%`, top.cpuPct, `${node.name}: kubectl top cpu%`);
      assert.equal(`${Math.floor(usage.memoryBytes / 2 ** 20)}Mi`, top.memoryMi, `${node.name}: kubectl top memory`);
      assert.equal(`${Math.floor(usage.memoryPercent)}%`, top.memoryPct, `${node.name}: kubectl top memory%`);
    }
  });

  test("a cordon, a condition change, a new node and a removed node show within a second", async () => {
    const [first, second] = cluster.sim.cluster.nodeNames();
    const nodeQuery = (name: string) => graphql(url, `query($n: String!) { node(name: $n) { unschedulable status conditions { type status } } }`, { n: name });

    cluster.sim.cluster.update(R.nodes, first!, (copy: any) => void (copy.spec.unschedulable = true));
    await eventually(async () => (await nodeQuery(first!)).body.data?.node.status === "Ready,SchedulingDisabled", "cordon seen", 1_000);

    cluster.sim.cluster.setNodeCondition(second!, "Ready", "False", "KubeletNotReady", "simulated");
    await eventually(
      async () => {
        const node = (await nodeQuery(second!)).body.data?.node;
        return node?.status === "NotReady" && node.conditions.find((c: any) => c.type === "Ready").status === "FALSE";
      },
      "NotReady seen",
      1_000,
    );

    const added = cluster.sim.cluster.addNode({ name: "late-joiner" });
    await eventually(async () => (await nodeQuery(added.metadata.name)).body.data?.node, "new node seen", 1_000);

    assert.ok(cluster.sim.cluster.removeNode("late-joiner"));
    await eventually(async () => (await nodeQuery("late-joiner")).body.errors?.[0]?.extensions.code === "NOT_FOUND", "removed node gone", 1_000);

    // After all that, the whole picture still matches the simulator field by field.
    const nodes = await allNodes();
    for (const { node } of nodes.edges) {
      const object = cluster.sim.cluster.get(R.nodes, node.name);
      const { requests: _r, limits: _l, podCount: _p, usage: _u, pods: _pods, roles: _roles, status: _s, ...fields } = node;
      assert.deepEqual(fields, expectedFromObject(object), node.name);
    }
  });

  test("pod churn: pods deleted and replaced converge to the simulator's pods", async () => {
    const name = cluster.sim.cluster.nodeNames()[2]!;
    const victims = cluster.sim.cluster
      .podsOnNode(name)
      .filter((p: any) => !p.metadata.ownerReferences?.some((r: any) => r.kind === "DaemonSet"))
      .slice(0, 3);
    for (const pod of victims) cluster.sim.cluster.deletePod(`${pod.metadata.namespace}/${pod.metadata.name}`, 0);
    cluster.sim.cluster.advance(5_000);
    await eventually(
      async () => {
        const { body } = await graphql(url, `query($n: String!) { node(name: $n) { pods { namespace name phase ownerKind daemonSet mirror } } }`, { n: name });
        return JSON.stringify(body.data?.node.pods) === JSON.stringify(expectedPods(cluster.sim.cluster.podsOnNode(name)));
      },
      "pods converged",
      1_000,
    );
  });

  test("a burst of queries makes no Kubernetes request beyond the watches", async () => {
    const lastBefore = cluster.sim.requestLog().at(-1);
    await Promise.all(Array.from({ length: 50 }, () => graphql(url, `{ clusters { nodeCount } nodes(first: 100) { edges { node { ${NODE_FIELDS} } } } }`)));
    const log = cluster.sim.requestLog();
    const during = log.slice(log.lastIndexOf(lastBefore!) + 1);
    // The metrics poll and the recorder's lease renewal run on their own timers whatever the
    // queries do; anything else would be a query calling Kubernetes.
    const background = /^\/apis\/(metrics\.k8s\.io|coordination\.k8s\.io)\//;
    const unexpected = during.filter((r) => !background.test(r.path));
    assert.deepEqual(
      unexpected.map((r) => `${r.method} ${r.path}`),
      [],
    );
  });

  test("filters, ordering and cursors", async () => {
    const objects = cluster.sim.cluster.list(R.nodes) as any[];
    const names = async (filter: object, orderBy?: object) => {
      const { body } = await graphql(url, `query($f: NodeFilter, $o: NodeOrderBy) { nodes(filter: $f, orderBy: $o, first: 100) { totalCount edges { node { name } } } }`, { f: filter, o: orderBy });
      assert.equal(body.errors, undefined, JSON.stringify(body.errors));
      return body.data.nodes.edges.map((e: any) => e.node.name) as string[];
    };
    const zone = objects[0]!.metadata.labels["topology.kubernetes.io/zone"];
    assert.deepEqual(
      await names({ labelSelector: `topology.kubernetes.io/zone=${zone}` }),
      objects
        .filter((o) => o.metadata.labels["topology.kubernetes.io/zone"] === zone)
        .map((o) => o.metadata.name)
        .sort(),
    );
    assert.deepEqual(
      await names({ schedulable: false }),
      objects
        .filter((o) => o.spec.unschedulable)
        .map((o) => o.metadata.name)
        .sort(),
    );
    assert.deepEqual(
      await names({ ready: true }),
      objects
        .filter((o) => o.status.conditions.find((c: any) => c.type === "Ready").status === "True")
        .map((o) => o.metadata.name)
        .sort(),
    );
    assert.deepEqual(
      await names({ roles: ["control-plane"] }),
      objects
        .filter((o) => "node-role.kubernetes.io/control-plane" in o.metadata.labels)
        .map((o) => o.metadata.name)
        .sort(),
    );

    // Page through by CPU usage, three at a time: every node once, in usage order.
    const seen: { name: string; cpu: number }[] = [];
    let after: string | null = null;
    do {
      const { body }: any = await graphql(
        url,
        `query($a: String) { nodes(first: 3, after: $a, orderBy: { field: CPU_USAGE, direction: DESC }) { totalCount pageInfo { hasNextPage endCursor } edges { node { name usage { cpuMillicores } } } } }`,
        { a: after },
      );
      seen.push(...body.data.nodes.edges.map((e: any) => ({ name: e.node.name, cpu: e.node.usage?.cpuMillicores ?? null })));
      after = body.data.nodes.pageInfo.hasNextPage ? body.data.nodes.pageInfo.endCursor : null;
    } while (after);
    assert.equal(seen.length, objects.length);
    assert.equal(new Set(seen.map((s) => s.name)).size, objects.length);
    // Descending usage; nodes without a sample (a NotReady node has none) come last.
    for (let i = 1; i < seen.length; i++) {
      const [a, b] = [seen[i - 1]!.cpu, seen[i]!.cpu];
      assert.ok(b === null || (a !== null && a >= b), `descending cpu usage, nulls last: ${JSON.stringify(seen)}`);
    }
  });

  const errorCases: [string, string, string, RegExp][] = [
    ["a malformed label selector", `{ nodes(filter: { labelSelector: "zone in (a" }) { totalCount } }`, "BAD_USER_INPUT", /labelSelector.*position \d+/],
    ["a page beyond the cap", `{ nodes(first: 5001) { totalCount } }`, "BAD_USER_INPUT", /5000/],
    ["a cursor that is not one", `{ nodes(after: "garbage") { totalCount } }`, "BAD_USER_INPUT", /after/],
    ["an unknown cluster in nodes", `{ nodes(cluster: "nope") { totalCount } }`, "NOT_FOUND", /cluster "nope"/],
    ["an unknown node", `{ node(name: "nope") { name } }`, "NOT_FOUND", /node "nope" not found in cluster "sim"/],
    ["an unknown cluster in node", `{ node(cluster: "nope", name: "x") { name } }`, "NOT_FOUND", /cluster "nope"/],
  ];
  for (const [what, query, code, message] of errorCases) {
    test(`${what} is ${code} with a message that says what`, async () => {
      const { body } = await graphql(url, query);
      assert.equal(body.errors?.[0]?.extensions?.code, code, JSON.stringify(body));
      assert.match(body.errors![0].message, message);
    });
  }
});
