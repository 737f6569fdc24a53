/**
 * The form in which the decode worker (pod-decode-worker.ts) hands stripped pods to the main
 * thread: one JSON array per pod, its label set and resource amounts sent once per stream as
 * numbered definitions: ~150 bytes against ~3 KB of a pod's JSON. For the 150,000 pods of a
 * 5,000-node cluster, reading them cost the main thread 0.5 s where JSON.parse of the pods cost
 * 4.6 s; a structured clone of the stripped pods cost it more than these arrays in a first trial
 * (2.1-2.2 s against 1.7-1.9 s, each with a copy of the stream's bytes).
 *
 * Every other event, and a pod whose stripped form would not survive JSON exactly (a key or
 * resourceVersion that is not a string, a grace period of -0, an amount that is not finite), is
 * sent as its line, read again on the main thread, so the cache holds exactly what stripPod
 * makes there.
 */

import type { CachedPod, ResourceAmounts } from "./model.js";
import { keyOf, sharedInterner } from "./strip.js";

/** A pod as sent: [key, namespace, name, uid, resourceVersion, nodeName, phase, labels#, ownerKind, ownerName, flags, deletionTimestamp, grace, requests#, limits#, creationTimestamp, noExecuteTolerations#]. */
export type WirePod = [string, string, string, string, string, string, string, number, string | null, string | null, number, string | null, number | null, number, number, string, number];

/** One watch event: a stripped pod (`p`), or the line of any other event as the server sent it. */
export type WireEvent = { type: string; p: WirePod } | { line: string };

/** A batch: the definitions it introduces (by number), then its events in stream order. */
export interface WireBatch {
  defs: [number, Readonly<Record<string, unknown>>][];
  events: WireEvent[];
  /** The definitions sent so far were forgotten before `defs`: the numbering starts again. */
  reset?: true;
}

const DAEMON_SET = 1;
const MIRROR = 2;
const EMPTY_DIR = 4;

/** Past this many definitions in one stream both sides start afresh at the next batch (bounded, like the interner). */
const DEFINITIONS_LIMIT = 50_000;

/** The worker's side: numbers each shared map the first time a stream sends it. */
export class WireEncoder {
  private numbers = new Map<object, number>();
  private defs: WireBatch["defs"] = [];
  private events: WireEvent[] = [];
  private reset = false;

  get size(): number {
    return this.events.length;
  }

  /** `pod` is stripPod's result for `raw`, the object of `line` (with the worker's interner, so equal maps are one object). */
  addPod(type: string, raw: Record<string, any>, pod: CachedPod, line: string): void {
    const key = keyOf(raw);
    const grace = pod.terminationGracePeriodSeconds;
    const exact = typeof key === "string" && typeof raw.metadata?.resourceVersion === "string" && !Object.is(grace, -0) && finite(pod.requests) && finite(pod.limits);
    if (!exact) return this.addLine(line);
    const flags = (pod.daemonSet ? DAEMON_SET : 0) | (pod.mirror ? MIRROR : 0) | (pod.emptyDir ? EMPTY_DIR : 0);
    const p: WirePod = [
      key,
      pod.namespace,
      pod.name,
      pod.uid,
      pod.resourceVersion,
      pod.nodeName,
      pod.phase,
      this.number(pod.labels),
      pod.ownerKind ?? null,
      pod.ownerName ?? null,
      flags,
      pod.deletionTimestamp ?? null,
      grace ?? null,
      this.number(pod.requests),
      this.number(pod.limits),
      pod.creationTimestamp,
      this.number(pod.noExecuteTolerations),
    ];
    this.events.push({ type, p });
  }

  addLine(line: string): void {
    this.events.push({ line });
  }

  /** The batch so far, as text, and a fresh one begun. */
  take(): string {
    const batch: WireBatch = { defs: this.defs, events: this.events, ...(this.reset ? { reset: true as const } : {}) };
    this.defs = [];
    this.events = [];
    // Forgotten only between batches, so no batch refers to a number from before its reset.
    this.reset = this.numbers.size >= DEFINITIONS_LIMIT;
    if (this.reset) this.numbers = new Map();
    return JSON.stringify(batch);
  }

  private number(map: object): number {
    let n = this.numbers.get(map);
    if (n !== undefined) return n;
    n = this.numbers.size;
    this.numbers.set(map, n);
    this.defs.push([n, map as Readonly<Record<string, unknown>>]);
    return n;
  }
}

function finite(amounts: ResourceAmounts): boolean {
  for (const value of Object.values(amounts)) if (!Number.isFinite(value)) return false;
  return true;
}

/** The main thread's side: turns a stream's batches back into the cache's pods. */
export class WireDecoder {
  private maps: Readonly<Record<string, any>>[] = [];
  private readonly interner = sharedInterner;

  constructor(private readonly cluster: string) {}

  /** Calls `onPod` or `onLine` for each event of the batch `text`, in order, while `reading()`. */
  decode(text: string, reading: () => boolean, onPod: (type: string, key: string, pod: CachedPod) => void, onLine: (line: string) => void): void {
    const batch = JSON.parse(text) as WireBatch;
    if (batch.reset) this.maps = [];
    for (const [n, map] of batch.defs) this.maps[n] = this.interner.map(map);
    for (const event of batch.events) {
      if (!reading()) return;
      if ("line" in event) onLine(event.line);
      else onPod(event.type, event.p[0], this.pod(event.p));
    }
  }

  /** The same properties in the same order as stripPod's: one hidden class for every pod. */
  private pod(p: WirePod): CachedPod {
    const s = this.interner;
    return Object.freeze({
      cluster: this.cluster,
      namespace: s.string(p[1]),
      name: p[2],
      uid: p[3],
      resourceVersion: p[4],
      nodeName: s.string(p[5]),
      phase: s.string(p[6]),
      labels: this.maps[p[7]] as Readonly<Record<string, string>>,
      ownerKind: s.string(p[8] ?? undefined),
      ownerName: s.string(p[9] ?? undefined),
      daemonSet: (p[10] & DAEMON_SET) !== 0,
      mirror: (p[10] & MIRROR) !== 0,
      emptyDir: (p[10] & EMPTY_DIR) !== 0,
      deletionTimestamp: p[11] ?? undefined,
      terminationGracePeriodSeconds: p[12] ?? undefined,
      requests: this.maps[p[13]] as ResourceAmounts,
      limits: this.maps[p[14]] as ResourceAmounts,
      creationTimestamp: p[15],
      noExecuteTolerations: this.maps[p[16]] as ResourceAmounts,
    });
  }
}
