/**
 * PostgreSQL cannot hold U+0000 in `text` (22021 invalid byte sequence) nor in `jsonb`
 * (22P05), on PGlite as on a server. Text from the cluster (an annotation, a condition's
 * message, anything kubectl can write) may hold one, so before it is stored every NUL becomes
 * U+2400 SYMBOL FOR NULL ("␀"): visible, and plainly not what was there.
 */
export const NUL_STAND_IN = "\u2400";

/** NUL or any surrogate: the one check a string from the cluster needs before it is stored as it is. */
const NEEDS_CARE = /[\u0000\uD800-\uDFFF]/;
/** A UTF-16 surrogate without its other half: no UTF-8 can hold it, and PostgreSQL's JSON refuses its escape. */
const LONE_SURROGATES = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * `text` with every U+0000 replaced by {@link NUL_STAND_IN}, and every lone surrogate (JSON.parse
 * accepts `"\ud800"`) by U+FFFD, as encoding it to UTF-8 for a bind parameter always did; rows
 * now travel as JSON, where PostgreSQL would refuse it (22P02). One scan for the common case.
 */
export function storableText(text: string): string {
  if (!NEEDS_CARE.test(text)) return text;
  return text.replace(LONE_SURROGATES, "\uFFFD").replaceAll("\u0000", NUL_STAND_IN);
}

/**
 * `value` with every string in it (object keys included) made storable; the value itself when
 * it holds no NUL, so the common case copies nothing. Dates and other class instances are kept as they are.
 */
export function storable<T>(value: T): T {
  if (typeof value === "string") return storableText(value) as T;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, i) => {
      const safe = storable(item);
      if (safe !== item) (copy ??= [...value])[i] = safe;
    });
    return (copy ?? value) as T;
  }
  if (typeof value !== "object" || value === null || Object.getPrototypeOf(value) !== Object.prototype) return value;
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const safeKey = storableText(key);
    const safe = storable(item);
    if (safe !== item || safeKey !== key) {
      copy ??= { ...(value as Record<string, unknown>) };
      if (safeKey !== key) delete copy[key];
      copy[safeKey] = safe;
    }
  }
  return (copy ?? value) as T;
}
