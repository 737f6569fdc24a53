/**
 * The seeded, deterministic generator: nodes across pools and zones, system
 * and application workloads, PDBs, leases and a few events. The same seed
 * always gives the same names, labels, shapes and placements.
 */
import { SimCluster } from "./cluster.js";
import { R } from "./storage-names.js";
import type { KObject } from "./store.js";
import { container, podFromTemplate, replicaSetFor } from "./workloads.js";
import { CONTROL_PLANE_POOL, POOLS } from "./nodes.js";
import { cpuMillicores } from "../k8s/quantity.js";

type Obj = Record<string, any>;

export interface GenerateOptions {
  nodes: number;
  /** Average pods per node including daemon pods (default 30). */
  podsPerNode?: number;
}

const DAY = 86_400_000;

const APP_WORDS = [
  "frontend",
  "cart",
  "checkout",
  "catalog",
  "search",
  "recommendations",
  "ads",
  "email",
  "shipping",
  "currency",
  "auth",
  "api-gateway",
  "orders",
  "inventory",
  "notifications",
  "reviews",
  "pricing",
  "profile",
  "sessions",
  "media",
  "ledger-reader",
  "billing",
  "invoices",
  "fraud-check",
  "etl-worker",
  "scheduler",
  "reporting",
  "webhooks",
  "feeds",
  "graph",
];
const IMAGES = ["nginx:1.27.3", "ghcr.io/acme/app:2.14.1", "ghcr.io/acme/worker:1.9.0", "redis:7.4.1", "python:3.12-slim", "node:22-alpine"];
const CPU = ["50m", "100m", "100m", "150m", "200m", "250m", "500m"];
const MEM = ["64Mi", "128Mi", "128Mi", "256Mi", "256Mi", "512Mi", "1Gi"];

function namespaceObj(name: string, createdMs: number, c: SimCluster): KObject {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, uid: c.rng.uid(), creationTimestamp: c.clock.iso(createdMs), labels: { "kubernetes.io/metadata.name": name } },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Active" },
  };
}

function workload(kind: "Deployment" | "DaemonSet", namespace: string, name: string, template: Obj, replicas: number, createdMs: number, c: SimCluster): KObject {
  const labels = template.metadata.labels as Record<string, string>;
  const spec: Obj = { selector: { matchLabels: { ...labels } }, template };
  if (kind === "Deployment") {
    Object.assign(spec, { replicas, strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } }, revisionHistoryLimit: 10, progressDeadlineSeconds: 600 });
  } else {
    Object.assign(spec, { updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } }, revisionHistoryLimit: 10 });
  }
  return {
    apiVersion: "apps/v1",
    kind,
    metadata: {
      name,
      namespace,
      uid: c.rng.uid(),
      creationTimestamp: c.clock.iso(createdMs),
      generation: 1,
      labels: { ...labels },
      annotations: kind === "Deployment" ? { "deployment.kubernetes.io/revision": "1" } : { "deprecated.daemonset.template.generation": "1" },
    },
    spec,
  };
}

function pdb(namespace: string, name: string, labels: Record<string, string>, rule: Obj, createdMs: number, c: SimCluster): KObject {
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: { name, namespace, uid: c.rng.uid(), creationTimestamp: c.clock.iso(createdMs), generation: 1 },
    spec: { ...rule, selector: { matchLabels: labels } },
  };
}

/** Populate a fresh cluster. Runs controllers once at the end so statuses are current. */
export function generateCluster(c: SimCluster, opts: GenerateOptions): void {
  const now = c.clock.now();
  const rng = c.rng;
  const clusterBorn = now - 400 * DAY;
  const podsPerNode = opts.podsPerNode ?? 30;

  // Namespaces.
  const appNamespaces = ["shop", "payments", "data", "platform"];
  const nsCount = Math.max(0, Math.ceil((opts.nodes * podsPerNode) / 3000) - appNamespaces.length);
  for (let i = 1; i <= nsCount; i++) appNamespaces.push(`team-${String(i).padStart(2, "0")}`);
  for (const ns of ["default", "kube-system", "kube-public", "kube-node-lease", "monitoring", ...appNamespaces]) {
    c.create(R.namespaces, namespaceObj(ns, clusterBorn + rng.int(0, 3) * DAY, c));
  }

  // Nodes: control plane first, then workers spread across pools and zones.
  const controlPlanes = opts.nodes >= 6 ? 3 : 1;
  const nodes: KObject[] = [];
  for (let i = 0; i < Math.min(controlPlanes, opts.nodes); i++) {
    nodes.push(c.addNode({ pool: CONTROL_PLANE_POOL.name, zone: ["eu-west-1a", "eu-west-1b", "eu-west-1c"][i % 3], createdMs: clusterBorn + i * 60_000 }));
  }
  for (let i = nodes.length; i < opts.nodes; i++) {
    const pool = opts.nodes < 20 && i === opts.nodes - 1 ? "general" : rng.weighted(POOLS.map((p) => [p.name, p.weight] as const));
    // A few nodes are young (recent scale-ups) and carry their registration events.
    const young = rng.chance(0.04);
    const createdMs = young ? now - rng.int(5, 55) * 60_000 : now - rng.int(1, 390) * DAY - rng.int(0, 86_399) * 1000;
    const node = c.addNode({ pool, createdMs });
    if (young) {
      c.nodeEvent(node.metadata.name, "Starting", "Starting kubelet.");
      c.nodeEvent(node.metadata.name, "NodeReady", `Node ${node.metadata.name} status is now: NodeReady`);
      c.nodeEvent(node.metadata.name, "RegisteredNode", `Node ${node.metadata.name} event: Registered Node ${node.metadata.name} in Controller`, "node-controller");
    }
    nodes.push(node);
  }
  const nodeByName = new Map(nodes.map((n) => [n.metadata.name, n]));
  const workers = nodes.filter((n) => !("node-role.kubernetes.io/control-plane" in (n.metadata.labels ?? {})));

  // Mirror pods of the static control-plane components.
  for (const n of nodes.slice(0, controlPlanes)) {
    for (const [comp, cpu, mem] of [
      ["etcd", "100m", "100Mi"],
      ["kube-apiserver", "250m", "512Mi"],
      ["kube-controller-manager", "200m", "256Mi"],
      ["kube-scheduler", "100m", "128Mi"],
    ] as const) {
      const hash = rng.hex(32);
      const pod = podFromTemplate(
        { apiVersion: "v1", kind: "Node", metadata: { name: n.metadata.name, uid: n.metadata.uid!, namespace: "kube-system" } },
        {
          metadata: {
            labels: { component: comp, tier: "control-plane" },
            annotations: {
              "kubernetes.io/config.hash": hash,
              "kubernetes.io/config.mirror": hash,
              "kubernetes.io/config.seen": c.clock.iso(Date.parse(n.metadata.creationTimestamp!)),
              "kubernetes.io/config.source": "file",
            },
          },
          spec: {
            priorityClassName: "system-node-critical",
            hostNetwork: true,
            containers: [container(comp, `registry.k8s.io/${comp}:${comp === "etcd" ? "3.5.16-0" : "v1.31.4"}`, { requests: { cpu, memory: mem } })],
          },
        },
        rng,
        c.clock,
        { name: `${comp}-${n.metadata.name}` },
      );
      // Mirror pods are owned by their Node, not a controller, and have no service account volume.
      const spec = pod.spec as Obj;
      spec.volumes = [];
      spec.containers = spec.containers.map((ct: Obj) => ({ ...ct, volumeMounts: undefined }));
      delete spec.serviceAccountName;
      delete spec.serviceAccount;
      spec.tolerations = [{ operator: "Exists", effect: "NoExecute" }];
      pod.metadata.ownerReferences = [{ apiVersion: "v1", kind: "Node", name: n.metadata.name, uid: n.metadata.uid!, controller: true }];
      delete pod.metadata.generateName;
      c.placeRunning(pod, n, Date.parse(n.metadata.creationTimestamp!) + 30_000);
    }
  }

  // DaemonSets: one pod on every node.
  const daemonSets: [string, string, Obj][] = [
    [
      "kube-system",
      "kube-proxy",
      {
        priorityClassName: "system-node-critical",
        hostNetwork: true,
        tolerations: [{ operator: "Exists" }],
        containers: [container("kube-proxy", "registry.k8s.io/kube-proxy:v1.31.4", { requests: { cpu: "100m" } })],
      },
    ],
    [
      "kube-system",
      "cilium",
      {
        priorityClassName: "system-node-critical",
        hostNetwork: true,
        tolerations: [{ operator: "Exists" }],
        containers: [container("cilium-agent", "quay.io/cilium/cilium:v1.16.5", { requests: { cpu: "100m", memory: "128Mi" } })],
      },
    ],
    [
      "monitoring",
      "node-exporter",
      {
        tolerations: [{ operator: "Exists" }],
        containers: [container("node-exporter", "quay.io/prometheus/node-exporter:v1.8.2", { requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "250m", memory: "180Mi" } })],
      },
    ],
  ];
  for (const [ns, name, spec] of daemonSets) {
    const ds = c.create(R.daemonsets, workload("DaemonSet", ns, name, { metadata: { labels: { "app.kubernetes.io/name": name } }, spec }, 0, clusterBorn + DAY, c)).obj;
    for (const n of nodes) {
      const pod = podFromTemplate(ds, (ds.spec as Obj).template, rng, c.clock, { nodeAffinity: n.metadata.name, createdMs: Date.parse(n.metadata.creationTimestamp!) + 20_000 });
      c.placeRunning(pod, n, Date.parse(n.metadata.creationTimestamp!) + 25_000);
    }
  }

  // Deployments: system ones, a payments ledger whose PDB allows no disruption, and application fleets.
  type Plan = { ns: string; name: string; replicas: number; spec: Obj; pdb?: Obj };
  const plans: Plan[] = [
    {
      ns: "kube-system",
      name: "coredns",
      replicas: 2,
      spec: {
        priorityClassName: "system-cluster-critical",
        tolerations: [{ key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule" }],
        containers: [container("coredns", "registry.k8s.io/coredns/coredns:v1.11.3", { requests: { cpu: "100m", memory: "70Mi" }, limits: { memory: "170Mi" } })],
      },
      pdb: { maxUnavailable: 1 },
    },
    {
      ns: "kube-system",
      name: "metrics-server",
      replicas: 1,
      spec: {
        priorityClassName: "system-cluster-critical",
        containers: [container("metrics-server", "registry.k8s.io/metrics-server/metrics-server:v0.7.2", { requests: { cpu: "100m", memory: "200Mi" } })],
        volumes: [{ name: "tmp-dir", emptyDir: {} }],
      },
    },
    {
      ns: "payments",
      name: "ledger",
      replicas: 2,
      spec: { containers: [container("ledger", "ghcr.io/acme/ledger:3.2.0", { requests: { cpu: "250m", memory: "512Mi" }, limits: { cpu: "1", memory: "1Gi" } })] },
      pdb: { minAvailable: 2 },
    },
  ];
  // Fill workers to about 70% of their CPU on average (requests average ~210m),
  // so small clusters are not packed solid and drains have somewhere to go.
  const workerCpu = workers.reduce((sum, n) => sum + cpuMillicores(((n.status as Obj).allocatable as Obj).cpu), 0);
  const fillCap = Math.floor((workerCpu * 0.7) / 210);
  const target = Math.min(fillCap, Math.max(0, opts.nodes * podsPerNode - opts.nodes * daemonSets.length - controlPlanes * 4 - plans.reduce((s, p) => s + p.replicas, 0) - 4));
  let planned = 0;
  let i = 0;
  while (planned < target) {
    // Spread applications across namespaces; a name repeats only once every namespace has it.
    const ns = appNamespaces[i % appNamespaces.length]!;
    const word = APP_WORDS[Math.floor(i / appNamespaces.length) % APP_WORDS.length]!;
    const round = Math.floor(i / (APP_WORDS.length * appNamespaces.length));
    const name = round === 0 ? word : `${word}-${round + 1}`;
    const replicas = Math.min(target - planned, rng.int(1, 24));
    const cpu = rng.pick(CPU);
    const mem = rng.pick(MEM);
    const resources: Obj = { requests: { cpu, memory: mem }, limits: rng.chance(0.6) ? { memory: mem } : { cpu: "1", memory: mem.endsWith("Gi") ? "2Gi" : "1Gi" } };
    const spec: Obj = { containers: [container(word.replace(/-\d+$/, ""), rng.pick(IMAGES), resources, { ports: [{ containerPort: 8080, protocol: "TCP" }] })] };
    if (rng.chance(0.2)) {
      spec.volumes = [{ name: "cache", emptyDir: {} }];
      spec.containers[0].volumeMounts = [{ name: "cache", mountPath: "/cache" }];
    }
    const plan: Plan = { ns, name, replicas, spec };
    if (replicas >= 3 && rng.chance(0.3)) plan.pdb = rng.chance(0.5) ? { minAvailable: "50%" } : { maxUnavailable: 1 };
    plans.push(plan);
    planned += replicas;
    i++;
  }
  for (const p of plans) {
    const labels = { app: p.name };
    const bornMs = clusterBorn + rng.int(2, 390) * DAY;
    const d = c.create(R.deployments, workload("Deployment", p.ns, p.name, { metadata: { labels }, spec: p.spec }, p.replicas, bornMs, c)).obj;
    const rs = c.create(R.replicasets, replicaSetFor(d, c.rng)).obj;
    if (p.pdb) c.create(R.pdbs, pdb(p.ns, p.name, labels, p.pdb, bornMs, c));
    for (let r = 0; r < p.replicas; r++) {
      const startedMs = Math.max(bornMs, now - rng.int(1, 60) * DAY) + rng.int(0, 86_399) * 1000;
      const pod = podFromTemplate(rs, (rs.spec as Obj).template, rng, c.clock, { createdMs: startedMs - 3000 });
      // Sample a few nodes rather than scanning all: scale matters at 5,000 nodes.
      const sample = workers.length <= 64 ? workers : Array.from({ length: 6 }, () => rng.pick(workers));
      const target = c.chooseNode(pod, sample) ?? c.chooseNode(pod);
      const node = target ? nodeByName.get(target) : undefined;
      if (node) c.placeRunning(pod, node, startedMs);
      else c.create(R.pods, pod);
    }
  }

  // A few bare pods, as people leave behind.
  const someWorker = () => workers[rng.int(0, workers.length - 1)]!;
  for (const [ns, name, image] of [
    ["default", "debug-shell", "busybox:1.36"],
    ["data", "one-off-migration", "ghcr.io/acme/migrate:0.4.2"],
  ] as const) {
    if (workers.length === 0) break;
    const bare = podFromTemplate(
      { apiVersion: "v1", kind: "Pod", metadata: { name, uid: "", namespace: ns } },
      { metadata: { labels: { run: name } }, spec: { containers: [container(name, image, {})] } },
      rng,
      c.clock,
      { name: `${name}-${rng.suffix(4)}` },
    );
    delete bare.metadata.ownerReferences;
    delete bare.metadata.generateName;
    c.placeRunning(bare, someWorker(), now - rng.int(1, 48) * 3_600_000);
  }

  // One worker left cordoned by an operator, as real fleets always have.
  if (workers.length >= 20) {
    const cordoned = workers[workers.length - 2]!;
    c.update(R.nodes, cordoned.metadata.name, (n) => {
      (n.spec as Obj).unschedulable = true;
      (n.spec as Obj).taints = [...((n.spec as Obj).taints ?? []), { key: "node.kubernetes.io/unschedulable", effect: "NoSchedule", timeAdded: c.clock.iso(now - 3_600_000) }];
    });
  }

  // GPU inference on the GPU pool: one GPU per pod, on half the GPU nodes, so some GPUs are
  // free. Made last, so the random stream of everything above (and every seeded name) is as before.
  const gpuNodes = workers.filter((n) => Number(((n.status as Obj).allocatable as Obj)["nvidia.com/gpu"] ?? 0) > 0);
  if (gpuNodes.length > 0) {
    const labels = { app: "model-serving" };
    const resources = { requests: { cpu: "2", memory: "8Gi", "nvidia.com/gpu": "1" }, limits: { memory: "8Gi", "nvidia.com/gpu": "1" } };
    const spec: Obj = {
      nodeSelector: { "node-pool": "gpu" },
      tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }],
      containers: [container("model-serving", "ghcr.io/acme/model-serving:1.3.0", resources, { ports: [{ containerPort: 8080, protocol: "TCP" }] })],
    };
    const replicas = Math.ceil(gpuNodes.length / 2);
    const bornMs = now - 30 * DAY;
    const d = c.create(R.deployments, workload("Deployment", "data", "model-serving", { metadata: { labels }, spec }, replicas, bornMs, c)).obj;
    const rs = c.create(R.replicasets, replicaSetFor(d, c.rng)).obj;
    for (let r = 0; r < replicas; r++) {
      const pod = podFromTemplate(rs, (rs.spec as Obj).template, rng, c.clock, { createdMs: bornMs + r * 60_000 });
      const target = c.chooseNode(pod, gpuNodes);
      if (target) c.placeRunning(pod, nodeByName.get(target)!, bornMs + r * 60_000 + 5_000);
      else c.create(R.pods, pod);
    }
  }

  // Controllers feed each other (ReplicaSet status -> Deployment status, PDB
  // status -> disruption checks): let them settle before anyone connects.
  for (let i = 0; i < 4; i++) c.tick();
  c.store.compactAll();
}
