/**
 * What labelNode and taintNode would change, planned as `kubectl label` and `kubectl taint`
 * plan it (pkg/cmd/label, pkg/cmd/taint), with their messages: pure functions of the node's
 * current labels or taints and the request, tested as tables beside the real kubectl.
 */

import type { Taint } from "../cluster/model.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import { taintItem, taintText } from "../history/history-model.js";
import { labelKeyErrors, labelValueErrors } from "../k8s/label-validation.js";

/** The effects a taint may have (core/v1 TaintEffect). */
export const TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"] as const;

export interface LabelRequest {
  set?: readonly { key: string; value: string }[] | null;
  remove?: readonly string[] | null;
  overwrite?: boolean | null;
}

export interface TaintRequest {
  add?: readonly { key: string; value?: string | null; effect: string }[] | null;
  remove?: readonly { key: string; effect?: string | null }[] | null;
  overwrite?: boolean | null;
}

/** A plan: the merge-patch of labels (null removes), or the new taint list; `changes` as history notes them (null: removed). Empty changes: nothing to write. */
export interface LabelPlan {
  labels: Record<string, string | null>;
  changes: Record<string, string | null>;
}

export interface TaintPlan {
  taints: Taint[];
  changes: Record<string, string | null>;
}

const bad = (message: string) => new AppError(ErrorCode.BAD_USER_INPUT, message);

/**
 * kubectl label's checks and plan: label values as kubectl checks them, keys as the apiserver
 * does (kubectl leaves keys to it: its message is the apiserver's), no key both set and
 * removed, and no existing label given another value without overwrite. Removing a label
 * the node lacks is no error (kubectl only says it was not found).
 * @throws AppError BAD_USER_INPUT with kubectl's (or the apiserver's) message.
 */
export function planLabels(node: string, current: Readonly<Record<string, string>>, request: LabelRequest): LabelPlan {
  const set = request.set ?? [];
  const remove = request.remove ?? [];
  if (set.length === 0 && remove.length === 0) throw bad("at least one label update is required");
  const wanted = new Map<string, string>();
  for (const { key, value } of set) {
    const errors = labelValueErrors(value);
    if (errors.length) throw bad(`invalid label value: ${JSON.stringify(`${key}=${value}`)}: ${errors.join(";")}`);
    // As kubectl's map of the arguments: the last value given for a key wins.
    wanted.set(key, value);
  }
  for (const key of remove) if (wanted.has(key)) throw bad("can not both modify and remove a label in the same command");
  const invalid = [...wanted.keys(), ...remove].flatMap((key) => labelKeyErrors(key).map((message) => `metadata.labels: Invalid value: ${JSON.stringify(key)}: ${message}`));
  if (invalid.length) throw bad(`Node ${JSON.stringify(node)} is invalid: ${invalid.join(", ")}`);
  if (!request.overwrite) {
    for (const [key, value] of wanted) {
      const existing = current[key];
      if (existing !== undefined && existing !== value) throw bad(`'${key}' already has a value (${existing}), and --overwrite is false`);
    }
  }
  const labels: Record<string, string | null> = {};
  for (const [key, value] of wanted) if (current[key] !== value) labels[key] = value;
  for (const key of remove) if (key in current) labels[key] = null;
  return { labels, changes: { ...labels } };
}

/** How kubectl writes a taint on its command line: `key=value:Effect`, or `key:Effect`. */
export function taintSpec(taint: { key: string; value?: string | null; effect: string }): string {
  return taint.value ? `${taint.key}=${taint.value}:${taint.effect}` : `${taint.key}:${taint.effect}`;
}

/**
 * kubectl taint's checks (parseTaint: the effect, then the value, then the key) and plan: a
 * taint is its key and effect; adding one the node has (any value) needs overwrite; removing
 * by key takes every effect of it, by key and effect that one; removing one the node lacks is
 * NOT_FOUND, as kubectl refuses it.
 * @throws AppError BAD_USER_INPUT (NOT_FOUND for a missing taint) with kubectl's message.
 */
export function planTaints(node: string, current: readonly Taint[], request: TaintRequest): TaintPlan {
  const add = request.add ?? [];
  const remove = request.remove ?? [];
  if (add.length === 0 && remove.length === 0) throw bad("at least one taint update is required");
  const adding: Taint[] = [];
  for (const t of add) {
    const spec = taintSpec(t);
    if (!(TAINT_EFFECTS as readonly string[]).includes(t.effect)) throw bad(`invalid taint effect: ${t.effect}, unsupported taint effect`);
    const valueErrors = t.value ? labelValueErrors(t.value) : [];
    if (valueErrors.length) throw bad(`invalid taint spec: ${spec}, ${valueErrors.join("; ")}`);
    const keyErrors = labelKeyErrors(t.key);
    if (keyErrors.length) throw bad(`invalid taint spec: ${spec}, ${keyErrors.join("; ")}`);
    if (adding.some((a) => a.key === t.key && a.effect === t.effect)) throw bad(`duplicated taints with the same key and effect: ${spec}`);
    adding.push({ key: t.key, ...(t.value ? { value: t.value } : {}), effect: t.effect });
  }
  for (const r of remove) {
    if (r.effect != null && !(TAINT_EFFECTS as readonly string[]).includes(r.effect)) throw bad(`invalid taint effect: ${r.effect}, unsupported taint effect`);
    const keyErrors = labelKeyErrors(r.key);
    if (keyErrors.length) throw bad(`invalid taint spec: ${r.effect ? `${r.key}:${r.effect}` : r.key}-, ${keyErrors.join("; ")}`);
  }
  const both = adding.filter((a) => remove.some((r) => r.key === a.key && (r.effect == null || r.effect === a.effect)));
  if (both.length) throw bad(`can not both modify and remove the following taint(s) in the same command: ${both.map(taintSpec).join(", ")}`);
  if (!request.overwrite) {
    const existing = [...new Set(adding.filter((a) => current.some((c) => c.key === a.key && c.effect === a.effect)).map((a) => a.key))];
    if (existing.length) throw bad(`node ${node} already has ${existing.join(",")} taint(s) with same effect(s) and --overwrite is false`);
  }
  let taints = current.map((t) => ({ ...t }));
  for (const r of remove) {
    const left = taints.filter((t) => !(t.key === r.key && (r.effect == null || t.effect === r.effect)));
    if (left.length === taints.length) throw new AppError(ErrorCode.NOT_FOUND, `taint ${JSON.stringify(r.effect ? `${r.key}:${r.effect}` : r.key)} not found`);
    taints = left;
  }
  for (const a of adding) {
    const at = taints.findIndex((t) => t.key === a.key && t.effect === a.effect);
    if (at >= 0) taints[at] = a;
    else taints.push(a);
  }
  const before = new Map(current.map((t) => [taintItem(t), taintText(t)]));
  const after = new Map(taints.map((t) => [taintItem(t), taintText(t)]));
  const changes: Record<string, string | null> = {};
  for (const item of new Set([...before.keys(), ...after.keys()])) {
    const to = after.get(item) ?? null;
    if ((before.get(item) ?? null) !== to) changes[item] = to;
  }
  return { taints, changes };
}
