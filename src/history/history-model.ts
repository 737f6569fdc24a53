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
