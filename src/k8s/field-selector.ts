/**
 * The apiserver's field selector syntax (k8s.io/apimachinery/pkg/fields):
 * comma-separated `field=value`, `field==value` and `field!=value` terms, with
 * `\,`, `\=` and `\\` escaping in values.
 */

import { SelectorParseError } from "./label-selector.js";
import { cut, SELECTOR_LIMITS, selectorTooLarge } from "./selector-limits.js";

/** One term of a field selector; "==" is read as "=". */
export interface FieldRequirement {
  field: string;
  operator: "=" | "!=";
  value: string;
}

/** A parsed field selector; every requirement must hold. */
export interface FieldSelector {
  readonly requirements: FieldRequirement[];
  /**
   * True when every requirement holds. As in apimachinery, a field that `get`
   * does not know (undefined) reads as "", so `spec.nodeName=` matches unscheduled pods.
   */
  matches(get: (field: string) => string | undefined): boolean;
  /** Canonical text: terms sorted as apimachinery sorts them, values escaped. */
  toString(): string;
}

// "==" is tried before "=" so that "a==b" does not leave "=b" as the value.
const TERM_OPERATORS = ["!=", "==", "="] as const;

/** Escapes a value for use in a field selector (fields.EscapeValue). */
export function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

interface Term {
  text: string;
  start: number;
}

// Backslash-escaped commas stay in the term, backslash included; unescaping happens per value.
function splitTerms(text: string): Term[] {
  const terms: Term[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inSlash) inSlash = false;
    else if (c === "\\") inSlash = true;
    else if (c === ",") {
      terms.push({ text: text.slice(start, i), start });
      start = i + 1;
    }
  }
  terms.push({ text: text.slice(start), start });
  return terms;
}

function unescapeValue(raw: string, offset: number): string {
  let out = "";
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === "\\") {
      const next = raw[i + 1];
      if (next === undefined) {
        throw new SelectorParseError("invalid field selector: invalid escape sequence: \\", offset + i);
      }
      if (next !== "\\" && next !== "," && next !== "=") {
        throw new SelectorParseError(`invalid field selector: invalid escape sequence: \\${next}`, offset + i);
      }
      out += next;
      i++;
    } else if (c === "," || c === "=") {
      // Go prints the rune as a number here ("61"); the character itself is more useful.
      throw new SelectorParseError(`invalid field selector: unescaped character in value: '${c}'`, offset + i);
    } else {
      out += c;
    }
  }
  return out;
}

class ParsedFieldSelector implements FieldSelector {
  constructor(readonly requirements: FieldRequirement[]) {}
  matches(get: (field: string) => string | undefined): boolean {
    const reqs = this.requirements;
    for (let i = 0; i < reqs.length; i++) {
      const r = reqs[i]!;
      const equal = (get(r.field) ?? "") === r.value;
      if (equal !== (r.operator === "=")) return false;
    }
    return true;
  }
  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.operator}${escapeFieldValue(r.value)}`).join(",");
  }
}

/**
 * Parses a field selector as fields.ParseSelector does. Whitespace is data, not
 * padding ("a = b" has field "a " and value " b"), exactly as on the apiserver.
 * The empty string matches everything.
 * @throws SelectorParseError pointing at the term or character at fault.
 */
export function parseFieldSelector(text: string): FieldSelector {
  const tooLarge = selectorTooLarge(text);
  if (tooLarge) throw new SelectorParseError(tooLarge, -1);
  // apimachinery sorts the raw terms before parsing; this keeps the same order and first error.
  const terms = splitTerms(text)
    .filter((t) => t.text !== "")
    .sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
  if (terms.length > SELECTOR_LIMITS.maxRequirements) {
    throw new SelectorParseError(`${terms.length} terms; at most ${SELECTOR_LIMITS.maxRequirements} are allowed`, -1);
  }
  const requirements: FieldRequirement[] = [];
  for (const term of terms) {
    let split: { at: number; op: (typeof TERM_OPERATORS)[number] } | undefined;
    for (let i = 0; i < term.text.length && split === undefined; i++) {
      for (const op of TERM_OPERATORS) {
        if (term.text.startsWith(op, i)) {
          split = { at: i, op };
          break;
        }
      }
    }
    if (split === undefined) {
      throw new SelectorParseError(`invalid selector: '${cut(text)}'; can't understand '${cut(term.text)}'`, term.start);
    }
    const valueStart = split.at + split.op.length;
    requirements.push({
      field: term.text.slice(0, split.at),
      operator: split.op === "!=" ? "!=" : "=",
      value: unescapeValue(term.text.slice(valueStart), term.start + valueStart),
    });
  }
  return new ParsedFieldSelector(requirements);
}
