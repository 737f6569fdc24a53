/**
 * Churn: what happens to a real fleet on its own, at an expected `rate`
 * scenarios per simulated minute: a pressure condition flaps, a kubelet goes
 * silent (Unknown) or reports NotReady and recovers, a kubelet is upgraded, a
 * node is added or removed. It acts through the same handles tests use.
 */
import type { KObject } from "../store.js";
import type { Rng } from "../rng.js";
import { R } from "../storage-names.js";
import { LATEST_KUBELET } from "../nodes.js";

type Obj = Record<string, any>;

/** The cluster handles churn drives (SimCluster's test handles). */
export interface ChurnTarget {
  readonly rng: Rng;
  get(resource: string, name: string, namespace?: string): KObject | undefined;
  nodeNames(): string[];
  update(resource: string, key: string, fn: (copy: KObject) => KObject | void): unknown;
  setNodeCondition(name: string, type: string, status: "True" | "False" | "Unknown"): unknown;
  stopKubelet(name: string): void;
  startKubelet(name: string): void;
  nodeEvent(name: string, reason: string, message: string): void;
  addNode(): unknown;
  removeNode(name: string): unknown;
  /** Run `run` at a simulated time `ms` from now. */
  later(ms: number, run: () => void): void;
}

export class ChurnController {
  private lastSync: number;

  constructor(
    private readonly cluster: ChurnTarget,
    now: number,
  ) {
    this.lastSync = now;
  }

  /** Run the scenarios due since the last sync (called every tick, so a rate switched on later starts from now). */
  sync(now: number, rate: number): void {
    const elapsedMin = Math.max(0, now - this.lastSync) / 60_000;
    this.lastSync = now;
    if (rate <= 0) return;
    // Poisson-ish: expected `rate` scenarios per simulated minute.
    let expected = rate * elapsedMin;
    while (expected > 0) {
      if (this.cluster.rng.next() < Math.min(1, expected)) this.scenario();
      expected -= 1;
    }
  }

  private scenario(): void {
    const c = this.cluster;
    const rng = c.rng;
    const names = c.nodeNames().filter((n) => !n.startsWith("control-plane"));
    if (names.length === 0) return;
    const node = rng.pick(names);
    const exists = () => c.get(R.nodes, node) !== undefined;
    const kind = rng.weighted([
      ["flap", 40],
      ["unknown", 15],
      ["notready", 15],
      ["upgrade", 15],
      ["add", 8],
      ["remove", 7],
    ] as const);
    switch (kind) {
      case "flap": {
        const type = rng.pick(["MemoryPressure", "DiskPressure", "PIDPressure"]);
        c.setNodeCondition(node, type, "True");
        c.later(rng.int(30, 180) * 1000, () => exists() && c.setNodeCondition(node, type, "False"));
        break;
      }
      case "unknown":
        c.stopKubelet(node);
        c.later(rng.int(60, 240) * 1000, () => c.startKubelet(node));
        break;
      case "notready":
        c.setNodeCondition(node, "Ready", "False");
        c.later(rng.int(20, 120) * 1000, () => exists() && c.setNodeCondition(node, "Ready", "True"));
        break;
      case "upgrade":
        c.update(R.nodes, node, (n) => {
          const info = (n.status as Obj).nodeInfo;
          info.kubeletVersion = LATEST_KUBELET;
          info.kubeProxyVersion = LATEST_KUBELET;
          info.bootID = rng.uid();
        });
        c.nodeEvent(node, "Starting", "Starting kubelet.");
        break;
      case "add":
        c.addNode();
        break;
      case "remove":
        if (names.length > 3) c.removeNode(node);
        break;
    }
  }
}
