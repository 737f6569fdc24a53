/** Cached nodes and pods made by hand, for tests of the pure functions that read them. */
import type { CachedNode, CachedPod } from "../../src/cluster/model.js";

/**
 * A cached node: no conditions unless given (or `ready` is, which makes a Ready condition of
 * that status); capacity defaults to allocatable.
 */
export function cachedNode(name: string, opts: Partial<CachedNode> & { ready?: boolean } = {}): CachedNode {
  const { ready, ...fields } = opts;
  return {
    cluster: "c1",
    name,
    uid: name,
    resourceVersion: "1",
    creationTimestamp: "2026-01-01T00:00:00Z",
    labels: {},
    annotations: {},
    taints: [],
    unschedulable: false,
    conditions: ready === undefined ? [] : [{ type: "Ready", status: ready ? "True" : "False" }],
    addresses: [],
    nodeInfo: { kubeletVersion: "", containerRuntimeVersion: "", osImage: "", kernelVersion: "", operatingSystem: "", architecture: "" },
    capacity: fields.allocatable ?? {},
    allocatable: {},
    ...fields,
  };
}

/** A cached pod, Running in namespace default unless told otherwise. */
export function cachedPod(name: string, opts: Partial<CachedPod> = {}): CachedPod {
  return {
    cluster: "c1",
    namespace: "default",
    name,
    uid: name,
    resourceVersion: "1",
    nodeName: "",
    phase: "Running",
    labels: {},
    ownerKind: undefined,
    ownerName: undefined,
    daemonSet: false,
    mirror: false,
    emptyDir: false,
    deletionTimestamp: undefined,
    terminationGracePeriodSeconds: undefined,
    requests: {},
    limits: {},
    creationTimestamp: "2026-01-01T00:00:00Z",
    noExecuteTolerations: {},
    ...opts,
  };
}
