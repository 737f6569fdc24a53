/**
 * events.k8s.io/v1 Event: the same stored Events as core v1, served in the
 * newer shape, as the apiserver converts between the two (regarding for
 * involvedObject, note for message, reportingController for
 * reportingComponent, the old counters and source under deprecated*).
 */
import type { KObject } from "../store.js";

type Obj = Record<string, any>;

/** A stored core v1 Event as events.k8s.io/v1 shows it. */
export function toEventsV1(core: Obj): Obj {
  const out: Obj = { kind: "Event", apiVersion: "events.k8s.io/v1", metadata: core.metadata, eventTime: core.eventTime ?? null };
  if (core.series) out.series = core.series;
  if (core.reportingComponent) out.reportingController = core.reportingComponent;
  if (core.reportingInstance) out.reportingInstance = core.reportingInstance;
  if (core.action) out.action = core.action;
  if (core.reason) out.reason = core.reason;
  out.regarding = core.involvedObject ?? {};
  if (core.related) out.related = core.related;
  if (core.message) out.note = core.message;
  if (core.type) out.type = core.type;
  out.deprecatedSource = core.source ?? {};
  out.deprecatedFirstTimestamp = core.firstTimestamp ?? null;
  out.deprecatedLastTimestamp = core.lastTimestamp ?? null;
  if (core.count) out.deprecatedCount = core.count;
  return out;
}

/** An events.k8s.io/v1 Event as the core v1 Event it is stored as. */
export function fromEventsV1(v1: Obj): KObject {
  const core: Obj = { kind: "Event", apiVersion: "v1", metadata: v1.metadata ?? {} };
  core.involvedObject = v1.regarding ?? {};
  if (v1.reason !== undefined) core.reason = v1.reason;
  if (v1.note !== undefined) core.message = v1.note;
  core.source = v1.deprecatedSource ?? {};
  if (v1.deprecatedFirstTimestamp) core.firstTimestamp = v1.deprecatedFirstTimestamp;
  if (v1.deprecatedLastTimestamp) core.lastTimestamp = v1.deprecatedLastTimestamp;
  if (v1.deprecatedCount !== undefined) core.count = v1.deprecatedCount;
  if (v1.type !== undefined) core.type = v1.type;
  core.eventTime = v1.eventTime ?? null;
  if (v1.series) core.series = v1.series;
  if (v1.action !== undefined) core.action = v1.action;
  if (v1.related) core.related = v1.related;
  core.reportingComponent = v1.reportingController ?? "";
  core.reportingInstance = v1.reportingInstance ?? "";
  return core as KObject;
}

/** events.k8s.io field selectors in the stored (core) names. */
export function storedFieldSelector(selector: string): string {
  return selector.replace(/(^|,)\s*regarding\./g, "$1involvedObject.").replace(/(^|,)\s*reportingController(?=[=!])/g, "$1reportingComponent").replace(/(^|,)\s*deprecatedSource\./g, "$1source.");
}
