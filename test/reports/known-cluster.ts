/**
 * A simulated cluster whose every figure is chosen by the test: the generator's workloads are
 * removed, nodes are given round capacities, labels and taints, and pods are bound with round
 * requests and limits. The simulator still serves it over the real API (and kubectl).
 */
import { R, type SimCluster } from "../../src/sim/index.js";
import { startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

export interface NodeSpec {
  name: string;
  /** The `node-pool` label; omitted: the node has none. */
  pool?: string;
  zone: string;
  instanceType: string;
  role: "worker" | "control-plane";
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
  taints?: { key: string; value?: string; effect: string }[];
  unschedulable?: boolean;
  notReady?: boolean;
  labels?: Record<string, string>;
}

export interface PodSpec {
  name: string;
  node: string;
  phase?: "Running" | "Pending" | "Succeeded" | "Failed";
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

/** A frozen-clock simulator with nothing in it but what {@link defineNode} and {@link definePod} add. */
export async function emptySim(name = "sim"): Promise<SimWithKubeconfig> {
  const sim = await startSimWithKubeconfig({ nodes: 0, seed: 5, clockSpeed: 0, name });
  const cluster = sim.sim.cluster;
  for (const resource of [R.deployments, R.replicasets, R.daemonsets, R.pdbs, R.pods]) {
    for (const obj of cluster.list(resource)) cluster.store.remove(resource, key(obj));
  }
  cluster.tick();
  if (cluster.list(R.pods).length) throw new Error("the simulator kept pods");
  return sim;
}

function key(obj: { metadata: { name: string; namespace?: string } }): string {
  return obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name;
}

/** Adds a node exactly as specified (Ready unless `notReady`, with the not-ready taints then). */
export function defineNode(cluster: SimCluster, spec: NodeSpec): void {
  cluster.addNode({ pool: spec.role === "control-plane" ? "control-plane" : "general", zone: spec.zone, name: spec.name });
  cluster.update(R.nodes, spec.name, (node: any) => {
    const labels: Record<string, string> = {
      "kubernetes.io/hostname": spec.name,
      "kubernetes.io/os": "linux",
      "topology.kubernetes.io/zone": spec.zone,
      "node.kubernetes.io/instance-type": spec.instanceType,
      [`node-role.kubernetes.io/${spec.role}`]: "",
      ...(spec.pool ? { "node-pool": spec.pool } : {}),
      ...spec.labels,
    };
    node.metadata.labels = labels;
    node.status.capacity = spec.capacity;
    node.status.allocatable = spec.allocatable;
    node.spec.taints = spec.taints ?? [];
    if (spec.taints?.length === 0 || !spec.taints) delete node.spec.taints;
    node.spec.unschedulable = spec.unschedulable === true ? true : undefined;
  });
  if (spec.notReady) cluster.setNodeCondition(spec.name, "Ready", "False");
}

/** Binds a pod with one container of these requests and limits to its node. */
export function definePod(cluster: SimCluster, spec: PodSpec): void {
  const resources: Record<string, Record<string, string>> = {};
  if (spec.requests) resources.requests = spec.requests;
  if (spec.limits) resources.limits = spec.limits;
  cluster.create(R.pods, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: spec.name, namespace: "default", labels: { app: spec.name } },
    spec: { nodeName: spec.node, containers: [{ name: "app", image: "registry.example/app:1", resources }] },
    status: { phase: spec.phase ?? "Running" },
  } as any);
}
