/**
 * The apiserver's event TTL (--event-ttl, one hour by default): etcd drops an Event an hour
 * after its last write, so an event whose count keeps going up lives on, and a quiet one goes.
 * Writes come in time order, so a Map re-inserted on every write is ordered by expiry and only
 * its head is ever looked at.
 */
import type { StoreEvent } from "../store.js";
import { R } from "../storage-names.js";
import type { ClusterContext } from "./context.js";

export const EVENT_TTL_MS = 60 * 60_000;

export class EventTtl {
  /** Event key → when it expires, in expiry order. */
  private readonly expiry = new Map<string, number>();

  constructor(private readonly ctx: ClusterContext) {}

  observe(e: StoreEvent): void {
    if (e.resource !== R.events) return;
    this.expiry.delete(e.entry.key);
    if (e.type !== "DELETED") this.expiry.set(e.entry.key, this.ctx.clock.now() + EVENT_TTL_MS);
  }

  /** Removes every event whose TTL has run out by `now`. */
  expire(now: number): void {
    for (const [key, at] of this.expiry) {
      if (at > now) break;
      this.expiry.delete(key);
      this.ctx.store.remove(R.events, key);
    }
  }
}
