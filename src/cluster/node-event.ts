/**
 * An Event about a node as the caches keep it, from either shape the apiserver serves: core/v1
 * (count, firstTimestamp, lastTimestamp, source) and events.k8s.io/v1 as read through core/v1
 * (series.count, series.lastObservedTime, eventTime, reportingComponent), read as kubectl's
 * `get events` reads them. Text from the cluster is bounded and made storable here, once:
 * PostgreSQL text cannot hold NUL, and an Event's message is limited only by the object size.
 */

type Json = Record<string, unknown>;

/** What the API serves of an event; `id` is the Event's uid, the same live and recorded. */
export interface CachedNodeEvent {
  cluster: string;
  /** metadata.uid: one Event object, however often its count changes. */
  id: string;
  node: string;
  /** namespace/name of the Event object. */
  key: string;
  type: string;
  reason: string;
  message: string | undefined;
  count: number;
  firstSeen: string | undefined;
  lastSeen: string | undefined;
  source: string | undefined;
}

/** Bounds in characters. The kubelet writes messages of at most 1 kB (events.k8s.io: note ≤ 1 kB). */
export const EVENT_TEXT_LIMITS = { message: 4096, reason: 128, type: 64, source: 256, name: 512 } as const;

function obj(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

/**
 * A string made safe to keep and store: lone surrogates replaced, NUL and other C0 controls
 * except tab and newline removed, cut to `limit` characters (an ellipsis says it was cut).
 */
export function boundedText(value: unknown, limit: number): string | undefined {
  if (typeof value !== "string") return undefined;
  // Cut before cleaning so a megabyte of text costs no more than a few kilobytes of work.
  let text = (value.length > limit * 4 ? value.slice(0, limit * 4) : value).replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "");
  if (text.length > limit) text = `${text.slice(0, limit - 1)}…`;
  // Node 20 has String.prototype.toWellFormed (ES2024); TypeScript's ES2023 lib does not know it.
  return (text as string & { toWellFormed(): string }).toWellFormed();
}

function time(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" && !Number.isNaN(Date.parse(value)) ? value : undefined;
}

/**
 * Strips a core/v1 Event to a {@link CachedNodeEvent}; undefined when it is not about a node
 * (the watch asks only for those, a list may not be filtered by an old server) or has no uid.
 */
export function stripNodeEvent(cluster: string, raw: unknown): CachedNodeEvent | undefined {
  const event = obj(raw);
  const metadata = obj(event.metadata);
  const involved = obj(event.involvedObject ?? event.regarding);
  const uid = boundedText(metadata.uid, EVENT_TEXT_LIMITS.name);
  const node = boundedText(involved.name, EVENT_TEXT_LIMITS.name);
  if (involved.kind !== "Node" || !uid || !node) return undefined;
  const series = obj(event.series);
  const seriesCount = typeof series.count === "number" ? series.count : 0;
  const plainCount = typeof event.count === "number" ? event.count : 0;
  const count = Math.min(2 ** 31 - 1, Math.max(1, Math.trunc(seriesCount || plainCount)));
  const eventTime = time(event.eventTime);
  const firstSeen = time(event.firstTimestamp) ?? eventTime ?? time(metadata.creationTimestamp);
  // kubectl's LAST SEEN: the series' last observation, else lastTimestamp, else eventTime.
  const lastSeen = time(series.lastObservedTime) ?? time(event.lastTimestamp) ?? eventTime ?? firstSeen;
  const source = boundedText(obj(event.source).component, EVENT_TEXT_LIMITS.source) || boundedText(event.reportingComponent, EVENT_TEXT_LIMITS.source) || undefined;
  return Object.freeze({
    cluster,
    id: uid,
    node,
    key: `${boundedText(metadata.namespace, EVENT_TEXT_LIMITS.name) ?? ""}/${boundedText(metadata.name, EVENT_TEXT_LIMITS.name) ?? ""}`,
    type: boundedText(event.type, EVENT_TEXT_LIMITS.type) || "Normal",
    reason: boundedText(event.reason, EVENT_TEXT_LIMITS.reason) ?? "",
    message: boundedText(event.message ?? event.note, EVENT_TEXT_LIMITS.message),
    count,
    firstSeen,
    lastSeen,
    source,
  });
}

/** Newest first: by last seen (unknown last), then by id so equal times keep one order. */
export function compareNewestFirst(a: CachedNodeEvent, b: CachedNodeEvent): number {
  const ta = a.lastSeen ? Date.parse(a.lastSeen) : -Infinity;
  const tb = b.lastSeen ? Date.parse(b.lastSeen) : -Infinity;
  if (ta !== tb) return tb - ta;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
