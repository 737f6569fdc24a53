/**
 * The simulator's ground truth: every change to a node it makes or accepts through its API,
 * written as it happens to a JSON-lines file (opt-in), so a checker can compare what happened
 * with what a client recorded. Lines are appended, so a restarted simulator continues the file.
 *
 * One line per fact, in the order the store made them:
 *   {"kind":"transition","cluster","node","uid","type","from","to","at","rv"}
 *   {"kind":"change","cluster","node","uid","field","item","before","after","at","rv"}
 *     field: CREATED | DELETED | KUBELET_VERSION | CONTAINER_RUNTIME | LABELS | TAINTS |
 *            SCHEDULABILITY | REBOOTED (the names the service's history uses)
 *   {"kind":"eviction","cluster","node","pod","podUid","at","terminating"}   terminating: asked again of a pod already going
 *   {"kind":"restart","cluster","at","rv","rvReset"}      the apiserver came back
 * `at` is simulated time in ms: a condition's lastTransitionTime, otherwise the time of the write.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import type { KObject, StoreEvent } from "./store.js";
import { R } from "./storage-names.js";

type Obj = Record<string, any>;

export type GroundTruthFact =
  | { kind: "transition"; cluster: string; node: string; uid: string; type: string; from: string | null; to: string; at: number; rv: number }
  | { kind: "change"; cluster: string; node: string; uid: string; field: string; item: string; before: unknown; after: unknown; at: number; rv: number }
  | { kind: "eviction"; cluster: string; node: string; pod: string; podUid: string; at: number; terminating: boolean }
  | { kind: "restart"; cluster: string; at: number; rv: number; rvReset: boolean };

/** The facts one stored node event adds (pure: the checker's tests use it too). */
export function nodeFacts(cluster: string, event: Pick<StoreEvent, "type" | "rv"> & { obj: KObject; prev?: KObject | undefined }, now: number): GroundTruthFact[] {
  const facts: GroundTruthFact[] = [];
  const node = event.obj.metadata.name;
  const uid = event.obj.metadata.uid ?? "";
  const rv = event.rv;
  const change = (field: string, before: unknown, after: unknown, item = "") => facts.push({ kind: "change", cluster, node, uid, field, item, before, after, at: now, rv });
  if (event.type === "DELETED") {
    change("DELETED", { uid }, null);
    return facts;
  }
  const prev = event.type === "ADDED" ? undefined : event.prev;
  if (!prev) {
    // A node's creation is dated by its creationTimestamp (the generated nodes were made before the log opened).
    const created = Date.parse(event.obj.metadata.creationTimestamp ?? "");
    facts.push({ kind: "change", cluster, node, uid, field: "CREATED", item: "", before: null, after: { uid }, at: Number.isFinite(created) ? created : now, rv });
  }
  const conditions = (o: KObject | undefined) => new Map<string, Obj>((((o?.status as Obj | undefined)?.conditions ?? []) as Obj[]).map((c) => [c.type as string, c]));
  const before = conditions(prev);
  for (const [type, c] of conditions(event.obj)) {
    const from = (before.get(type)?.status as string | undefined) ?? null;
    if (from === c.status) continue;
    const at = Date.parse(c.lastTransitionTime ?? "");
    facts.push({ kind: "transition", cluster, node, uid, type, from, to: c.status, at: Number.isFinite(at) ? at : now, rv });
  }
  if (!prev) return facts;
  const spec = (o: KObject) => (o.spec ?? {}) as Obj;
  const info = (o: KObject) => ((o.status as Obj | undefined)?.nodeInfo ?? {}) as Obj;
  const unschedulable = (o: KObject) => Boolean(spec(o).unschedulable);
  if (unschedulable(prev) !== unschedulable(event.obj)) change("SCHEDULABILITY", { unschedulable: unschedulable(prev) }, { unschedulable: unschedulable(event.obj) });
  if ((info(prev).kubeletVersion ?? "") !== (info(event.obj).kubeletVersion ?? "")) change("KUBELET_VERSION", info(prev).kubeletVersion ?? "", info(event.obj).kubeletVersion ?? "");
  if ((info(prev).containerRuntimeVersion ?? "") !== (info(event.obj).containerRuntimeVersion ?? ""))
    change("CONTAINER_RUNTIME", info(prev).containerRuntimeVersion ?? "", info(event.obj).containerRuntimeVersion ?? "");
  if (info(prev).bootID && info(event.obj).bootID && info(prev).bootID !== info(event.obj).bootID) change("REBOOTED", info(prev).bootID, info(event.obj).bootID);
  const labels = (o: KObject) => new Map(Object.entries(o.metadata.labels ?? {}));
  const taints = (o: KObject) => new Map(((spec(o).taints ?? []) as Obj[]).map((t) => [`${t.key}:${t.effect}`, t.value ? `${t.value}:${t.effect}` : (t.effect as string)]));
  for (const [field, a, b] of [
    ["LABELS", labels(prev), labels(event.obj)],
    ["TAINTS", taints(prev), taints(event.obj)],
  ] as const) {
    for (const item of [...new Set([...a.keys(), ...b.keys()])].sort()) {
      const from = a.get(item) ?? null;
      const to = b.get(item) ?? null;
      if (from !== to) change(field, from, to, item);
    }
  }
  return facts;
}

/** Appends the ground truth of one simulated cluster to a file (see file comment). */
export class GroundTruthLog {
  private fd: number | undefined;

  constructor(
    path: string,
    private readonly cluster: string,
    private readonly now: () => number,
  ) {
    this.fd = openSync(path, "a");
  }

  /** The store listener: node events become facts. */
  observe(event: StoreEvent): void {
    if (event.resource !== R.nodes) return;
    for (const fact of nodeFacts(this.cluster, { type: event.type, rv: event.rv, obj: event.entry.obj, prev: event.prev?.obj }, this.now())) this.write(fact);
  }

  /** A pod evicted through the eviction subresource. */
  evicted(pod: KObject): void {
    this.write({
      kind: "eviction",
      cluster: this.cluster,
      node: ((pod.spec as Obj | undefined)?.nodeName as string) ?? "",
      pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
      podUid: pod.metadata.uid ?? "",
      at: this.now(),
      terminating: Boolean(pod.metadata.deletionTimestamp),
    });
  }

  restarted(rv: number, rvReset: boolean): void {
    this.write({ kind: "restart", cluster: this.cluster, at: this.now(), rv, rvReset });
  }

  private write(fact: GroundTruthFact): void {
    if (this.fd !== undefined) writeSync(this.fd, `${JSON.stringify(fact)}\n`);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
