/**
 * Reads at a resourceVersion other than now: the state of a resource as it
 * was at an older version (from the store's history, as etcd serves an exact
 * read until compaction), and a wait for a version not yet reached (as the
 * watch cache blocks a NotOlderThan read until it is fresh enough).
 */
import type { SimCluster } from "../cluster.js";
import type { Entry, ObjectStore } from "../store.js";

/** The entries of `resource` (in `namespace`) as they were at `rv`, in key order; `rv` must not be compacted. */
export function stateAt(store: ObjectStore, resource: string, rv: number, namespace?: string): Entry[] {
  const state = new Map<string, Entry>();
  for (const e of store.list(resource, namespace)) state.set(e.key, e);
  const later = store.eventsAfter(resource, rv);
  const prefix = namespace ? `${namespace}/` : "";
  // Undo what came after, newest first.
  for (let i = later.length - 1; i >= 0; i--) {
    const e = later[i]!;
    if (prefix && !e.entry.key.startsWith(prefix)) continue;
    if (e.type === "ADDED") state.delete(e.entry.key);
    else state.set(e.entry.key, e.prev!);
  }
  return [...state.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Resolves true once the store reaches `rv`, false after `timeoutMs` (wall time) without it. */
export function waitForResourceVersion(cluster: SimCluster, rv: number, timeoutMs: number): Promise<boolean> {
  const store = cluster.store;
  if (store.resourceVersion >= rv) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (reached: boolean) => {
      clearTimeout(timer);
      unsubscribe();
      resolve(reached);
    };
    const unsubscribe = store.subscribe(() => {
      if (store.resourceVersion >= rv) done(true);
    });
    const timer = setTimeout(() => done(false), timeoutMs);
  });
}
