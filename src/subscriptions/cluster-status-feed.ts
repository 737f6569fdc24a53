import type { ClusterRegistry } from "../cluster/cluster-registry.js";
import type { ClusterStatus } from "../cluster/cluster-cache.js";

type Listener = (cluster: string) => void;

/** What a subscriber sees change: liveness, its start, sync and the last error. */
const fingerprint = (status: ClusterStatus) => `${status.disconnectedSince?.getTime() ?? ""}|${status.synced}|${status.lastError ?? ""}`;

/**
 * This replica's clusters' status as it changes: each change of what a subscriber sees, once
 * (the caches settle a watch's renewal before calling a cluster not live).
 */
export class ClusterStatusFeed {
  private readonly listeners = new Set<Listener>();
  private readonly announced = new Map<string, string>();
  private readonly detach: (() => void)[] = [];

  constructor(private readonly clusters: ClusterRegistry) {}

  start(): void {
    for (const cache of this.clusters.all()) {
      this.announced.set(cache.name, fingerprint(cache.status()));
      const onStatus = () => this.announce(cache.name);
      cache.on("status", onStatus);
      this.detach.push(() => cache.off("status", onStatus));
    }
  }

  stop(): void {
    for (const undo of this.detach.splice(0)) undo();
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
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
