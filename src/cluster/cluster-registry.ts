import type { Logger } from "../log/logger.js";
import { ClusterCache, type ClusterCacheOptions } from "./cluster-cache.js";
import type { ClusterSource } from "./cluster-sources.js";
import { KubeClient } from "./kube-client.js";

export type ClusterTuning = Omit<ClusterCacheOptions, "name" | "client" | "logger">;

/** Every configured cluster's cache, by name, in configuration order. */
export class ClusterRegistry {
  private readonly caches = new Map<string, ClusterCache>();
  private readonly simulated = new Set<string>();

  constructor(sources: ClusterSource[], logger: Logger, tuning: ClusterTuning = {}) {
    for (const source of sources) {
      this.caches.set(source.name, new ClusterCache({ name: source.name, client: new KubeClient(source.kubeConfig), logger, ...tuning }));
      if (source.simulated) this.simulated.add(source.name);
    }
  }

  /** Starts every cache; none waits for another, so an unreachable cluster delays nothing. */
  start(): void {
    for (const cache of this.caches.values()) cache.start();
  }

  async stop(): Promise<void> {
    await Promise.all([...this.caches.values()].map((cache) => cache.stop()));
  }

  get(name: string): ClusterCache | undefined {
    return this.caches.get(name);
  }

  all(): ClusterCache[] {
    return [...this.caches.values()];
  }

  names(): string[] {
    return [...this.caches.keys()];
  }

  /** True for the embedded simulator, which must never be taken for a real cluster. */
  isSimulated(name: string): boolean {
    return this.simulated.has(name);
  }
}
