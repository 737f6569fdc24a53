import type { ClusterRegistry } from "../cluster/cluster-registry.js";
import type { ClusterStatus } from "../cluster/cluster-cache.js";

/**
 * A watch that ends on its timeout is opened again within milliseconds; only a cluster still
 * not live after this long is announced, so a wallboard does not blink at every renewal.
 */
export const STALE_SETTLE_MS = 1_000;

type Listener = (cluster: string) => void;

/** What a subscriber sees change: liveness, its start, sync and the last error. */
const fingerprint = (status: ClusterStatus) => `${status.disconnectedSince?.getTime() ?? ""}|${status.synced}|${status.lastError ?? ""}`;

/**
 * This replica's clusters' status as it changes: a cluster becoming live again is announced at
 * once, one that stops being live after {@link STALE_SETTLE_MS} if it still is not.
 */
export class ClusterStatusFeed {
  private readonly listeners = new Set<Listener>();
  private readonly announced = new Map<string, string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly detach: (() => void)[] = [];

  constructor(private readonly clusters: ClusterRegistry) {}

  start(): void {
    for (const cache of this.clusters.all()) {
      this.announced.set(cache.name, fingerprint(cache.status()));
      const onStatus = (status: ClusterStatus) => this.changed(cache.name, status);
      cache.on("status", onStatus);
      this.detach.push(() => cache.off("status", onStatus));
    }
  }

  stop(): void {
    for (const undo of this.detach.splice(0)) undo();
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(name: string, status: ClusterStatus): void {
    if (!status.disconnectedSince) {
      clearTimeout(this.timers.get(name));
      this.timers.delete(name);
      this.announce(name);
      return;
    }
    if (this.timers.has(name)) return;
    const timer = setTimeout(() => {
      this.timers.delete(name);
      this.announce(name);
    }, STALE_SETTLE_MS);
    timer.unref();
    this.timers.set(name, timer);
  }

  private announce(name: string): void {
    const status = this.clusters.get(name)?.status();
    if (!status) return;
    const now = fingerprint(status);
    if (now === this.announced.get(name)) return;
    this.announced.set(name, now);
    for (const listener of this.listeners) listener(name);
  }
}
