/**
 * Bounds on every selector and filter a caller hands in. The apiserver bounds each key (a name
 * of at most 63 characters with a DNS prefix of at most 253) and value (63) of a label
 * selector, and the request line itself; the service matches selectors against every cached
 * node on every query and every subscription event, so it also bounds how many requirements a
 * selector has, how many values one `in` list has, and the selector's bytes.
 */
export const SELECTOR_LIMITS = {
  /** Bytes of one label or field selector's text. */
  maxBytes: 8_192,
  /** Comma-separated requirements (label) or terms (field) of one selector. */
  maxRequirements: 64,
  /** Values of one `in` / `notin` list. */
  maxValues: 256,
} as const;

/** Names one `names` list of a filter may hold; node names are at most 253 characters. */
export const MAX_FILTER_NAMES = 5_000;
/** Entries of a filter's short lists (roles, kinds). */
export const MAX_FILTER_LIST = 64;

/** How much of a caller's text an error message quotes: enough to find it, never the whole of a huge input. */
export const QUOTED_TEXT_LENGTH = 320;

/** `text` cut to {@link QUOTED_TEXT_LENGTH} characters for an error message, saying how long it was. */
export function cut(text: string): string {
  return text.length <= QUOTED_TEXT_LENGTH ? text : `${text.slice(0, QUOTED_TEXT_LENGTH)}… (${text.length} characters)`;
}

/** `text` as an error message quotes it (JSON), cut as {@link cut} does. */
export function quoted(text: string): string {
  return text.length <= QUOTED_TEXT_LENGTH ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, QUOTED_TEXT_LENGTH))}… (${text.length} characters)`;
}

/** Why a selector's text is too large before it is read, or undefined when its size is within bounds. */
export function selectorTooLarge(text: string): string | undefined {
  // Each UTF-16 unit is at most 3 bytes: only long texts are measured.
  if (text.length * 3 <= SELECTOR_LIMITS.maxBytes) return undefined;
  const bytes = Buffer.byteLength(text, "utf8");
  return bytes > SELECTOR_LIMITS.maxBytes ? `the selector is ${bytes} bytes; at most ${SELECTOR_LIMITS.maxBytes} are allowed` : undefined;
}

/**
 * How many terms a filter's predicate checks for each node, counted from its text without
 * parsing it: each requirement of a selector (a comma separates them), each other field. This
 * is what the cost model charges per node a filtered field scans.
 */
export function filterTerms(filter: unknown): number {
  if (typeof filter !== "object" || filter === null) return 0;
  let terms = 0;
  for (const [field, value] of Object.entries(filter)) {
    if (value === null || value === undefined) continue;
    if (typeof value === "string") terms += field.endsWith("Selector") ? 1 + countCommas(value) : 1;
    else terms += 1;
  }
  return terms;
}

function countCommas(text: string): number {
  let commas = 0;
  for (let at = text.indexOf(","); at >= 0; at = text.indexOf(",", at + 1)) commas++;
  return commas;
}
