/**
 * The kubelets' pod workers: a pod bound to a node starts running two seconds
 * later; a pod given a deletionTimestamp by graceful deletion is removed once
 * its grace period has passed (the kubelet's final delete).
 */
import type { KObject, StoreEvent } from "../store.js";
import { configProblem, mountProblem } from "./pod-dependencies.js";
import { R } from "../storage-names.js";
import { runningPod } from "../workloads.js";
import type { ClusterContext } from "./context.js";

type Obj = Record<string, any>;

const POD_START_MS = 2_000;
/** The kubelet's pod workers retry a pod waiting for a Secret, ConfigMap (or its mount) this often. */
const DEPENDENCY_RETRY_MS = 10_000;

/** A bound pod whose containers wait (ContainerCreating, CreateContainerConfigError). */
function waitingPod(pod: KObject, node: KObject, waiting: Obj, now: string): KObject {
  const hostIP = ((node.status as Obj).addresses as Obj[]).find((a) => a.type === "InternalIP")?.address;
  const was = (pod.status ?? {}) as Obj;
  return {
    ...pod,
    status: {
      ...was,
      phase: "Pending",
      conditions: (was.conditions ?? []) as Obj[],
      ...(hostIP ? { hostIP } : {}),
      startTime: was.startTime ?? now,
      containerStatuses: ((pod.spec as Obj).containers as Obj[]).map((c) => ({ name: c.name, image: c.image, imageID: "", ready: false, restartCount: 0, started: false, state: { waiting }, lastState: {} })),
    },
  };
}

/** A kubelet Warning Event about a pod. */
function podEvent(pod: KObject, node: string, reason: string, message: string, suffix: string, now: string): KObject {
  const m = pod.metadata;
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: `${m.name}.${suffix}`, namespace: m.namespace! },
    involvedObject: { kind: "Pod", namespace: m.namespace, name: m.name, uid: m.uid, apiVersion: "v1" },
    reason,
    message,
    source: { component: "kubelet", host: node },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
    type: "Warning",
    eventTime: null,
    reportingComponent: "kubelet",
    reportingInstance: node,
  } as KObject;
}

export class KubeletPodWorkers {
  /** Pods bound and not yet started, with when they start. */
  private readonly starting = new Map<string, number>();
  /** Pods terminating, with when their grace period ends. */
  private readonly terminating = new Map<string, number>();

  constructor(private readonly ctx: ClusterContext) {}

  observe(e: StoreEvent): void {
    if (e.resource !== R.pods) return;
    const key = e.entry.key;
    if (e.type === "DELETED") {
      this.terminating.delete(key);
      this.starting.delete(key);
      return;
    }
    if (e.type !== "MODIFIED") return;
    const meta = e.entry.obj.metadata;
    const before = e.prev!.obj;
    const now = this.ctx.clock.now();
    // The scheduler's binding.
    if (!(before.spec as Obj).nodeName && (e.entry.obj.spec as Obj).nodeName && !meta.deletionTimestamp) this.starting.set(key, now + POD_START_MS);
    // Graceful deletion set or shortened the grace period.
    if (meta.deletionTimestamp && meta.deletionGracePeriodSeconds !== undefined && meta.deletionGracePeriodSeconds !== before.metadata.deletionGracePeriodSeconds) {
      this.terminating.set(key, now + meta.deletionGracePeriodSeconds * 1000);
    }
  }

  /** Remove the pods whose grace period has ended. */
  finishTerminations(now: number): void {
    for (const [key, deadline] of [...this.terminating]) {
      if (deadline <= now) {
        this.terminating.delete(key);
        this.ctx.store.remove(R.pods, key);
      }
    }
  }

  /** Post Running for the pods whose start is due. */
  startPods(now: number): void {
    const { store, rng, clock } = this.ctx;
    for (const [key, at] of [...this.starting]) {
      if (at > now) continue;
      this.starting.delete(key);
      const e = store.get(R.pods, key);
      if (!e || e.obj.metadata.deletionTimestamp) continue;
      const node = store.get(R.nodes, (e.obj.spec as Obj).nodeName)?.obj;
      if (!node) continue;
      // The volume manager and container config need what the pod names; until then it waits, retried.
      const mount = mountProblem(e.obj, store);
      const config = mount ? undefined : configProblem(e.obj, store);
      if (mount || config) {
        this.starting.set(key, now + DEPENDENCY_RETRY_MS);
        const waiting = mount ? { reason: "ContainerCreating" } : { reason: "CreateContainerConfigError", message: config!.message };
        const pod = JSON.parse(e.json) as KObject;
        const status = waitingPod(pod, node, waiting, clock.iso());
        if (JSON.stringify(status.status) === JSON.stringify(pod.status)) continue;
        store.put(R.pods, status);
        this.ctx.create(R.events, podEvent(pod, node.metadata.name, mount ? "FailedMount" : "Failed", mount ?? `Error: ${config!.message}`, rng.hex(16), clock.iso()));
        continue;
      }
      store.put(R.pods, runningPod(JSON.parse(e.json), node, rng, clock));
    }
  }
}
