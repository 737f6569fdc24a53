/**
 * One node's availability over a period, replayed from its recorded history. Pure: the rows
 * in, the figures out, so every rule below is pinned by table tests with hand-computed numbers.
 *
 * The rules (the schema's doc comments and the README say the same):
 * - Events are replayed in time order; at one instant a CREATED comes first, then Ready
 *   transitions (in the order recorded), then cordon and drain events, then a DELETED.
 * - A *lifetime* of the name runs from a CREATED (or from before the loaded history) to a
 *   DELETED. A CREATED of another object ends the previous one: the same name reused while
 *   nobody watched is recorded as the new object's creation and a later-detected deletion of
 *   the old one, which is then ignored.
 * - The *Ready status* is the `to` of the last Ready transition. Before a lifetime's first
 *   loaded transition it is that transition's `from`; a null `from` (the condition first seen)
 *   means nothing is known before it. A lifetime with no Ready transition at all has the
 *   recorded current status (node_state) when it is the node's latest lifetime, else none.
 * - *Watched* time is when a replica of this installation recorded the node's cluster
 *   (recording_coverage): before the installation first watched it, in a gap of the recording,
 *   or while the cluster was disconnected longer than a watch reconnect explains, nothing is
 *   known. The period's time outside it is *unobserved*, whatever the rows say about it.
 * - *Observed* time is watched time alive with a known Ready status. Every figure lies within
 *   it: a node first seen cordoned counts as in maintenance only from when it was watched.
 * - An *outage* is a maximal observed span with Ready not True (False and Unknown split its
 *   seconds, not the outage). It counts when it overlaps [from, end); one of length 0 (False
 *   and back to True within one recorded second) counts when it lies in (from, end].
 * - An outage *ended* in the period when Ready became True at a time in (from, end]: so
 *   consecutive periods each count an outage's recovery once. One cut short by a deletion,
 *   by `end` or by a lifetime ending did not end. MTTR and flaps use an ended outage's full
 *   length, from its real start even before `from`; an outage whose start is not recorded
 *   (history pruned) is left out of both.
 * - A *cordon* state is the kind of the last CORDONED/UNCORDONED event; before a lifetime's
 *   first such event it is the opposite of that event; without any, the recorded current
 *   state for the latest lifetime, else schedulable. A *drain* runs from DRAIN_STARTED to the
 *   end event of the same operation (or, without one, to the end of the lifetime or period).
 *   Maintenance is observed time cordoned or draining (their union, never counted twice).
 */

/** The recorded current state of a node (its node_state row): the fallback of the rules above. */
export interface RecordedNode {
  cluster: string;
  name: string;
  uid: string;
  labels: Record<string, string>;
  /** The Ready status as stored ("True", "False", "Unknown"); null when it has none. */
  ready: string | null;
  unschedulable: boolean;
}

/** One recorded row that matters to availability, times in epoch milliseconds. */
export type TimelineEvent =
  | { kind: "CREATED" | "DELETED"; at: number; uid: string | null }
  | { kind: "READY"; at: number; from: string | null; to: string; seq: number }
  | { kind: "CORDONED" | "UNCORDONED"; at: number; seq: number }
  | { kind: "DRAIN_STARTED" | "DRAIN_ENDED"; at: number; operation: string; seq: number };

/** Half-open spans [start, end) in epoch milliseconds, sorted and not overlapping. */
export type Spans = readonly (readonly [number, number])[];

/**
 * The period: [from, end) where end is the earlier of `to` and now; flaps are ended outages
 * shorter than the threshold; `watched` is when the node's cluster was recorded.
 */
export interface TimelinePeriod {
  from: number;
  end: number;
  flapThresholdMs: number;
  watched: Spans;
}

/** Milliseconds of [a, b) that `spans` cover. */
export function coveredMs(spans: Spans, a: number, b: number): number {
  let total = 0;
  for (const [start, end] of spans) {
    if (start >= b) break;
    const length = Math.min(end, b) - Math.max(start, a);
    if (length > 0) total += length;
  }
  return total;
}

/** Whether the instant `t` lies in one of `spans` or ends one (a recovery seen as a span closed). */
function covers(spans: Spans, t: number): boolean {
  return spans.some(([start, end]) => start <= t && t <= end);
}

/** `spans` sorted and merged where they overlap or touch. */
export function mergedSpans(spans: Iterable<readonly [number, number]>): [number, number][] {
  const sorted = [...spans].filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
  const merged: [number, number][] = [];
  for (const [a, b] of sorted) {
    const last = merged[merged.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else merged.push([a, b]);
  }
  return merged;
}

/** A node's figures, in milliseconds; the report turns them into seconds. */
export interface NodeFigures {
  observedMs: number;
  /** Time of the period outside `watched`: nobody observed it. */
  unobservedMs: number;
  readyMs: number;
  notReadyMs: number;
  unknownMs: number;
  outages: number;
  longestOutageMs: number;
  /** Outages that ended in the period with a recorded start, and their summed full length: MTTR's parts. */
  endedOutages: number;
  endedOutageMs: number;
  flaps: number;
  maintenanceMs: number;
  /** Deleted before `end` and not created again. */
  deleted: boolean;
}

type Status = "True" | "False" | "Unknown";

const RANK: Record<TimelineEvent["kind"], number> = {
  CREATED: 0,
  READY: 1,
  CORDONED: 2,
  UNCORDONED: 2,
  DRAIN_STARTED: 3,
  DRAIN_ENDED: 3,
  DELETED: 4,
};

function byTime(a: TimelineEvent, b: TimelineEvent): number {
  return a.at - b.at || RANK[a.kind] - RANK[b.kind] || ("seq" in a && "seq" in b ? a.seq - b.seq : 0);
}

/** Kubernetes's three statuses; anything else a kubelet might write is as good as Unknown. */
function statusOf(stored: string | null): Status | null {
  if (stored === null) return null;
  return stored === "True" || stored === "False" ? stored : "Unknown";
}

/** What holds at the start of a lifetime, looked up from its own events (see the rules above). */
interface LifetimeStart {
  uid: string | null;
  status: Status | null;
  cordoned: boolean;
  /** Drains whose end is in the lifetime but whose start is not: running since it began. */
  drains: string[];
}

/** Whether a DELETED of `deletedUid` ends the lifetime of `uid` (unknown on either side: assume so). */
function ends(deletedUid: string | null, uid: string | null): boolean {
  return uid === null || deletedUid === null || deletedUid === uid;
}

function lifetimeStart(node: RecordedNode, events: readonly TimelineEvent[], start: number): LifetimeStart {
  const first = events[start];
  let uid = first?.kind === "CREATED" ? first.uid : null;
  let firstReady: Extract<TimelineEvent, { kind: "READY" }> | undefined;
  let firstCordon: TimelineEvent | undefined;
  const started = new Set<string>();
  const drains: string[] = [];
  let later = false;
  for (let i = first?.kind === "CREATED" ? start + 1 : start; i < events.length; i++) {
    const e = events[i]!;
    if (e.kind === "CREATED") {
      later = true;
      break;
    }
    if (e.kind === "DELETED" && ends(e.uid, uid)) {
      uid ??= e.uid;
      break;
    }
    if (e.kind === "READY") firstReady ??= e;
    else if (e.kind === "CORDONED" || e.kind === "UNCORDONED") firstCordon ??= e;
    else if (e.kind === "DRAIN_STARTED") started.add(e.operation);
    else if (e.kind === "DRAIN_ENDED" && !started.has(e.operation)) drains.push(e.operation);
  }
  // node_state describes the node's latest object: this lifetime, if it is the same uid, or
  // (uid unknown) if no later object was created.
  const latest = uid !== null ? uid === node.uid : !later;
  return {
    uid,
    status: firstReady ? statusOf(firstReady.from) : latest ? statusOf(node.ready) : null,
    cordoned: firstCordon ? firstCordon.kind === "UNCORDONED" : latest && node.unschedulable,
    drains,
  };
}

/** Replays one node's events over the period. `events` need not be sorted. */
export function nodeFigures(node: RecordedNode, events: readonly TimelineEvent[], period: TimelinePeriod): NodeFigures {
  const { from, end, flapThresholdMs, watched } = period;
  const sorted = [...events].sort(byTime);
  const figures: NodeFigures = {
    observedMs: 0,
    unobservedMs: end > from ? end - from - coveredMs(watched, from, end) : 0,
    readyMs: 0,
    notReadyMs: 0,
    unknownMs: 0,
    outages: 0,
    longestOutageMs: 0,
    endedOutages: 0,
    endedOutageMs: 0,
    flaps: 0,
    maintenanceMs: 0,
    deleted: false,
  };

  let cursor = -Infinity;
  let alive = true;
  let uid: string | null = null;
  let status: Status | null = null;
  let cordoned = false;
  const draining = new Set<string>();
  let outageStart: number | undefined;
  let deletedAt: number | undefined;

  /** Adds [cursor, t) in its current state, clipped to the period. */
  const account = (t: number) => {
    const a = Math.max(cursor, from);
    const b = Math.min(t, end);
    const length = b > a && alive && status !== null ? coveredMs(watched, a, b) : 0;
    if (length > 0) {
      figures.observedMs += length;
      if (status === "True") figures.readyMs += length;
      else if (status === "False") figures.notReadyMs += length;
      else figures.unknownMs += length;
      if (cordoned || draining.size > 0) figures.maintenanceMs += length;
    }
    cursor = Math.max(cursor, t);
  };
  const closeOutage = (stop: number, recovered: boolean) => {
    if (outageStart === undefined) return;
    const start = outageStart;
    outageStart = undefined;
    const overlap = coveredMs(watched, Math.max(start, from), Math.min(stop, end));
    // A zero-length outage is a recovery within one recorded second: real only when it recovered.
    const counts = start === stop ? recovered && from < stop && stop <= end && covers(watched, stop) : overlap > 0;
    if (!counts) return;
    figures.outages++;
    figures.longestOutageMs = Math.max(figures.longestOutageMs, Math.max(0, overlap));
    if (recovered && from < stop && stop <= end && Number.isFinite(start)) {
      figures.endedOutages++;
      figures.endedOutageMs += stop - start;
      if (stop - start < flapThresholdMs) figures.flaps++;
    }
  };
  /** Sets the state observed from `t` on, opening or closing an outage as Ready leaves or regains True. */
  const observe = (t: number, nextAlive: boolean, nextStatus: Status | null) => {
    const wasOut = alive && status !== null && status !== "True";
    const isOut = nextAlive && nextStatus !== null && nextStatus !== "True";
    if (wasOut && !isOut) closeOutage(t, nextAlive && nextStatus === "True");
    if (!wasOut && isOut) outageStart = t;
    alive = nextAlive;
    status = nextStatus;
  };
  const beginLifetime = (t: number, index: number) => {
    const start = lifetimeStart(node, sorted, index);
    uid = start.uid;
    cordoned = start.cordoned;
    draining.clear();
    for (const operation of start.drains) draining.add(operation);
    deletedAt = undefined;
    observe(t, true, start.status);
  };

  // Before a first recorded creation the name had no object; otherwise the loaded rows begin
  // inside a lifetime that started earlier.
  if (sorted[0]?.kind === "CREATED") alive = false;
  else beginLifetime(-Infinity, 0);
  for (let i = 0; i < sorted.length; i++) {
    const e = sorted[i]!;
    if (e.at > end) break;
    account(e.at);
    if (e.kind === "CREATED") {
      // A new object under this name: what was known of the previous one stops here.
      if (!(alive && uid !== null && e.uid === uid)) {
        observe(e.at, false, null);
        beginLifetime(e.at, i);
      }
      continue;
    }
    if (!alive) continue;
    switch (e.kind) {
      case "DELETED":
        if (ends(e.uid, uid)) {
          observe(e.at, false, null);
          deletedAt = e.at;
        }
        break;
      case "READY":
        observe(e.at, true, statusOf(e.to));
        break;
      case "CORDONED":
      case "UNCORDONED":
        cordoned = e.kind === "CORDONED";
        break;
      case "DRAIN_STARTED":
        draining.add(e.operation);
        break;
      case "DRAIN_ENDED":
        draining.delete(e.operation);
        break;
    }
  }
  account(end);
  closeOutage(end, false);
  figures.deleted = deletedAt !== undefined && deletedAt < end;
  return figures;
}
