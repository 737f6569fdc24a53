/**
 * The object store: per-resource maps of objects with their JSON serialised
 * once at write time, one cluster-wide increasing resourceVersion, a bounded
 * per-resource event history for watch resume, and secondary indexes.
 *
 * Stored objects are treated as immutable: every write replaces the object, so
 * readers may hold on to what they got and share sub-structures safely.
 */

/** Loose shape of any Kubernetes object the simulator stores. */
export interface KObject {
  apiVersion?: string;
  kind?: string;
  metadata: KMeta;
  [field: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface KMeta {
  name: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  [field: string]: unknown;
}

/**
 * One stored version of an object: the object for selectors and controllers,
 * and its JSON as bytes. Bytes live outside the V8 heap, so 150,000 pods do not
 * make every garbage collection walk and move half a gigabyte of strings, and
 * lists write them to sockets without re-encoding.
 */
export class Entry {
  constructor(
    readonly key: string,
    readonly obj: KObject,
    readonly bytes: Buffer,
    readonly rv: number,
  ) {}

  /** The JSON text (decoded on demand). */
  get json(): string {
    return this.bytes.toString("utf8");
  }
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

/** A change, as watchers and controllers see it. */
export interface StoreEvent {
  readonly type: WatchEventType;
  readonly resource: string;
  readonly rv: number;
  readonly entry: Entry;
  /** The version before a MODIFIED or DELETED. */
  readonly prev?: Entry;
}

type Indexer = (obj: KObject) => string[];

/** Key of an object inside its resource: "ns/name" or "name". */
export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

class ResourceTable {
  readonly byKey = new Map<string, Entry>();
  private sorted: string[] = [];
  private sortedDirty = false;
  readonly indexes = new Map<string, { fn: Indexer; map: Map<string, Set<string>> }>();
  readonly history: StoreEvent[] = [];
  historyStart = 0;
  /** Watches starting at or after this resourceVersion can be served from history. */
  compactedRv: number;

  constructor(
    readonly name: string,
    readonly historySize: number,
    startRv: number,
  ) {
    this.compactedRv = startRv;
  }

  sortedKeys(): string[] {
    if (this.sortedDirty) {
      this.sorted.sort();
      this.sortedDirty = false;
    }
    return this.sorted;
  }

  insertKey(key: string): void {
    const last = this.sorted[this.sorted.length - 1];
    if (!this.sortedDirty && last !== undefined && key < last) this.sortedDirty = true;
    this.sorted.push(key);
  }

  removeKey(key: string): void {
    const keys = this.sortedKeys();
    const at = lowerBound(keys, key);
    if (keys[at] === key) keys.splice(at, 1);
  }

  index(obj: KObject, key: string, add: boolean): void {
    for (const { fn, map } of this.indexes.values()) {
      for (const value of fn(obj)) {
        let set = map.get(value);
        if (add) {
          if (!set) map.set(value, (set = new Set()));
          set.add(key);
        } else if (set) {
          set.delete(key);
          if (set.size === 0) map.delete(value);
        }
      }
    }
  }

  record(event: StoreEvent): void {
    if (this.historySize <= 0) {
      this.compactedRv = event.rv;
      return;
    }
    this.history.push(event);
    if (this.history.length - this.historyStart > this.historySize) {
      this.compactedRv = this.history[this.historyStart]!.rv;
      this.historyStart++;
      // Compact the array now and then rather than shifting on every write.
      if (this.historyStart > this.historySize) {
        this.history.splice(0, this.historyStart);
        this.historyStart = 0;
      }
    }
  }

  /** Events with rv greater than `rv`, oldest first. */
  eventsAfter(rv: number): StoreEvent[] {
    const h = this.history;
    let lo = this.historyStart;
    let hi = h.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (h[mid]!.rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    return h.slice(lo);
  }
}

export type StoreListener = (event: StoreEvent) => void;

/** The simulator's whole state. */
export class ObjectStore {
  private rv: number;
  private readonly tables = new Map<string, ResourceTable>();
  private readonly listeners = new Set<StoreListener>();

  constructor(
    private readonly historySize = 10_000,
    startRv = 1,
  ) {
    this.rv = startRv;
  }

  /** The latest resourceVersion handed out. */
  get resourceVersion(): number {
    return this.rv;
  }

  table(resource: string): ResourceTable {
    let t = this.tables.get(resource);
    if (!t) this.tables.set(resource, (t = new ResourceTable(resource, this.historySize, this.rv)));
    return t;
  }

  /** Register a secondary index, e.g. pods by spec.nodeName. */
  addIndex(resource: string, name: string, fn: Indexer): void {
    const t = this.table(resource);
    const map = new Map<string, Set<string>>();
    t.indexes.set(name, { fn, map });
    for (const [key, e] of t.byKey) {
      for (const v of fn(e.obj)) {
        let set = map.get(v);
        if (!set) map.set(v, (set = new Set()));
        set.add(key);
      }
    }
  }

  /** Keys whose index value matches. */
  byIndex(resource: string, name: string, value: string): ReadonlySet<string> {
    return this.table(resource).indexes.get(name)?.map.get(value) ?? new Set();
  }

  /** Entries whose index value matches (read them, do not write the resource while iterating). */
  *byIndexEntries(resource: string, name: string, value: string): Generator<Entry> {
    for (const key of this.byIndex(resource, name, value)) {
      const e = this.get(resource, key);
      if (e) yield e;
    }
  }

  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get(resource: string, key: string): Entry | undefined {
    return this.tables.get(resource)?.byKey.get(key);
  }

  /**
   * Puts every resource's keys in order now, as an apiserver's watch cache always holds them,
   * so the first list or watch-list of a generated cluster does not pay for it (150,000 pod
   * keys: ~0.2 s, during which nothing else was served).
   */
  sortKeys(): void {
    for (const table of this.tables.values()) table.sortedKeys();
  }

  size(resource: string): number {
    return this.tables.get(resource)?.byKey.size ?? 0;
  }

  /** Every entry of a resource in key order (as etcd lists them). */
  *list(resource: string, namespace?: string, afterKey?: string): Generator<Entry> {
    const t = this.tables.get(resource);
    if (!t) return;
    const keys = t.sortedKeys();
    let start = 0;
    const from = afterKey ?? (namespace ? `${namespace}/` : undefined);
    if (from !== undefined) {
      let lo = 0;
      let hi = keys.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (keys[mid]! <= from && !(afterKey === undefined && keys[mid]! === from)) lo = mid + 1;
        else hi = mid;
      }
      start = lo;
    }
    const prefix = namespace ? `${namespace}/` : undefined;
    for (let i = start; i < keys.length; i++) {
      const key = keys[i]!;
      if (prefix && !key.startsWith(prefix)) break;
      const e = t.byKey.get(key);
      if (e) yield e;
    }
  }

  /**
   * One page of a LIST in key order: up to `limit` entries after `afterKey` (within
   * `namespace`), and how many more follow. Binary searches on the sorted keys, so a page
   * costs O(log n + limit) however deep into the list it is, not a scan of the rest.
   */
  page(resource: string, namespace: string | undefined, afterKey: string | undefined, limit: number): { entries: Entry[]; remaining: number } {
    const t = this.tables.get(resource);
    if (!t) return { entries: [], remaining: 0 };
    const keys = t.sortedKeys();
    const prefix = namespace ? `${namespace}/` : undefined;
    // "ns0" is the first key past every "ns/…" key ("0" follows "/").
    const end = prefix ? lowerBound(keys, `${namespace}0`) : keys.length;
    let start = prefix ? lowerBound(keys, prefix) : 0;
    if (afterKey !== undefined) start = Math.max(start, upperBound(keys, afterKey));
    const stop = Math.min(end, start + limit);
    const entries: Entry[] = [];
    for (let i = start; i < stop; i++) entries.push(t.byKey.get(keys[i]!)!);
    return { entries, remaining: Math.max(0, end - stop) };
  }

  /** Every entry of a resource, unordered and fast. */
  values(resource: string): IterableIterator<Entry> {
    return (this.tables.get(resource)?.byKey ?? new Map<string, Entry>()).values();
  }

  /**
   * Write an object: stamps the next resourceVersion, serialises once, indexes,
   * records history and notifies listeners. Returns the new entry.
   */
  put(resource: string, obj: KObject): Entry {
    const t = this.table(resource);
    const key = objectKey(obj.metadata.namespace, obj.metadata.name);
    const prev = t.byKey.get(key);
    const rv = ++this.rv;
    obj.metadata.resourceVersion = String(rv);
    const entry = new Entry(key, obj, Buffer.from(JSON.stringify(obj), "utf8"), rv);
    if (prev) t.index(prev.obj, key, false);
    else t.insertKey(key);
    t.byKey.set(key, entry);
    t.index(obj, key, true);
    this.emit(t, prev ? { type: "MODIFIED", resource, rv, entry, prev } : { type: "ADDED", resource, rv, entry });
    return entry;
  }

  /** Remove an object; the DELETED event carries a fresh resourceVersion. */
  remove(resource: string, key: string): Entry | undefined {
    const t = this.tables.get(resource);
    const prev = t?.byKey.get(key);
    if (!t || !prev) return undefined;
    const rv = ++this.rv;
    const obj: KObject = { ...prev.obj, metadata: { ...prev.obj.metadata, resourceVersion: String(rv) } };
    const entry = new Entry(key, obj, Buffer.from(JSON.stringify(obj), "utf8"), rv);
    t.byKey.delete(key);
    t.removeKey(key);
    t.index(prev.obj, key, false);
    this.emit(t, { type: "DELETED", resource, rv, entry, prev });
    return entry;
  }

  private emit(t: ResourceTable, event: StoreEvent): void {
    t.record(event);
    for (const l of this.listeners) l(event);
  }

  /** Oldest resourceVersion a watch on `resource` may resume from. */
  compactedRv(resource: string): number {
    return this.table(resource).compactedRv;
  }

  /** History events of `resource` after `rv`. */
  eventsAfter(resource: string, rv: number): StoreEvent[] {
    return this.table(resource).eventsAfter(rv);
  }

  /**
   * Stamp every object again with resourceVersions counted from 1, as after an etcd restored
   * or replaced under a running apiserver: clients' versions are now ahead of the server's.
   */
  renumber(): void {
    this.rv = 0;
    for (const t of this.tables.values()) {
      for (const [key, prev] of t.byKey) {
        const rv = ++this.rv;
        const obj: KObject = { ...prev.obj, metadata: { ...prev.obj.metadata, resourceVersion: String(rv) } };
        t.byKey.set(key, new Entry(key, obj, Buffer.from(JSON.stringify(obj), "utf8"), rv));
      }
    }
    this.compactAll();
  }

  /** Forget history so far: watches must start from now on (used after bulk generation). */
  compactAll(): void {
    for (const t of this.tables.values()) {
      t.history.length = 0;
      t.historyStart = 0;
      t.compactedRv = this.rv;
    }
  }
}

/** The first index whose key is >= `key`. */
function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first index whose key is > `key`. */
function upperBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
