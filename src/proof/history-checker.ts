/**
 * Compares what the simulator did (its ground truth, src/sim/ground-truth.ts) with what the
 * service recorded (the history tables), per cluster and node, the way Jepsen's checkers compare
 * a history of operations with what a store kept. Pure: facts and rows in, a verdict out.
 *
 * Transitions are matched exactly on (type, to, lastTransitionTime): the service takes a
 * transition's time from the condition, so any other time is a wrong row. Node changes and
 * maintenance events carry the time the service saw them, so they match within a tolerance
 * (the watch's delay plus any outage); a reconciled row may come later than that.
 */
import type { GroundTruthFact } from "../sim/ground-truth.js";

export interface RecordedTransition {
  id: number;
  cluster: string;
  node: string;
  type: string;
  from: string | null;
  to: string;
  at: number;
  reconciled: boolean;
}

export interface RecordedChange {
  id: number;
  cluster: string;
  node: string;
  field: string;
  item: string;
  before: unknown;
  after: unknown;
  at: number;
  reconciled: boolean;
}

export interface RecordedMaintenance {
  id: number;
  cluster: string;
  node: string;
  kind: string;
  at: number;
}

export interface RecordedDrainPod {
  namespace: string;
  name: string;
  uid?: string;
  status: string;
}

export interface RecordedDrain {
  id: string;
  cluster: string;
  node: string;
  status: string;
  dryRun: boolean;
  pods: RecordedDrainPod[];
}

/** The node as the simulator holds it when the check runs (for a drain's final state). */
export interface FinalNode {
  unschedulable: boolean;
  /** Pods on the node a drain must have removed (not DaemonSet-managed, not mirror, not finished). */
  evictablePods: string[];
}

export interface RecordedHistory {
  transitions: RecordedTransition[];
  changes: RecordedChange[];
  maintenance: RecordedMaintenance[];
  drains: RecordedDrain[];
}

export interface CheckOptions {
  /** How late a node change or maintenance event may be recorded (ms) before its time is called off. */
  toleranceMs: number;
  /** The node as each drain (by id) left it, read when the drain ended; drains are checked against it. */
  finalNodes?: ReadonlyMap<string, FinalNode>;
  /**
   * Spans (ms) when no replica could record: from a fault that stops the recording replica to a
   * new leader's reconcile. A change that happened and was undone (or superseded) inside one is
   * unobservable, not lost.
   */
  gaps?: readonly (readonly [number, number])[];
  /** Facts after this time (ms) are past the end of the run: left out, and rows of after it too. */
  until?: number;
  /** Node change fields compared (default: all of them). */
  fields?: readonly string[];
}

export type ProblemKind = "lost" | "unobservable" | "evictionRepeated" | "duplicated" | "phantom" | "outOfOrder" | "chainBreak" | "timeOff" | "evictedTwice" | "drainUnfinished";

/** One thing wrong, with what is needed to find it in the file and the database. */
export interface Problem {
  kind: ProblemKind;
  /** transition | change | maintenance | drain */
  stream: string;
  cluster: string;
  node: string;
  detail: string;
}

export interface Tally {
  checked: number;
  lost: number;
  /**
   * Facts no client could have recorded, so not counted as lost: a run of them inside a gap in
   * recording (a leader killed or frozen) that reverted within it, or whose end a reconcile
   * recorded. Kubernetes keeps only a condition's last transition.
   */
  unobservable: number;
  duplicated: number;
  phantom: number;
  outOfOrder: number;
  chainBreaks: number;
  timeOff: number;
}

export interface CheckReport {
  transitions: Tally;
  changes: Tally;
  maintenance: Tally;
  /**
   * evictions: pods evicted; evictedTwice: a pod evicted again once going is not counted here but
   * in repeatedOfTerminating (the apiserver accepts it and nothing changes), a second eviction of a
   * pod not yet going is.
   */
  drains: { checked: number; evictions: number; evictedTwice: number; repeatedOfTerminating: number; unfinished: number };
  /** By `cluster/node`: its problems (only nodes with any). */
  byNode: Record<string, Problem[]>;
  problems: Problem[];
  /** Loss, duplicate or phantom anywhere, or a drain that evicted a pod twice: the check fails. */
  failed: boolean;
}

const tally = (): Tally => ({ checked: 0, lost: 0, unobservable: 0, duplicated: 0, phantom: 0, outOfOrder: 0, chainBreaks: 0, timeOff: 0 });

function groupBy<T>(items: Iterable<T>, key: (t: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    let g = groups.get(k);
    if (!g) groups.set(k, (g = []));
    g.push(item);
  }
  return groups;
}

/** JSON with object keys sorted, so `{a,b}` from the file and `{b,a}` from jsonb compare equal. */
function canonical(value: unknown): string {
  if (value === undefined) return "null";
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const o = value as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
    .join(",")}}`;
}

interface Expected {
  /** The state before and after (transitions: statuses; changes: the item's values). */
  from: string;
  to: string;
  value: string;
  at: number;
  detail: string;
}

interface Found {
  id: number;
  value: string;
  at: number;
  reconciled: boolean;
  detail: string;
}

/**
 * Matches one stream (a node's condition type, a label, cordons) of facts with rows: each fact
 * takes the first row of its value recorded within the window; rows left over are duplicates
 * when a fact of their value happened before them, phantoms when none did.
 */
function matchStream(
  expected: Expected[],
  found: Found[],
  toleranceMs: number,
  exact: boolean,
  t: Tally,
  problem: (kind: ProblemKind, detail: string) => void,
  gaps: readonly (readonly [number, number])[] = [],
): void {
  t.checked += expected.length;
  const matches: (Found | undefined)[] = [];
  const used = new Set<number>();
  const matchedValues = new Map<string, number[]>();
  const byTime = [...found].sort((a, b) => a.at - b.at || a.id - b.id);
  for (const [i, e] of expected.entries()) {
    const exactRow = byTime.find((f) => !used.has(f.id) && f.value === e.value && f.at === e.at);
    // A transition whose time is not the condition's, or a change seen late or (reconciled) after an outage;
    // else one stamped later still, or earlier (a skewed clock), but between the stream's facts
    // before and after it: recorded, at the wrong time.
    const prevAt = expected[i - 1]?.at ?? -Infinity;
    const nextAt = expected[i + 1]?.at ?? Infinity;
    const near =
      exactRow ??
      byTime.find((f) => !used.has(f.id) && f.value === e.value && f.at >= e.at - toleranceMs && (f.at <= e.at + toleranceMs || f.reconciled)) ??
      byTime.find((f) => !used.has(f.id) && f.value === e.value && f.at >= prevAt - toleranceMs && f.at <= nextAt + toleranceMs);
    matches.push(near);
    if (!near) continue;
    used.add(near.id);
    let times = matchedValues.get(e.value);
    if (!times) matchedValues.set(e.value, (times = []));
    times.push(e.at);
    const off = exact ? near.at !== e.at : Math.abs(near.at - e.at) > toleranceMs && !near.reconciled;
    if (off) {
      t.timeOff++;
      problem("timeOff", `${e.detail}: happened ${new Date(e.at).toISOString()}, recorded ${new Date(near.at).toISOString()} (row ${near.id})`);
    }
  }
  // Runs of facts with no row: unobservable when inside one gap and undone or reconciled at its end.
  const gapOf = (at: number) => gaps.findIndex(([from, to]) => at >= from && at <= to);
  for (let i = 0; i < expected.length; ) {
    if (matches[i]) {
      i++;
      continue;
    }
    let j = i;
    while (j + 1 < expected.length && !matches[j + 1]) j++;
    const gap = gapOf(expected[i]!.at);
    const sameGap = gap >= 0 && gapOf(expected[j]!.at) === gap;
    const undone = expected[i]!.from === expected[j]!.to;
    const reconciledAfter = matches[j + 1]?.reconciled === true && gapOf(expected[j + 1]!.at) === gap;
    for (let k = i; k <= j; k++) {
      const e = expected[k]!;
      if (sameGap && (undone || reconciledAfter)) {
        t.unobservable++;
        problem("unobservable", `${e.detail} at ${new Date(e.at).toISOString()} (${undone ? "undone" : "superseded"} while no replica recorded)`);
      } else {
        t.lost++;
        problem("lost", `${e.detail} at ${new Date(e.at).toISOString()}`);
      }
    }
    i = j + 1;
  }
  for (const f of byTime) {
    if (used.has(f.id)) continue;
    // A replay of something that did happen (however late) is a duplicate; a phantom never happened before it was recorded.
    const twin = (matchedValues.get(f.value) ?? []).some((at) => at <= f.at + toleranceMs);
    if (twin) {
      t.duplicated++;
      problem("duplicated", `${f.detail} at ${new Date(f.at).toISOString()} (row ${f.id})`);
    } else {
      t.phantom++;
      problem("phantom", `${f.detail} at ${new Date(f.at).toISOString()} (row ${f.id}) never happened`);
    }
  }
  // Rows in the order they were written must be in the order things happened.
  const byId = [...found].sort((a, b) => a.id - b.id);
  for (let i = 1; i < byId.length; i++) {
    if (byId[i]!.at < byId[i - 1]!.at && !byId[i]!.reconciled) {
      t.outOfOrder++;
      problem("outOfOrder", `row ${byId[i]!.id} (${byId[i]!.detail} at ${new Date(byId[i]!.at).toISOString()}) written after row ${byId[i - 1]!.id} of ${new Date(byId[i - 1]!.at).toISOString()}`);
    }
  }
}

/** The verdict (see file comment). */
export function checkHistory(allFacts: readonly GroundTruthFact[], allRecorded: RecordedHistory, options: CheckOptions): CheckReport {
  const until = options.until ?? Infinity;
  const facts = allFacts.filter((f) => f.kind === "restart" || f.at <= until);
  const recorded = {
    ...allRecorded,
    transitions: allRecorded.transitions.filter((r) => r.at <= until),
    changes: allRecorded.changes.filter((r) => r.at <= until),
    maintenance: allRecorded.maintenance.filter((r) => r.at <= until),
  };
  const report: CheckReport = {
    transitions: tally(),
    changes: tally(),
    maintenance: tally(),
    drains: { checked: 0, evictions: 0, evictedTwice: 0, repeatedOfTerminating: 0, unfinished: 0 },
    byNode: {},
    problems: [],
    failed: false,
  };
  const add = (p: Problem) => {
    report.problems.push(p);
    (report.byNode[`${p.cluster}/${p.node}`] ??= []).push(p);
  };
  const nodeKey = (x: { cluster: string; node: string }) => `${x.cluster}\u0000${x.node}`;
  const split = (k: string) => k.split("\u0000") as [string, string, ...string[]];

  // Transitions, per node and condition type.
  const truthTransitions = groupBy(
    facts.filter((f): f is Extract<GroundTruthFact, { kind: "transition" }> => f.kind === "transition"),
    (f) => `${nodeKey(f)}\u0000${f.type}`,
  );
  const rowTransitions = groupBy(recorded.transitions, (r) => `${nodeKey(r)}\u0000${r.type}`);
  for (const key of new Set([...truthTransitions.keys(), ...rowTransitions.keys()])) {
    const [cluster, node, type] = split(key);
    const rows = rowTransitions.get(key) ?? [];
    matchStream(
      (truthTransitions.get(key) ?? []).map((f) => ({ from: f.from ?? "-", to: f.to, value: `${f.from ?? "-"}->${f.to}`, at: f.at, detail: `${type} ${f.from ?? "(new)"}->${f.to}` })),
      rows.map((r) => ({ id: r.id, value: `${r.from ?? "-"}->${r.to}`, at: r.at, reconciled: r.reconciled, detail: `${type} ${r.from ?? "(new)"}->${r.to}` })),
      options.toleranceMs,
      true,
      report.transitions,
      (kind, detail) => add({ kind, stream: "transition", cluster, node, detail }),
      options.gaps,
    );
    // Each row's `from` is the previous row's `to`; a new chain starts only with a node (from null).
    const ordered = [...rows].sort((a, b) => a.at - b.at || a.id - b.id);
    for (let i = 1; i < ordered.length; i++) {
      const [prev, row] = [ordered[i - 1]!, ordered[i]!];
      if (row.from !== null && row.from !== prev.to) {
        report.transitions.chainBreaks++;
        add({ kind: "chainBreak", stream: "transition", cluster, node, detail: `${type}: row ${row.id} from ${row.from} follows row ${prev.id} to ${prev.to}` });
      }
    }
  }

  // Node changes, per node, field and item.
  const fields = options.fields;
  const changeValue = (field: string, before: unknown, after: unknown) => canonical(field === "DELETED" ? before : after);
  const truthChanges = groupBy(
    facts.filter((f): f is Extract<GroundTruthFact, { kind: "change" }> => f.kind === "change" && (!fields || fields.includes(f.field))),
    (f) => `${nodeKey(f)}\u0000${f.field}\u0000${f.item}`,
  );
  const rowChanges = groupBy(
    recorded.changes.filter((r) => !fields || fields.includes(r.field)),
    (r) => `${nodeKey(r)}\u0000${r.field}\u0000${r.item}`,
  );
  for (const key of new Set([...truthChanges.keys(), ...rowChanges.keys()])) {
    const [cluster, node, field, item] = split(key);
    const label = `${field}${item ? ` ${item}` : ""}`;
    matchStream(
      (truthChanges.get(key) ?? []).map((f) => ({
        from: canonical(f.before),
        to: canonical(f.after),
        value: changeValue(f.field, f.before, f.after),
        at: f.at,
        detail: `${label} -> ${changeValue(f.field, f.before, f.after)}`,
      })),
      (rowChanges.get(key) ?? []).map((r) => ({
        id: r.id,
        value: changeValue(r.field, r.before, r.after),
        at: r.at,
        reconciled: r.reconciled,
        detail: `${label} -> ${changeValue(r.field, r.before, r.after)}`,
      })),
      options.toleranceMs,
      false,
      report.changes,
      (kind, detail) => add({ kind, stream: "change", cluster, node, detail }),
      options.gaps,
    );
  }

  // Maintenance: each cordon and uncordon once.
  const truthCordons = groupBy(
    facts.filter((f): f is Extract<GroundTruthFact, { kind: "change" }> => f.kind === "change" && f.field === "SCHEDULABILITY"),
    nodeKey,
  );
  const rowCordons = groupBy(
    recorded.maintenance.filter((m) => m.kind === "CORDONED" || m.kind === "UNCORDONED"),
    nodeKey,
  );
  for (const key of new Set([...truthCordons.keys(), ...rowCordons.keys()])) {
    const [cluster, node] = split(key);
    matchStream(
      (truthCordons.get(key) ?? []).map((f) => {
        const kind = (f.after as { unschedulable?: boolean } | null)?.unschedulable ? "CORDONED" : "UNCORDONED";
        return { from: canonical(f.before), to: canonical(f.after), value: kind, at: f.at, detail: kind };
      }),
      (rowCordons.get(key) ?? []).map((m) => ({ id: m.id, value: m.kind, at: m.at, reconciled: false, detail: m.kind })),
      options.toleranceMs,
      false,
      report.maintenance,
      (kind, detail) => add({ kind, stream: "maintenance", cluster, node, detail }),
      options.gaps,
    );
  }

  // Drains: every eviction once; a drain that says it succeeded left the node as asked.
  const evictions = facts.filter((f): f is Extract<GroundTruthFact, { kind: "eviction" }> => f.kind === "eviction");
  for (const [, same] of groupBy(evictions, (e) => `${e.cluster}\u0000${e.podUid || e.pod}`)) {
    const effective = same.filter((e) => !e.terminating);
    const repeats = same.length - effective.length;
    report.drains.evictions += effective.length;
    report.drains.repeatedOfTerminating += repeats;
    if (repeats > 0)
      add({
        kind: "evictionRepeated",
        stream: "drain",
        cluster: same[0]!.cluster,
        node: same[0]!.node,
        detail: `pod ${same[0]!.pod} asked to leave ${repeats} more time(s) while already terminating`,
      });
    if (effective.length < 2) continue;
    report.drains.evictedTwice += effective.length - 1;
    add({ kind: "evictedTwice", stream: "drain", cluster: same[0]!.cluster, node: same[0]!.node, detail: `pod ${same[0]!.pod} evicted ${effective.length} times` });
  }
  for (const drain of recorded.drains) {
    if (drain.dryRun) continue;
    report.drains.checked++;
    if (drain.status !== "SUCCEEDED") continue;
    const final = options.finalNodes?.get(drain.id);
    if (!final) continue;
    if (!final.unschedulable || final.evictablePods.length > 0) {
      report.drains.unfinished++;
      add({
        kind: "drainUnfinished",
        stream: "drain",
        cluster: drain.cluster,
        node: drain.node,
        detail: `drain ${drain.id} SUCCEEDED but the node is ${final.unschedulable ? "cordoned" : "schedulable"} with ${final.evictablePods.length} pods to evict (${final.evictablePods.slice(0, 5).join(", ")})`,
      });
    }
  }

  const all = [report.transitions, report.changes, report.maintenance];
  report.failed = all.some((t) => t.lost + t.duplicated + t.phantom > 0) || report.drains.evictedTwice > 0 || report.drains.unfinished > 0;
  return report;
}

/** Reads a ground-truth file's text (JSON lines; a torn last line from a kill is skipped). */
export function parseGroundTruth(text: string): GroundTruthFact[] {
  const facts: GroundTruthFact[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      facts.push(JSON.parse(line) as GroundTruthFact);
    } catch {
      // Only the last line can be torn; anything else is kept out of the comparison either way.
    }
  }
  return facts;
}
