import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { stripNode, stripPod } from "../../src/cluster/strip.js";

type Res = { requests?: Record<string, string>; limits?: Record<string, string> };
const c = (resources: Res, restartPolicy?: string) => ({
  name: "c",
  image: "busybox",
  resources,
  ...(restartPolicy ? { restartPolicy } : {}),
});
const req = (cpu?: string, memory?: string): Res => ({
  requests: { ...(cpu ? { cpu } : {}), ...(memory ? { memory } : {}) },
});
const sidecar = (resources: Res) => c(resources, "Always");

interface PodSpecCase {
  containers?: object[];
  initContainers?: object[];
  overhead?: Record<string, string>;
  resources?: Res;
  tolerations?: unknown[];
}
const podWith = (spec: PodSpecCase) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "p", namespace: "default", uid: "u1", resourceVersion: "7", creationTimestamp: "2026-01-01T00:00:00Z" },
  spec: { nodeName: "n1", containers: [], ...spec },
  status: { phase: "Running" },
});

describe("stripPod computes requests as kubectl describe node (component-helpers PodRequests)", () => {
  // [what, spec, expected requests]; cpu in millicores, memory in bytes.
  const cases: [string, PodSpecCase, Record<string, number>][] = [
    ["no containers with resources", { containers: [c({})] }, {}],
    ["one container", { containers: [c(req("100m", "128Mi"))] }, { cpu: 100, memory: 134217728 }],
    ["containers are summed", { containers: [c(req("100m")), c(req("200m"))] }, { cpu: 300 }],
    ["whole cores read as millicores", { containers: [c(req("1")), c(req("0.5"))] }, { cpu: 1500 }],
    ["only resources that appear count", { containers: [c(req(undefined, "64Mi"))] }, { memory: 67108864 }],
    ["an explicit zero still appears", { containers: [c(req("0"))] }, { cpu: 0 }],
    ["an init container larger than the containers wins: 100m+200m vs 500m", { containers: [c(req("100m")), c(req("200m"))], initContainers: [c(req("500m"))] }, { cpu: 500 }],
    ["init containers compete as a maximum, not a sum", { containers: [c(req("100m"))], initContainers: [c(req("400m")), c(req("300m"))] }, { cpu: 400 }],
    ["a smaller init container changes nothing", { containers: [c(req("300m", "1Gi"))], initContainers: [c(req("200m", "2Gi"))] }, { cpu: 300, memory: 2147483648 }],
    ["an init-only resource still counts", { containers: [c(req("100m"))], initContainers: [c(req(undefined, "10Mi"))] }, { cpu: 100, memory: 10485760 }],
    ["a sidecar started before a 500m init: max(300+50, 50+500) = 550m", { containers: [c(req("100m")), c(req("200m"))], initContainers: [sidecar(req("50m")), c(req("500m"))] }, { cpu: 550 }],
    [
      "a sidecar started after the init container does not add to it: max(300+50, 500)",
      { containers: [c(req("100m")), c(req("200m"))], initContainers: [c(req("500m")), sidecar(req("50m"))] },
      { cpu: 500 },
    ],
    ["a sidecar adds to the running sum when init containers are small", { containers: [c(req("300m"))], initContainers: [sidecar(req("50m")), c(req("100m"))] }, { cpu: 350 }],
    [
      "sidecars accumulate for later init containers: max(100+10+20, 10+20+200)",
      {
        containers: [c(req("100m"))],
        initContainers: [sidecar(req("10m")), c(req("150m")), sidecar(req("20m")), c(req("200m"))],
      },
      { cpu: 230 },
    ],
    [
      "a sidecar's resource missing from the init container still joins the init candidate",
      { containers: [c(req(undefined, "1Mi"))], initContainers: [sidecar(req("50m")), c(req(undefined, "2Mi"))] },
      { cpu: 50, memory: 2097152 },
    ],
    ["overhead is added to every request", { containers: [c(req("100m", "64Mi"))], overhead: { cpu: "250m", memory: "120Mi" } }, { cpu: 350, memory: 184 * 1024 * 1024 }],
    ["overhead adds resources no container requests", { containers: [c({})], overhead: { cpu: "10m" } }, { cpu: 10 }],
    ["overhead is added after the init maximum", { containers: [c(req("100m"))], initContainers: [c(req("500m"))], overhead: { cpu: "50m" } }, { cpu: 550 }],
    [
      "pod-level requests replace the container aggregate for cpu and memory",
      { containers: [c(req("100m", "64Mi"))], resources: { requests: { cpu: "1", memory: "1Gi" } } },
      { cpu: 1000, memory: 1073741824 },
    ],
    [
      "pod-level requests leave other resources to the containers",
      {
        containers: [c({ requests: { cpu: "100m", "ephemeral-storage": "1Gi" } })],
        resources: { requests: { cpu: "2" } },
        overhead: { cpu: "100m" },
      },
      { cpu: 2100, "ephemeral-storage": 1073741824 },
    ],
    ["fractions are summed exactly before rounding: 0.5m + 0.5m = 1m", { containers: [c(req("0.5m")), c(req("0.5m"))] }, { cpu: 1 }],
    ["decimal and binary memory add exactly", { containers: [c(req(undefined, "1G")), c(req(undefined, "1Gi"))] }, { memory: 1_000_000_000 + 1_073_741_824 }],
    ["extended resources are counts", { containers: [c({ requests: { "nvidia.com/gpu": "2" } }), c({ requests: { "nvidia.com/gpu": "1" } })] }, { "nvidia.com/gpu": 3 }],
  ];
  for (const [name, spec, expected] of cases) {
    test(name, () => assert.deepEqual({ ...stripPod("c1", podWith(spec)).requests }, expected));
  }
});

describe("stripPod computes limits as kubectl describe node (component-helpers PodLimits)", () => {
  const lim = (cpu?: string, memory?: string): Res => ({
    limits: { ...(cpu ? { cpu } : {}), ...(memory ? { memory } : {}) },
  });
  const cases: [string, PodSpecCase, Record<string, number>][] = [
    ["no limits", { containers: [c(req("100m"))] }, {}],
    ["containers are summed", { containers: [c(lim("1", "1Gi")), c(lim("500m"))] }, { cpu: 1500, memory: 1073741824 }],
    ["init containers as a maximum, sidecars added", { containers: [c(lim("300m"))], initContainers: [sidecar(lim("100m")), c(lim("1"))] }, { cpu: 1100 }],
    ["overhead is added only to limits that are present", { containers: [c(lim("1"))], overhead: { cpu: "100m", memory: "64Mi" } }, { cpu: 1100 }],
    ["overhead is not added to a zero limit", { containers: [c(lim("0", "1Gi"))], overhead: { cpu: "100m", memory: "1Mi" } }, { cpu: 0, memory: 1073741824 + 1048576 }],
    ["pod-level limits replace the container aggregate", { containers: [c(lim("1"))], resources: { limits: { cpu: "4" } } }, { cpu: 4000 }],
    ["pod-level requests alone do not invent limits", { containers: [c(lim("1"))], resources: { requests: { cpu: "2" } } }, { cpu: 1000 }],
  ];
  for (const [name, spec, expected] of cases) {
    test(name, () => assert.deepEqual({ ...stripPod("c1", podWith(spec)).limits }, expected));
  }
});

describe("stripPod keeps what the model has", () => {
  const raw = {
    metadata: {
      name: "fluentd-x7k2p",
      namespace: "kube-system",
      uid: "0b7c",
      resourceVersion: "4411",
      creationTimestamp: "2026-01-02T03:04:05Z",
      deletionTimestamp: "2026-01-03T00:00:00Z",
      labels: { app: "fluentd" },
      annotations: { "kubernetes.io/config.mirror": "abc", other: "dropped" },
      ownerReferences: [
        { apiVersion: "v1", kind: "ConfigMap", name: "not-controller" },
        { apiVersion: "apps/v1", kind: "DaemonSet", name: "fluentd", controller: true },
      ],
      managedFields: [{ manager: "kubelet" }],
    },
    spec: {
      nodeName: "n1",
      terminationGracePeriodSeconds: 30,
      volumes: [
        { name: "cfg", configMap: { name: "x" } },
        { name: "tmp", emptyDir: {} },
      ],
      containers: [{ name: "c", resources: { requests: { cpu: "100m" }, limits: { memory: "200Mi" } } }],
    },
    status: { phase: "Running", podIP: "10.0.0.1" },
  };

  test("fields, owner, daemonSet, mirror and emptyDir", () => {
    assert.deepEqual(stripPod("prod", raw), {
      cluster: "prod",
      namespace: "kube-system",
      name: "fluentd-x7k2p",
      uid: "0b7c",
      resourceVersion: "4411",
      nodeName: "n1",
      phase: "Running",
      labels: { app: "fluentd" },
      ownerKind: "DaemonSet",
      ownerName: "fluentd",
      daemonSet: true,
      mirror: true,
      emptyDir: true,
      deletionTimestamp: "2026-01-03T00:00:00Z",
      terminationGracePeriodSeconds: 30,
      requests: { cpu: 100 },
      limits: { memory: 209715200 },
      creationTimestamp: "2026-01-02T03:04:05Z",
      noExecuteTolerations: {},
    });
  });

  // The taint eviction controller's reading of a pod's tolerations of the countdown taints.
  const tolerationCases: [string, unknown[], Record<string, number>][] = [
    ["no tolerations: neither taint is tolerated", [], {}],
    [
      "DefaultTolerationSeconds' pair",
      [
        { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
        { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
      ],
      { "node.kubernetes.io/not-ready": 300, "node.kubernetes.io/unreachable": 300 },
    ],
    ["a DaemonSet pod's: no limit", [{ key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute" }], { "node.kubernetes.io/not-ready": -1 }],
    ["operator Exists without a key tolerates everything forever", [{ operator: "Exists" }], { "node.kubernetes.io/not-ready": -1, "node.kubernetes.io/unreachable": -1 }],
    ["a NoSchedule toleration does not count", [{ key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoSchedule", tolerationSeconds: 5 }], {}],
    [
      "the first matching toleration is used; a negative time is zero",
      [{ key: "node.kubernetes.io/unreachable", effect: "NoExecute", tolerationSeconds: -4 }, { operator: "Exists" }],
      { "node.kubernetes.io/not-ready": -1, "node.kubernetes.io/unreachable": 0 },
    ],
    ["Equal needs the taint's empty value", [{ key: "node.kubernetes.io/not-ready", operator: "Equal", value: "x", effect: "NoExecute" }], {}],
  ];
  for (const [name, tolerations, expected] of tolerationCases) {
    test(`noExecuteTolerations: ${name}`, () => assert.deepEqual({ ...stripPod("c1", podWith({ containers: [c({})], tolerations })).noExecuteTolerations }, expected));
  }

  test("a bare pod: no owner, not a DaemonSet pod, not mirrored, no emptyDir", () => {
    const pod = stripPod("c1", podWith({ containers: [c({})] }));
    assert.equal(pod.ownerKind, undefined);
    assert.equal(pod.daemonSet, false);
    assert.equal(pod.mirror, false);
    assert.equal(pod.emptyDir, false);
    assert.equal(pod.ownerName, undefined);
  });

  test("a non-controller DaemonSet reference does not make a DaemonSet pod", () => {
    const pod = stripPod("c1", {
      metadata: { name: "p", ownerReferences: [{ kind: "DaemonSet", name: "ds", controller: false }] },
      spec: {},
    });
    assert.equal(pod.daemonSet, false);
    assert.equal(pod.ownerKind, undefined);
  });

  test("a mirror annotation with an empty value is still a mirror pod", () => {
    assert.equal(stripPod("c1", { metadata: { annotations: { "kubernetes.io/config.mirror": "" } } }).mirror, true);
  });

  test("results are frozen", () => {
    const pod = stripPod("c1", raw);
    assert.ok(Object.isFrozen(pod));
    assert.ok(Object.isFrozen(pod.labels));
    assert.ok(Object.isFrozen(pod.requests));
  });

  test("garbage does not throw", () => {
    for (const junk of [null, 42, "x", [], { metadata: 5, spec: { containers: "no" } }]) {
      const pod = stripPod("c1", junk);
      assert.equal(pod.name, "");
      assert.deepEqual({ ...pod.requests }, {});
    }
  });
});

describe("stripNode keeps what the model has", () => {
  const raw = {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: "ip-10-0-1-23",
      uid: "n-uid",
      resourceVersion: "99",
      creationTimestamp: "2025-12-01T08:00:00Z",
      labels: { "node-role.kubernetes.io/worker": "", "topology.kubernetes.io/zone": "eu-west-1a" },
      annotations: { "node.alpha.kubernetes.io/ttl": "0" },
      managedFields: [{ manager: "kubelet" }],
    },
    spec: {
      podCIDR: "10.244.1.0/24",
      unschedulable: true,
      taints: [
        { key: "node.kubernetes.io/unschedulable", effect: "NoSchedule", timeAdded: "2026-01-01T00:00:00Z" },
        { key: "dedicated", value: "gpu", effect: "NoExecute" },
      ],
    },
    status: {
      capacity: { cpu: "4", memory: "16374584Ki", pods: "110", "ephemeral-storage": "101430960Ki", bad: "lots" },
      allocatable: { cpu: "3800m", memory: "15223608Ki", pods: "110" },
      conditions: [
        { type: "MemoryPressure", status: "False", reason: "KubeletHasSufficientMemory", lastHeartbeatTime: "2026-01-01T00:00:00Z", lastTransitionTime: "2025-12-01T08:00:00Z" },
        { type: "Ready", status: "True", reason: "KubeletReady", message: "kubelet is posting ready status" },
      ],
      addresses: [
        { type: "InternalIP", address: "10.0.1.23" },
        { type: "Hostname", address: "ip-10-0-1-23" },
      ],
      nodeInfo: {
        kubeletVersion: "v1.31.2",
        containerRuntimeVersion: "containerd://1.7.22",
        osImage: "Ubuntu 22.04.4 LTS",
        kernelVersion: "6.5.0-1024-aws",
        operatingSystem: "linux",
        architecture: "amd64",
        machineID: "dropped",
      },
      images: [{ names: ["kept"], sizeBytes: 1 }],
    },
  };

  test("every model field, nothing else; an unparseable quantity is dropped", () => {
    assert.deepEqual(stripNode("prod", raw), {
      cluster: "prod",
      name: "ip-10-0-1-23",
      uid: "n-uid",
      resourceVersion: "99",
      creationTimestamp: "2025-12-01T08:00:00Z",
      labels: { "node-role.kubernetes.io/worker": "", "topology.kubernetes.io/zone": "eu-west-1a" },
      annotations: { "node.alpha.kubernetes.io/ttl": "0" },
      taints: [
        { key: "node.kubernetes.io/unschedulable", effect: "NoSchedule", timeAdded: "2026-01-01T00:00:00Z" },
        { key: "dedicated", value: "gpu", effect: "NoExecute" },
      ],
      unschedulable: true,
      conditions: [
        { type: "MemoryPressure", status: "False", reason: "KubeletHasSufficientMemory", lastHeartbeatTime: "2026-01-01T00:00:00Z", lastTransitionTime: "2025-12-01T08:00:00Z" },
        { type: "Ready", status: "True", reason: "KubeletReady", message: "kubelet is posting ready status" },
      ],
      addresses: [
        { type: "InternalIP", address: "10.0.1.23" },
        { type: "Hostname", address: "ip-10-0-1-23" },
      ],
      nodeInfo: {
        kubeletVersion: "v1.31.2",
        containerRuntimeVersion: "containerd://1.7.22",
        osImage: "Ubuntu 22.04.4 LTS",
        kernelVersion: "6.5.0-1024-aws",
        operatingSystem: "linux",
        architecture: "amd64",
      },
      capacity: { cpu: "4", memory: "16374584Ki", pods: "110", "ephemeral-storage": "101430960Ki" },
      allocatable: { cpu: "3800m", memory: "15223608Ki", pods: "110" },
      details: { providerID: undefined, podCIDRs: ["10.244.1.0/24"], volumesAttached: [], volumesInUse: [], images: [{ names: ["kept"], sizeBytes: 1 }] },
    });
  });

  test("details: images largest first (sizes unknown last), bounded; podCIDRs preferred over podCIDR; empty strings are none", () => {
    const images = [
      { names: ["small:1"], sizeBytes: 10 },
      { names: ["nosize:1"] },
      { names: ["big@sha256:aa", "big:1"], sizeBytes: 3_000_000 },
      { names: "not-a-list", sizeBytes: 5 },
      ...Array.from({ length: 300 }, (_, i) => ({ names: [`filler:${i}`], sizeBytes: 1 })),
    ];
    const details = stripNode("c1", {
      metadata: { name: "n" },
      spec: { providerID: "", podCIDR: "10.0.0.0/24", podCIDRs: ["10.0.0.0/24", "fd00::/64"] },
      status: {
        images,
        volumesAttached: [{ name: "kubernetes.io/csi/ebs.csi.aws.com^vol-1", devicePath: "" }, { name: "kubernetes.io/csi/x^vol-2", devicePath: "/dev/xvdba" }, { devicePath: "/dev/nameless" }],
        volumesInUse: ["kubernetes.io/csi/ebs.csi.aws.com^vol-1", 7],
      },
    }).details!;
    assert.equal(details.providerID, undefined);
    assert.deepEqual(details.podCIDRs, ["10.0.0.0/24", "fd00::/64"]);
    assert.deepEqual(details.volumesAttached, [
      { name: "kubernetes.io/csi/ebs.csi.aws.com^vol-1", devicePath: undefined },
      { name: "kubernetes.io/csi/x^vol-2", devicePath: "/dev/xvdba" },
    ]);
    assert.deepEqual(details.volumesInUse, ["kubernetes.io/csi/ebs.csi.aws.com^vol-1"]);
    assert.equal(details.images.length, 200, "at most 200 images are kept");
    assert.deepEqual(details.images.slice(0, 3), [
      { names: ["big@sha256:aa", "big:1"], sizeBytes: 3_000_000 },
      { names: ["small:1"], sizeBytes: 10 },
      { names: [], sizeBytes: 5 },
    ]);
    assert.equal(stripNode("c1", { spec: { podCIDR: "10.1.0.0/24" } }).details!.podCIDRs[0], "10.1.0.0/24");
  });

  test("deeply frozen", () => {
    const node = stripNode("prod", raw);
    for (const part of [node, node.labels, node.taints, node.taints[0], node.conditions, node.conditions[0], node.addresses, node.nodeInfo, node.capacity]) {
      assert.ok(Object.isFrozen(part));
    }
  });

  test("nodes of equal capacity share one capacity and one allocatable map; a node that differs has its own", () => {
    const twin = stripNode("other", { ...raw, metadata: { ...raw.metadata, name: "ip-10-0-1-24" } });
    const node = stripNode("prod", raw);
    assert.equal(twin.capacity, node.capacity);
    assert.equal(twin.allocatable, node.allocatable);
    const bigger = stripNode("prod", { ...raw, status: { ...raw.status, allocatable: { ...raw.status.allocatable, pods: "250" } } });
    assert.notEqual(bigger.allocatable, node.allocatable);
    assert.deepEqual({ ...bigger.allocatable }, { cpu: "3800m", memory: "15223608Ki", pods: "250" });
    assert.equal(bigger.capacity, node.capacity);
  });

  test("a node without spec or status is schedulable and has empty collections", () => {
    const node = stripNode("c1", { metadata: { name: "bare" } });
    assert.equal(node.unschedulable, false);
    assert.deepEqual([node.taints, node.conditions, node.addresses], [[], [], []]);
    assert.deepEqual({ ...node.capacity }, {});
    assert.equal(node.nodeInfo.kubeletVersion, "");
  });
});

describe("stripPod shares what pods have in common", () => {
  test("equal label sets and request shapes are one object, whatever pod they came from", () => {
    const replica = (name: string) => ({
      metadata: { name, namespace: "shop", labels: { app: "cart", "pod-template-hash": "7d9f" } },
      spec: { nodeName: "n1", containers: [{ name: "c", resources: { requests: { cpu: "250m", memory: "256Mi" } } }] },
      status: { phase: "Running" },
    });
    const [a, b] = [stripPod("c1", replica("cart-1")), stripPod("c1", replica("cart-2"))];
    assert.equal(a.labels, b.labels);
    assert.equal(a.requests, b.requests);
    assert.deepEqual(a.requests, { cpu: 250, memory: 268435456 });
    assert.notEqual(a.name, b.name);
  });
});
