/**
 * Server-side printing: the meta.k8s.io/v1 Table form kubectl asks for, with
 * the column definitions of pkg/printers/internalversion/printers.go, so that
 * `kubectl get` shows the same columns against the simulator as against a
 * real apiserver (priority 1 columns appear with `-o wide`).
 */
import type { KObject } from "../store.js";
import { formatAge, nodeExternalIP, nodeInternalIP, nodeRoles, nodeStatusColumn } from "../../k8s/node-display.js";

type Obj = Record<string, any>;

interface Column {
  name: string;
  type: string;
  format?: string;
  description: string;
  priority?: number;
}

interface Printer {
  columns: Column[];
  cells(obj: KObject, nowMs: number): unknown[];
}

const nameCol: Column = {
  name: "Name",
  type: "string",
  format: "name",
  description:
    "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
};
const ageCol: Column = {
  name: "Age",
  type: "string",
  description:
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
};

function age(obj: KObject, nowMs: number): string {
  const ts = obj.metadata.creationTimestamp;
  return ts ? formatAge((nowMs - Date.parse(ts)) / 1000) : "<unknown>";
}

const orNone = (v: unknown): string => (v === undefined || v === null || v === "" ? "<none>" : String(v));
const orUnknown = (v: unknown): string => (v === undefined || v === null || v === "" ? "<unknown>" : String(v));

function podStatus(pod: KObject): { reason: string; ready: number; total: number; restarts: number } {
  const spec = pod.spec as Obj;
  const status = (pod.status ?? {}) as Obj;
  let reason: string = status.reason ?? status.phase ?? "Unknown";
  let ready = 0;
  let restarts = 0;
  let running = false;
  for (const c of (status.containerStatuses ?? []) as Obj[]) {
    restarts += c.restartCount ?? 0;
    if (c.state?.waiting?.reason) reason = c.state.waiting.reason;
    else if (c.state?.terminated) reason = c.state.terminated.reason ?? (c.state.terminated.signal ? `Signal:${c.state.terminated.signal}` : `ExitCode:${c.state.terminated.exitCode}`);
    else if (c.state?.running) {
      running = true;
      if (c.ready) ready++;
    }
  }
  if (reason === "Completed" && running) reason = ready === (spec.containers?.length ?? 0) ? "Running" : "NotReady";
  if (pod.metadata.deletionTimestamp) reason = status.reason === "NodeLost" ? "Unknown" : "Terminating";
  return { reason, ready, total: (spec.containers ?? []).length, restarts };
}

function intOrString(v: unknown): string {
  return v === undefined || v === null ? "N/A" : String(v);
}

const PRINTERS: Record<string, Printer> = {
  nodes: {
    columns: [
      nameCol,
      { name: "Status", type: "string", description: "The status of the node" },
      { name: "Roles", type: "string", description: "The roles of the node" },
      ageCol,
      { name: "Version", type: "string", description: "Kubelet Version reported by the node." },
      {
        name: "Internal-IP",
        type: "string",
        description:
          "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).",
        priority: 1,
      },
      { name: "External-IP", type: "string", description: "List of addresses reachable to the node. Queried from cloud provider, if available.", priority: 1 },
      { name: "OS-Image", type: "string", description: "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).", priority: 1 },
      { name: "Kernel-Version", type: "string", description: "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", priority: 1 },
      { name: "Container-Runtime", type: "string", description: "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).", priority: 1 },
    ],
    cells(n, now) {
      const info = ((n.status as Obj)?.nodeInfo ?? {}) as Obj;
      const roles = nodeRoles(n.metadata.labels);
      return [
        n.metadata.name,
        nodeStatusColumn(n as never),
        roles.length ? roles.join(",") : "<none>",
        age(n, now),
        info.kubeletVersion ?? "",
        orNone(nodeInternalIP(n as never)),
        orNone(nodeExternalIP(n as never)),
        orUnknown(info.osImage),
        orUnknown(info.kernelVersion),
        orUnknown(info.containerRuntimeVersion),
      ];
    },
  },
  pods: {
    columns: [
      nameCol,
      { name: "Ready", type: "string", description: "The aggregate readiness state of this pod for accepting traffic." },
      { name: "Status", type: "string", description: "The aggregate status of the containers in this pod." },
      { name: "Restarts", type: "string", description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted." },
      ageCol,
      { name: "IP", type: "string", description: "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.", priority: 1 },
      {
        name: "Node",
        type: "string",
        description:
          "NodeName is a request to schedule this pod onto a specific node. If it is non-empty, the scheduler simply schedules this pod onto that node, assuming that it fits resource requirements.",
        priority: 1,
      },
      {
        name: "Nominated Node",
        type: "string",
        description:
          "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods.",
        priority: 1,
      },
      { name: "Readiness Gates", type: "string", description: "If specified, all readiness gates will be evaluated for pod readiness.", priority: 1 },
    ],
    cells(p, now) {
      const s = podStatus(p);
      const status = (p.status ?? {}) as Obj;
      return [p.metadata.name, `${s.ready}/${s.total}`, s.reason, String(s.restarts), age(p, now), orNone(status.podIP), orNone((p.spec as Obj).nodeName), orNone(status.nominatedNodeName), "<none>"];
    },
  },
  namespaces: {
    columns: [nameCol, { name: "Status", type: "string", description: "The status of the namespace" }, ageCol],
    cells: (o, now) => [o.metadata.name, (o.status as Obj)?.phase ?? "", age(o, now)],
  },
  "apps/deployments": {
    columns: [
      nameCol,
      { name: "Ready", type: "string", description: "Number of the pod with ready state" },
      { name: "Up-to-date", type: "string", description: "Total number of non-terminated pods targeted by this deployment that have the desired template spec." },
      { name: "Available", type: "string", description: "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment." },
      ageCol,
    ],
    cells(o, now) {
      const st = (o.status ?? {}) as Obj;
      return [o.metadata.name, `${st.readyReplicas ?? 0}/${(o.spec as Obj).replicas ?? 0}`, st.updatedReplicas ?? 0, st.availableReplicas ?? 0, age(o, now)];
    },
  },
  "apps/replicasets": {
    columns: [
      nameCol,
      { name: "Desired", type: "integer", description: "Number of desired pods." },
      { name: "Current", type: "integer", description: "Number of actual pods." },
      { name: "Ready", type: "integer", description: "The number of ready replicas for this replica set." },
      ageCol,
    ],
    cells(o, now) {
      const st = (o.status ?? {}) as Obj;
      return [o.metadata.name, (o.spec as Obj).replicas ?? 0, st.replicas ?? 0, st.readyReplicas ?? 0, age(o, now)];
    },
  },
  "apps/daemonsets": {
    columns: [
      nameCol,
      { name: "Desired", type: "integer", description: "The total number of nodes that should be running the daemon pod." },
      { name: "Current", type: "integer", description: "The number of nodes that are running at least 1 daemon pod." },
      { name: "Ready", type: "integer", description: "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready." },
      { name: "Up-to-date", type: "integer", description: "The total number of nodes that are running updated daemon pod" },
      { name: "Available", type: "integer", description: "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available." },
      { name: "Node Selector", type: "string", description: "NodeSelector is a selector which must be true for the pod to fit on a node." },
      ageCol,
    ],
    cells(o, now) {
      const st = (o.status ?? {}) as Obj;
      const sel = (o.spec as Obj).template?.spec?.nodeSelector;
      return [
        o.metadata.name,
        st.desiredNumberScheduled ?? 0,
        st.currentNumberScheduled ?? 0,
        st.numberReady ?? 0,
        st.updatedNumberScheduled ?? 0,
        st.numberAvailable ?? 0,
        sel
          ? Object.entries(sel)
              .map(([k, v]) => `${k}=${v}`)
              .join(",")
          : "<none>",
        age(o, now),
      ];
    },
  },
  "policy/poddisruptionbudgets": {
    columns: [
      nameCol,
      {
        name: "Min Available",
        type: "string",
        description: 'The minimum number of pods that must be available simultaneously.  This can be either an integer or a string specifying a percentage, e.g. "28%".',
      },
      {
        name: "Max Unavailable",
        type: "string",
        description: 'The maximum number of pods that may be unavailable simultaneously.  This can be either an integer or a string specifying a percentage, e.g. "28%".',
      },
      { name: "Allowed Disruptions", type: "integer", description: "Number of pod disruptions that are currently allowed." },
      ageCol,
    ],
    cells(o, now) {
      const spec = o.spec as Obj;
      return [o.metadata.name, intOrString(spec.minAvailable), intOrString(spec.maxUnavailable), (o.status as Obj)?.disruptionsAllowed ?? 0, age(o, now)];
    },
  },
  "coordination.k8s.io/leases": {
    columns: [nameCol, { name: "Holder", type: "string", description: "holderIdentity contains the identity of the holder of a current lease." }, ageCol],
    cells: (o, now) => [o.metadata.name, (o.spec as Obj)?.holderIdentity ?? "", age(o, now)],
  },
  events: {
    columns: [
      { name: "Last Seen", type: "string", description: "The time at which the most recent occurrence of this event was recorded." },
      { name: "Type", type: "string", description: "Type of this event (Normal, Warning), new types could be added in the future." },
      { name: "Reason", type: "string", description: "This should be a short, machine understandable string that gives the reason for the transition into the object's current status." },
      { name: "Object", type: "string", description: "The object that this event is about." },
      { name: "Message", type: "string", description: "A human-readable description of the status of this operation." },
    ],
    cells(o, now) {
      const e = o as Obj;
      const last = e.lastTimestamp ?? e.eventTime ?? o.metadata.creationTimestamp;
      return [last ? formatAge((now - Date.parse(last)) / 1000) : "<unknown>", e.type, e.reason, `${String(e.involvedObject?.kind ?? "").toLowerCase()}/${e.involvedObject?.name ?? ""}`, e.message];
    },
  },
  // The kinds an application's manifests hold, and RBAC (Roles and ClusterRoles print Name and Created At, the default).
  services: {
    columns: [
      nameCol,
      { name: "Type", type: "string", description: "The type of the service." },
      { name: "Cluster-IP", type: "string", description: "The IP address of the service." },
      { name: "External-IP", type: "string", description: "The list of external IPs of the service." },
      { name: "Port(s)", type: "string", description: "The list of ports of the service." },
      ageCol,
      { name: "Selector", type: "string", description: "Route service traffic to pods with label keys and values matching this selector.", priority: 1 },
    ],
    cells(o, now) {
      const spec = (o.spec ?? {}) as Obj;
      const ports = ((spec.ports ?? []) as Obj[]).map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ""}/${p.protocol ?? "TCP"}`).join(",");
      const external = ((spec.externalIPs ?? []) as string[]).join(",");
      return [o.metadata.name, spec.type ?? "ClusterIP", orNone(spec.clusterIP), orNone(external), orNone(ports), age(o, now), labelsText(spec.selector)];
    },
  },
  configmaps: {
    columns: [nameCol, { name: "Data", type: "string", description: "Data contains the configuration data." }, ageCol],
    cells: (o, now) => [o.metadata.name, Object.keys((o as Obj).data ?? {}).length + Object.keys((o as Obj).binaryData ?? {}).length, age(o, now)],
  },
  secrets: {
    columns: [nameCol, { name: "Type", type: "string", description: "The type of the secret" }, { name: "Data", type: "string", description: "The number of data items in the secret" }, ageCol],
    cells: (o, now) => [o.metadata.name, (o as Obj).type ?? "Opaque", Object.keys((o as Obj).data ?? {}).length, age(o, now)],
  },
  serviceaccounts: {
    columns: [
      nameCol,
      { name: "Secrets", type: "string", description: "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use." },
      ageCol,
    ],
    cells: (o, now) => [o.metadata.name, ((o as Obj).secrets ?? []).length, age(o, now)],
  },
  persistentvolumeclaims: {
    columns: [
      nameCol,
      { name: "Status", type: "string", description: "The phase of the claim." },
      { name: "Volume", type: "string", description: "The volume bound to the claim." },
      { name: "Capacity", type: "string", description: "The capacity of the bound volume." },
      { name: "Access Modes", type: "string", description: "The access modes of the claim." },
      { name: "StorageClass", type: "string", description: "The storage class of the claim." },
      { name: "VolumeAttributesClass", type: "string", description: "The volume attributes class of the claim." },
      ageCol,
      { name: "VolumeMode", type: "string", description: "The volume mode of the claim.", priority: 1 },
    ],
    cells(o, now) {
      const spec = (o.spec ?? {}) as Obj;
      const status = (o.status ?? {}) as Obj;
      const modes = ((status.accessModes ?? []) as string[]).map((m) => ACCESS_MODES[m] ?? m).join(",");
      return [
        o.metadata.name,
        status.phase ?? "Pending",
        spec.volumeName ?? "",
        status.capacity?.storage ?? "",
        modes,
        spec.storageClassName ?? "<unset>",
        spec.volumeAttributesClassName ?? "<unset>",
        age(o, now),
        spec.volumeMode ?? "Filesystem",
      ];
    },
  },
  "networking.k8s.io/networkpolicies": {
    columns: [nameCol, { name: "Pod-Selector", type: "string", description: "Selects the pods to which this NetworkPolicy object applies." }, ageCol],
    cells: (o, now) => [o.metadata.name, selectorText((o.spec as Obj)?.podSelector), age(o, now)],
  },
  "rbac.authorization.k8s.io/rolebindings": bindingPrinter(),
  "rbac.authorization.k8s.io/clusterrolebindings": bindingPrinter(),
};

const ACCESS_MODES: Record<string, string> = { ReadWriteOnce: "RWO", ReadOnlyMany: "ROX", ReadWriteMany: "RWX", ReadWriteOncePod: "RWOP" };

function labelsText(labels: Record<string, string> | undefined): string {
  const parts = Object.entries(labels ?? {}).map(([k, v]) => `${k}=${v}`);
  return parts.length ? parts.join(",") : "<none>";
}

/** A LabelSelector as kubectl prints it: matchLabels as k=v, expressions as k in (a,b), k, !k. */
function selectorText(sel: Obj | undefined): string {
  const parts = Object.entries((sel?.matchLabels ?? {}) as Record<string, string>).map(([k, v]) => `${k}=${v}`);
  for (const e of (sel?.matchExpressions ?? []) as Obj[]) {
    if (e.operator === "Exists") parts.push(e.key);
    else if (e.operator === "DoesNotExist") parts.push(`!${e.key}`);
    else parts.push(`${e.key} ${e.operator === "In" ? "in" : "notin"} (${(e.values ?? []).join(",")})`);
  }
  return parts.length ? parts.join(",") : "<none>";
}

function bindingPrinter(): Printer {
  const subjects = (o: KObject, kind: string) =>
    (((o as Obj).subjects ?? []) as Obj[])
      .filter((s) => s.kind === kind)
      .map((s) => (kind === "ServiceAccount" ? `${s.namespace ?? o.metadata.namespace ?? ""}/${s.name}` : s.name))
      .join(", ");
  return {
    columns: [
      nameCol,
      { name: "Role", type: "string", description: "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace." },
      ageCol,
      { name: "Users", type: "string", description: "Users in the roleBinding", priority: 1 },
      { name: "Groups", type: "string", description: "Groups in the roleBinding", priority: 1 },
      { name: "ServiceAccounts", type: "string", description: "ServiceAccounts in the roleBinding", priority: 1 },
    ],
    cells: (o, now) => [o.metadata.name, `${(o as Obj).roleRef?.kind}/${(o as Obj).roleRef?.name}`, age(o, now), subjects(o, "User"), subjects(o, "Group"), subjects(o, "ServiceAccount")],
  };
}

const DEFAULT_PRINTER: Printer = {
  columns: [nameCol, { name: "Created At", type: "date", description: ageCol.description }],
  cells: (o) => [o.metadata.name, o.metadata.creationTimestamp],
};

/** Table for a list of objects; `includeObject` is None, Metadata (default) or Object. */
export function renderTable(resource: string, objects: KObject[], nowMs: number, meta: Obj, includeObject = "Metadata"): object {
  const printer = PRINTERS[resource] ?? DEFAULT_PRINTER;
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata: meta,
    columnDefinitions: printer.columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? "", description: c.description, priority: c.priority ?? 0 })),
    rows: objects.map((o) => {
      const row: Obj = { cells: printer.cells(o, nowMs) };
      if (includeObject === "Object") row.object = o;
      else if (includeObject !== "None") {
        const { managedFields: _m, ...metadata } = o.metadata;
        row.object = { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata };
      }
      return row;
    }),
  };
}

/** Whether the Accept header asks for a Table. */
export function wantsTable(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(",").some((part) => /as=Table/.test(part) && /g=meta\.k8s\.io/.test(part));
}
