/**
 * The disruption controller: keeps each PodDisruptionBudget's status
 * (expected, healthy and desired pods, disruptions allowed, recently evicted
 * pods) current for the namespaces whose pods or budgets changed. The
 * eviction subresource reads and spends what it computes.
 */
import { objectKey, type KObject, type StoreEvent } from "../store.js";
import { R } from "../storage-names.js";
import { isReadyPod, isTerminal } from "../workloads.js";
import { labelSelectorFromMatchLabels, NOTHING_SELECTOR, type LabelSelector } from "../../k8s/label-selector.js";
import type { ClusterContext } from "./context.js";
import { WorkQueue } from "./work-queue.js";

type Obj = Record<string, any>;

/** How long an evicted pod counts against its budget while it is still there. */
const DISRUPTED_POD_TIMEOUT_MS = 120_000;

/** The label selector of a workload or PDB object (null selector matches nothing). */
export function selectorOf(spec: Obj | undefined): LabelSelector {
  const sel = spec?.selector;
  if (!sel) return NOTHING_SELECTOR;
  return labelSelectorFromMatchLabels(sel.matchLabels, sel.matchExpressions);
}

/** The DisruptionAllowed condition of a PDB status. */
export function pdbConditions(allowed: boolean, now: string, generation: number): Obj[] {
  return [
    {
      type: "DisruptionAllowed",
      status: allowed ? "True" : "False",
      reason: allowed ? "SufficientPods" : "InsufficientPods",
      message: "",
      lastTransitionTime: now,
      observedGeneration: generation,
    },
  ];
}

export class DisruptionController {
  /** Namespaces whose pods or budgets changed. */
  private readonly namespaces = new WorkQueue();

  constructor(private readonly ctx: ClusterContext) {}

  observe(e: StoreEvent): void {
    if (e.resource === R.pods || (e.resource === R.pdbs && e.type !== "DELETED")) this.namespaces.add(e.entry.obj.metadata.namespace!);
  }

  sync(): void {
    this.namespaces.drain((ns) => {
      for (const e of [...this.ctx.store.list(R.pdbs, ns)]) this.refresh(e.obj);
    });
  }

  /** PDBs in the pod's namespace whose selector matches it. */
  budgetsFor(pod: KObject): KObject[] {
    const out: KObject[] = [];
    for (const e of this.ctx.store.list(R.pdbs, pod.metadata.namespace)) {
      if (selectorOf(e.obj.spec as Obj).matches(pod.metadata.labels)) out.push(e.obj);
    }
    return out;
  }

  /** Recompute one PDB's status now; returns the stored result. */
  refresh(pdb: KObject): KObject {
    const { store, clock } = this.ctx;
    const spec = pdb.spec as Obj;
    const sel = selectorOf(spec);
    let expected = 0;
    let healthy = 0;
    const names = new Set<string>();
    for (const p of this.podsMatching(pdb.metadata.namespace!, spec)) {
      if (!sel.matches(p.metadata.labels) || isTerminal(p)) continue;
      names.add(p.metadata.name);
      if (p.metadata.deletionTimestamp) continue;
      expected++;
      if (isReadyPod(p)) healthy++;
    }
    const resolve = (v: unknown): number => (typeof v === "string" && v.endsWith("%") ? Math.ceil((Number(v.slice(0, -1)) * expected) / 100) : Number(v));
    let desired: number;
    if (spec.minAvailable !== undefined) desired = resolve(spec.minAvailable);
    else if (spec.maxUnavailable !== undefined) desired = Math.max(0, expected - resolve(spec.maxUnavailable));
    else desired = expected;
    const old = (pdb.status ?? {}) as Obj;
    const now = clock.now();
    const disrupted: Record<string, string> = {};
    for (const [name, at] of Object.entries((old.disruptedPods ?? {}) as Record<string, string>)) {
      // Entries clear once the pod is gone or after the controller's timeout.
      if (names.has(name) && now - Date.parse(at) < DISRUPTED_POD_TIMEOUT_MS) {
        const p = store.get(R.pods, objectKey(pdb.metadata.namespace, name))?.obj;
        if (p && !p.metadata.deletionTimestamp) disrupted[name] = at;
      }
    }
    const allowed = Math.max(0, healthy - desired - Object.keys(disrupted).length);
    const key = objectKey(pdb.metadata.namespace, pdb.metadata.name);
    const oldAllowed = old.conditions?.[0]?.status;
    const condChanged = oldAllowed !== (allowed > 0 ? "True" : "False");
    const e = this.ctx.update(R.pdbs, key, (c) => {
      c.status = {
        observedGeneration: c.metadata.generation,
        ...(Object.keys(disrupted).length ? { disruptedPods: disrupted } : {}),
        disruptionsAllowed: allowed,
        currentHealthy: healthy,
        desiredHealthy: desired,
        expectedPods: expected,
        conditions: condChanged ? pdbConditions(allowed > 0, clock.iso(), c.metadata.generation!) : old.conditions,
      };
    });
    return e?.obj ?? pdb;
  }

  /** Pods of a namespace that a selector may match, narrowed by the label index when it can be. */
  private *podsMatching(namespace: string, spec: Obj): Generator<KObject> {
    const { store } = this.ctx;
    const first = Object.entries((spec?.selector?.matchLabels ?? {}) as Record<string, string>)[0];
    if (first) {
      for (const e of store.byIndexEntries(R.pods, "label", `${namespace}|${first[0]}=${first[1]}`)) yield e.obj;
      return;
    }
    for (const e of store.list(R.pods, namespace)) yield e.obj;
  }
}
