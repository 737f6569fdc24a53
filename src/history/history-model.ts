/**
 * What history is made of, shared by the side that writes it into the cluster (maintenance:
 * cordon, drain) and the side that reads it back (the recorder's diff, the queries): the kinds
 * of maintenance event and the annotation that says who changed a node's schedulability.
 */

/** The kinds of maintenance event: the API's MaintenanceEventKind, stored under these very names. */
export type { MaintenanceEventKind } from "../graphql/generated/resolvers-types.js";

/** Who asked for a change and why: written on the node so kubectl users (and our recorder) see it. */
export interface MaintenanceNote {
  actor: string;
  reason: string | null;
  operationId?: string;
}

/**
 * The annotation node-inventory's own cordon and uncordon write in the same patch, so the
 * recorder can name who asked and why. Anything else changing schedulability is "external".
 */
export const MAINTENANCE_ANNOTATION = "node-inventory.io/maintenance";
export const EXTERNAL_ACTOR = "external";

/** The annotations a cordon (unschedulable) or uncordon writes with its patch. */
export function maintenanceAnnotations(note: MaintenanceNote, unschedulable: boolean): Record<string, string> {
  return {
    [MAINTENANCE_ANNOTATION]: JSON.stringify({ actor: note.actor, reason: note.reason ?? undefined, unschedulable, operationId: note.operationId }),
  };
}

/** Who changed schedulability: our own annotation when it describes this very state, else external. */
export function maintenanceActor(annotations: Readonly<Record<string, string>>, unschedulable: boolean): { actor: string; reason: string | null } {
  const raw = annotations[MAINTENANCE_ANNOTATION];
  if (raw) {
    try {
      const note = JSON.parse(raw) as { actor?: string; reason?: string; unschedulable?: boolean };
      if (note.unschedulable === unschedulable && typeof note.actor === "string") return { actor: note.actor, reason: note.reason ?? null };
    } catch {
      // Someone else's malformed annotation: ignore it.
    }
  }
  return { actor: EXTERNAL_ACTOR, reason: null };
}

/**
 * The annotation labelNode and taintNode write in the same patch as the change: what they set
 * (label key -> value, `key:Effect` -> the taint as history shows it; null: removed), by whom
 * and why, under an id of its own. The recorder credits a change to that actor only when the
 * note is new since its last look and says exactly what it sees; anything else is external.
 */
export const CHANGE_NOTE_ANNOTATION = "node-inventory.io/last-change";

export interface ChangeNote {
  id: string;
  actor: string;
  reason: string | null;
  labels?: Record<string, string | null>;
  taints?: Record<string, string | null>;
}

/** The annotations of a labelNode or taintNode patch. */
export function changeNoteAnnotations(note: ChangeNote): Record<string, string> {
  return { [CHANGE_NOTE_ANNOTATION]: JSON.stringify(note) };
}

/** The change note on a node, if it carries a well-formed one. */
export function readChangeNote(annotations: Readonly<Record<string, string>>): ChangeNote | undefined {
  const raw = annotations[CHANGE_NOTE_ANNOTATION];
  if (!raw) return undefined;
  try {
    const note = JSON.parse(raw) as Partial<ChangeNote>;
    if (typeof note.id !== "string" || typeof note.actor !== "string") return undefined;
    const map = (value: unknown) => (value && typeof value === "object" ? (value as Record<string, string | null>) : undefined);
    return { id: note.id, actor: note.actor, reason: typeof note.reason === "string" ? note.reason : null, labels: map(note.labels), taints: map(note.taints) };
  } catch {
    return undefined;
  }
}

/** A taint as history writes it: `value:Effect`, or `Effect` without a value. */
export function taintText(taint: { value?: string | null; effect: string }): string {
  return taint.value ? `${taint.value}:${taint.effect}` : taint.effect;
}

/** A taint's item in history: `key:Effect` (a taint key holds no colon). */
export function taintItem(taint: { key: string; effect: string }): string {
  return `${taint.key}:${taint.effect}`;
}
