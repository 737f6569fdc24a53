/**
 * Shares equal values between cached objects. 150,000 pods repeat a few hundred namespaces,
 * node names, label sets and request shapes; JSON.parse gives each its own copy. Sharing
 * them is most of the cache's memory. Tables are bounded: past `limit` entries one starts
 * afresh (only sharing is lost, never correctness).
 */
export class Interner {
  private strings = new Map<string, string>();
  private maps = new Map<string, Readonly<Record<string, unknown>>>();

  constructor(private readonly limit = 200_000) {}

  string<S extends string | undefined>(value: S): S {
    if (value === undefined) return value;
    const known = this.strings.get(value);
    if (known !== undefined) return known as S;
    if (this.strings.size >= this.limit) this.strings = new Map();
    this.strings.set(value, value);
    return value;
  }

  /** A frozen map equal to `map`, shared with every other equal one. */
  map<V>(map: Readonly<Record<string, V>>): Readonly<Record<string, V>> {
    const keys = Object.keys(map);
    if (keys.length === 0) return EMPTY as Readonly<Record<string, V>>;
    const signature = JSON.stringify(map);
    const known = this.maps.get(signature);
    if (known !== undefined) return known as Readonly<Record<string, V>>;
    if (this.maps.size >= this.limit) this.maps = new Map();
    const shared: Record<string, V> = {};
    for (const key of keys) shared[this.string(key)] = (typeof map[key] === "string" ? this.string(map[key] as string) : map[key]) as V;
    Object.freeze(shared);
    this.maps.set(signature, shared);
    return shared;
  }
}

const EMPTY = Object.freeze({});
