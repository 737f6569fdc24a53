import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { parseQuantity } from "../../src/k8s/quantity.js";
import { allocatableArithmetic, readConfigz } from "../../src/node-lifecycle/kubelet-config.js";
import { modeFromConfig, modeFromFlags } from "../../src/node-lifecycle/kube-proxy-mode.js";
import { graphql, startTestApp } from "../support/app.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const KUBELET = `{ nodes { edges { node { name capacity { quantities { key value } } allocatable { quantities { key value } }
  kubeletConfig { maxPods cgroupDriver kubeReserved { quantities { key value } } systemReserved { quantities { key value } } evictionHard { key value }
    expectedAllocatable { quantities { key value } } allocatableMismatch }
  kubeletConfigUnavailableReason } } } }`;

const entries = (list: { key: string; value: string }[]) => Object.fromEntries(list.map((q) => [q.key, q.value]));

describe("the allocatable arithmetic", () => {
  const config = readConfigz({
    kubeletconfig: { maxPods: 110, cgroupDriver: "systemd", kubeReserved: { cpu: "200m", memory: "1Gi" }, systemReserved: { cpu: "100m", memory: "256Mi" }, evictionHard: { "memory.available": "100Mi", "nodefs.available": "10%" } },
  });
  // An EKS-like node: 100 GiB root volume, whose 10 % the kubelet takes in float32.
  const capacity = { cpu: "4", memory: "16Gi", pods: "110", "ephemeral-storage": "104845292Ki" };
  const explained = { cpu: "3700m", memory: `${16 * 1024 - 1024 - 256 - 100}Mi`, pods: "110", "ephemeral-storage": "96625420948" };

  test("capacity − kubeReserved − systemReserved − evictionHard is the allocatable the kubelet reports", () => {
    const a = allocatableArithmetic({ capacity, allocatable: explained }, config);
    assert.deepEqual(a, { expected: { cpu: "3700m", memory: "15004Mi", "ephemeral-storage": "96625420948", pods: "110" }, mismatched: [] });
  });

  test("an allocatable the configuration does not explain is flagged, resource by resource", () => {
    const a = allocatableArithmetic({ capacity, allocatable: { ...explained, memory: "15000Mi" } }, config);
    assert.deepEqual(a.mismatched, ["memory"]);
  });

  test("a configz of other shapes keeps only what parses", () => {
    assert.deepEqual(readConfigz({ kubeletconfig: { maxPods: "many", kubeReserved: { cpu: "lots", memory: "1Gi" }, evictionHard: { "nodefs.available": "10%", bad: {} } } }), {
      maxPods: null,
      cgroupDriver: null,
      kubeReserved: { memory: "1Gi" },
      systemReserved: {},
      evictionHard: { "nodefs.available": "10%" },
    });
  });
});

describe("Node.kubeletConfig through the node proxy of the simulator", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 4, seed: 33, clockSpeed: 0 });
    ({ app, url } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] } }));
    await eventually(async () => (await graphql(url, "{ clusters { synced } }")).body.data?.clusters[0].synced, "sync", 20_000);
  });
  after(async () => {
    await app?.stop();
    await sim?.stop();
  });

  test("equals what kubectl get --raw reads of each node's configz, and its arithmetic equals allocatable", async () => {
    const { body } = await graphql(url, KUBELET);
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    assert.equal(body.data.nodes.edges.length, 4);
    for (const { node } of body.data.nodes.edges) {
      const raw = JSON.parse(await sim.kubectl("get", "--raw", `/api/v1/nodes/${node.name}/proxy/configz`)).kubeletconfig;
      const k = node.kubeletConfig;
      assert.equal(node.kubeletConfigUnavailableReason, null);
      assert.equal(k.maxPods, raw.maxPods);
      assert.equal(k.cgroupDriver, raw.cgroupDriver);
      assert.deepEqual(entries(k.kubeReserved.quantities), raw.kubeReserved);
      assert.deepEqual(entries(k.systemReserved.quantities), raw.systemReserved);
      assert.deepEqual(entries(k.evictionHard), raw.evictionHard);
      const allocatable = entries(node.allocatable.quantities);
      const expected = entries(k.expectedAllocatable.quantities);
      for (const resource of ["cpu", "memory", "ephemeral-storage", "pods"]) {
        assert.equal(parseQuantity(expected[resource]).nanos, parseQuantity(allocatable[resource]).nanos, `${node.name} ${resource}: ${expected[resource]} against ${allocatable[resource]}`);
      }
      assert.deepEqual(k.allocatableMismatch, []);
    }
  });
});

describe("kube-proxy's mode", () => {
  test("from the DaemonSet's flags, else from the configuration its --config names", () => {
    assert.equal(modeFromFlags(["/usr/local/bin/kube-proxy", "--proxy-mode=ipvs"]), "ipvs");
    assert.equal(modeFromFlags(["kube-proxy", "--proxy-mode", "nftables"]), "nftables");
    assert.equal(modeFromFlags(["/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf", "--hostname-override=$(NODE_NAME)"]), "config");
    assert.equal(modeFromFlags(["kube-proxy"]), undefined);
    assert.equal(modeFromConfig('apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: "ipvs"\n'), "ipvs");
    assert.equal(modeFromConfig("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: \"\"\n"), "iptables");
  });

  test("on each node that runs kube-proxy, as its DaemonSet says", async () => {
    const sim = await startSimWithKubeconfig({ nodes: 3, seed: 38, clockSpeed: 0 });
    const { app, url } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] } });
    try {
      await eventually(async () => (await graphql(url, "{ clusters { synced } }")).body.data?.clusters[0].synced, "sync", 20_000);
      await sim.kubectl("patch", "daemonset", "kube-proxy", "-n", "kube-system", "--type", "json", "-p", JSON.stringify([{ op: "add", path: "/spec/template/spec/containers/0/command", value: ["/usr/local/bin/kube-proxy", "--proxy-mode=ipvs"] }]));
      const modes = await eventually(async () => {
        const r = await graphql(url, "{ nodes { edges { node { name kubeProxyMode } } } }");
        const all = r.body.data?.nodes.edges.map((e: any) => e.node.kubeProxyMode) as (string | null)[] | undefined;
        return all?.every((m) => m === "ipvs") && all;
      }, "every node's mode", 10_000);
      assert.equal(modes.length, 3);
    } finally {
      await app.stop();
      await sim.stop();
    }
  });
});

describe("Node.kubeletConfig without nodes/proxy", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 2, seed: 34, clockSpeed: 0, rbac: true, tls: true });
    // The service's account may read nodes and pods, as the base ClusterRole allows, but not nodes/proxy.
    await sim.kubectl("create", "clusterrole", "inventory-reader", "--verb=get,list,watch", "--resource=nodes,pods,events");
    await sim.kubectl("create", "clusterrolebinding", "inventory-reader", "--clusterrole=inventory-reader", "--serviceaccount=default:default");
    const token = sim.sim.createToken("default", "default");
    const path = `${sim.kubeconfigPath}-reader`;
    writeFileSync(path, sim.sim.kubeconfig().replace(sim.sim.adminToken, token));
    ({ app, url } = await startTestApp({ clusters: { kubeconfigs: [path], contexts: [] } }));
    await eventually(async () => (await graphql(url, "{ clusters { synced } }")).body.data?.clusters[0].synced, "sync", 20_000);
  });
  after(async () => {
    await app?.stop();
    await sim?.stop();
  });

  test("is null, and the reason is the apiserver's refusal", async () => {
    const name = sim.sim.cluster.nodeNames()[0]!;
    const { body } = await graphql(url, `query($n: String!) { node(name: $n) { kubeletConfig { maxPods } kubeletConfigUnavailableReason } }`, { n: name });
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    assert.deepEqual(body.data.node, {
      kubeletConfig: null,
      kubeletConfigUnavailableReason: `nodes "${name}" is forbidden: User "system:serviceaccount:default:default" cannot get resource "nodes/proxy" in API group "" at the cluster scope`,
    });
  });
});
