/**
 * Kubernetes label selectors, parsed as k8s.io/apimachinery/pkg/labels parses
 * them and matched without allocating, so one parsed selector can filter
 * hundreds of thousands of objects. Keys and values are checked by ./label-validation.ts.
 */

import { labelKeyErrors, labelValueErrors } from "./label-validation.js";
import { cut, quoted, SELECTOR_LIMITS, selectorTooLarge } from "./selector-limits.js";

/**
 * Requirement operators. "==" is read as "=" (apimachinery treats them alike
 * when matching); "!" is "does not exist"; "gt"/"lt" compare int64 values.
 */
export type LabelOperator = "=" | "!=" | "in" | "notin" | "exists" | "!" | "gt" | "lt";

/** One comma-separated clause of a selector. Values are sorted and de-duplicated. */
export interface Requirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

/** A parsed label selector; every requirement must match. */
export interface LabelSelector {
  readonly requirements: Requirement[];
  /** True when every requirement holds for these labels; undefined labels are no labels. */
  matches(labels: Record<string, string> | undefined): boolean;
  /** Canonical text as apimachinery prints it: requirements sorted by key. */
  toString(): string;
}

/**
 * Thrown for a selector that does not parse or validate. The message is
 * apimachinery's wording followed by " at position N"; `reason` is the wording
 * alone. `position` is a 0-based offset into the text, or -1 for selectors
 * built from structured fields (labelSelectorFromMatchLabels).
 */
export class SelectorParseError extends Error {
  override readonly name = "SelectorParseError";
  constructor(
    readonly reason: string,
    readonly position: number,
  ) {
    super(position >= 0 ? `${reason} at position ${position}` : reason);
  }
}

function invalid(path: string, value: string, detail: string): string {
  return `${path}: Invalid value: ${quoted(value)}: ${detail}`;
}

function aggregate(errs: string[]): string {
  return errs.length === 1 ? errs[0]! : `[${errs.join(", ")}]`;
}

const INT64_RE = /^[+-]?[0-9]+$/;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

// strconv.ParseInt(s, 10, 64); undefined where Go would fail.
function parseInt64(s: string): bigint | undefined {
  if (!INT64_RE.test(s)) return undefined;
  const n = BigInt(s);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

interface ValueAt {
  value: string;
  position: number;
}

/**
 * labels.NewRequirement's checks for a key already validated; returns the
 * aggregated message and where to point at, or undefined when valid.
 */
function requirementErrors(key: string, operator: LabelOperator, values: readonly ValueAt[], pathPrefix: string): { message: string; position: number } | undefined {
  const errs: string[] = [];
  let position = -1;
  const valuesPath = `${pathPrefix}values`;
  if ((operator === "gt" || operator === "lt") && values.length === 1 && parseInt64(values[0]!.value) === undefined) {
    errs.push(invalid(`${valuesPath}[0]`, values[0]!.value, "for 'Gt', 'Lt' operators, the value must be an integer"));
    position = values[0]!.position;
  }
  if ((operator === "in" || operator === "notin") && values.length === 0) {
    errs.push(`${valuesPath}: Invalid value: []: for 'in', 'notin' operators, values set can't be empty`);
  }
  values.forEach((v, i) => {
    const problems = labelValueErrors(v.value);
    if (problems.length > 0) {
      errs.push(invalid(`${valuesPath}[${i}][${key}]`, v.value, problems.join("; ")));
      if (position < 0) position = v.position;
    }
  });
  return errs.length === 0 ? undefined : { message: aggregate(errs), position };
}

// ---- matching ----

const enum Op {
  Equals,
  NotEquals,
  In,
  NotIn,
  Exists,
  DoesNotExist,
  Gt,
  Lt,
}

const OP_CODES: Record<LabelOperator, Op> = {
  "=": Op.Equals,
  "!=": Op.NotEquals,
  in: Op.In,
  notin: Op.NotIn,
  exists: Op.Exists,
  "!": Op.DoesNotExist,
  gt: Op.Gt,
  lt: Op.Lt,
};

// A set pays for itself only on long value lists; short lists scan faster.
const SET_THRESHOLD = 8;

interface Compiled {
  key: string;
  op: Op;
  values: readonly string[];
  valueSet: ReadonlySet<string> | undefined;
  bound: bigint;
  boundNumber: number;
}

function compile(r: Requirement): Compiled {
  const bound = r.operator === "gt" || r.operator === "lt" ? (parseInt64(r.values[0] ?? "") ?? 0n) : 0n;
  return {
    key: r.key,
    op: OP_CODES[r.operator],
    values: r.values,
    valueSet: r.values.length > SET_THRESHOLD ? new Set(r.values) : undefined,
    bound,
    boundNumber: Number(bound),
  };
}

function hasValue(c: Compiled, v: string): boolean {
  if (c.valueSet !== undefined) return c.valueSet.has(v);
  const values = c.values;
  for (let i = 0; i < values.length; i++) if (values[i] === v) return true;
  return false;
}

// Compares an int64 label value with the bound the way strconv.ParseInt would read it,
// without allocating for values that fit a double exactly (the common case).
function compareInt(text: string, c: Compiled): number | undefined {
  const len = text.length;
  if (len === 0) return undefined;
  let i = 0;
  let negative = false;
  const first = text.charCodeAt(0);
  if (first === 0x2b || first === 0x2d) {
    negative = first === 0x2d;
    i = 1;
    if (len === 1) return undefined;
  }
  if (len - i <= 15) {
    let n = 0;
    for (; i < len; i++) {
      const d = text.charCodeAt(i) - 0x30;
      if (d < 0 || d > 9) return undefined;
      n = n * 10 + d;
    }
    if (negative) n = -n;
    // Any bound beyond 2^53 is farther from n than its double approximation's error.
    return n < c.boundNumber ? -1 : n > c.boundNumber ? 1 : 0;
  }
  const big = parseInt64(text);
  if (big === undefined) return undefined;
  return big < c.bound ? -1 : big > c.bound ? 1 : 0;
}

function matchesOne(c: Compiled, labels: Record<string, string> | undefined): boolean {
  // typeof check rather than `in`: inherited members such as "constructor" are not labels.
  const v = labels === undefined ? undefined : labels[c.key];
  const present = typeof v === "string";
  switch (c.op) {
    case Op.Equals:
    case Op.In:
      return present && hasValue(c, v);
    case Op.NotEquals:
    case Op.NotIn:
      return !present || !hasValue(c, v);
    case Op.Exists:
      return present;
    case Op.DoesNotExist:
      return !present;
    case Op.Gt:
    case Op.Lt: {
      if (!present) return false;
      const cmp = compareInt(v, c);
      if (cmp === undefined) return false;
      return c.op === Op.Gt ? cmp > 0 : cmp < 0;
    }
  }
}

function requirementToString(r: Requirement): string {
  switch (r.operator) {
    case "exists":
      return r.key;
    case "!":
      return `!${r.key}`;
    case "in":
      return `${r.key} in (${r.values.join(",")})`;
    case "notin":
      return `${r.key} notin (${r.values.join(",")})`;
    case "gt":
      return `${r.key}>${r.values[0]}`;
    case "lt":
      return `${r.key}<${r.values[0]}`;
    default:
      return `${r.key}${r.operator}${r.values[0]}`;
  }
}

class CompiledLabelSelector implements LabelSelector {
  readonly requirements: Requirement[];
  private readonly compiled: readonly Compiled[];
  constructor(requirements: Requirement[]) {
    // apimachinery sorts by key so that String() is deterministic; a stable sort keeps input order within a key.
    this.requirements = requirements.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    this.compiled = this.requirements.map(compile);
  }
  matches(labels: Record<string, string> | undefined): boolean {
    const compiled = this.compiled;
    for (let i = 0; i < compiled.length; i++) {
      if (!matchesOne(compiled[i]!, labels)) return false;
    }
    return true;
  }
  toString(): string {
    return this.requirements.map(requirementToString).join(",");
  }
}

function sortedUnique(values: Iterable<string>): string[] {
  return [...new Set(values)].sort();
}

// ---- lexer and parser (a port of labels.Lexer and labels.Parser) ----

const enum Tok {
  EndOfString,
  ClosedPar,
  Comma,
  DoesNotExist,
  DoubleEquals,
  Equals,
  GreaterThan,
  Identifier,
  In,
  LessThan,
  NotEquals,
  NotIn,
  OpenPar,
}

interface Token {
  tok: Tok;
  lit: string;
  pos: number;
}

const SYMBOLS: ReadonlyMap<string, Tok> = new Map([
  [")", Tok.ClosedPar],
  [",", Tok.Comma],
  ["!", Tok.DoesNotExist],
  ["==", Tok.DoubleEquals],
  ["=", Tok.Equals],
  [">", Tok.GreaterThan],
  ["<", Tok.LessThan],
  ["!=", Tok.NotEquals],
  ["(", Tok.OpenPar],
]);

function isWhitespace(c: string): boolean {
  return c === " " || c === "\t" || c === "\r" || c === "\n";
}

function isSpecial(c: string): boolean {
  return c === "=" || c === "!" || c === "(" || c === ")" || c === "," || c === ">" || c === "<";
}

function lex(s: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  for (;;) {
    while (i < s.length && isWhitespace(s[i]!)) i++;
    if (i >= s.length) {
      tokens.push({ tok: Tok.EndOfString, lit: "", pos: s.length });
      return tokens;
    }
    const start = i;
    if (isSpecial(s[i]!)) {
      // Every single special character is a token, so Go's greedy scan reduces to: prefer "==" and "!=".
      const two = s.slice(i, i + 2);
      const lit = SYMBOLS.has(two) ? two : s[i]!;
      i += lit.length;
      tokens.push({ tok: SYMBOLS.get(lit)!, lit, pos: start });
      continue;
    }
    while (i < s.length && !isSpecial(s[i]!) && !isWhitespace(s[i]!)) i++;
    const lit = s.slice(start, i);
    const tok = lit === "in" ? Tok.In : lit === "notin" ? Tok.NotIn : Tok.Identifier;
    tokens.push({ tok, lit, pos: start });
  }
}

const BINARY_OPERATORS = "in, notin, =, ==, !=, gt, lt";

class Parser {
  private position = 0;
  constructor(private readonly tokens: Token[]) {}

  // In value context the keywords "in" and "notin" are ordinary identifiers.
  private lookahead(values: boolean): Token {
    return asContext(this.tokens[this.position]!, values);
  }
  private consume(values: boolean): Token {
    return asContext(this.tokens[this.position++]!, values);
  }

  parse(): Requirement[] {
    const requirements: Requirement[] = [];
    for (;;) {
      const t = this.lookahead(true);
      switch (t.tok) {
        case Tok.Identifier:
        case Tok.DoesNotExist: {
          if (requirements.length === SELECTOR_LIMITS.maxRequirements) {
            throw new SelectorParseError(`more than ${SELECTOR_LIMITS.maxRequirements} requirements; at most ${SELECTOR_LIMITS.maxRequirements} are allowed`, t.pos);
          }
          requirements.push(this.parseRequirement());
          const next = this.consume(true);
          if (next.tok === Tok.EndOfString) return requirements;
          if (next.tok === Tok.Comma) {
            const after = this.lookahead(true);
            if (after.tok !== Tok.Identifier && after.tok !== Tok.DoesNotExist) {
              throw new SelectorParseError(`found '${cut(after.lit)}', expected: identifier after ','`, after.pos);
            }
            break;
          }
          throw new SelectorParseError(`found '${cut(next.lit)}', expected: ',' or 'end of string'`, next.pos);
        }
        case Tok.EndOfString:
          return requirements;
        default:
          throw new SelectorParseError(`found '${cut(t.lit)}', expected: !, identifier, or 'end of string'`, t.pos);
      }
    }
  }

  private parseRequirement(): Requirement {
    const keyStart = this.tokens[this.position]!.pos;
    const { key, operator: inferred } = this.parseKeyAndInferOperator();
    let operator: LabelOperator;
    let values: ValueAt[] = [];
    if (inferred !== undefined) {
      operator = inferred;
    } else {
      operator = this.parseOperator();
      values = operator === "in" || operator === "notin" ? this.parseValues() : [this.parseExactValue()];
    }
    // Go collects values in a set, so report on them in the order it would: sorted, unique.
    const unique = new Map<string, ValueAt>();
    for (const v of values) if (!unique.has(v.value)) unique.set(v.value, v);
    const ordered = [...unique.values()].sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
    const problem = requirementErrors(key, operator, ordered, "");
    if (problem !== undefined) {
      throw requirementError(problem.message, problem.position >= 0 ? problem.position : keyStart);
    }
    return { key, operator, values: ordered.map((v) => v.value) };
  }

  private parseKeyAndInferOperator(): { key: string; operator: LabelOperator | undefined } {
    let operator: LabelOperator | undefined;
    let t = this.consume(true);
    if (t.tok === Tok.DoesNotExist) {
      operator = "!";
      t = this.consume(true);
    }
    if (t.tok !== Tok.Identifier) throw requirementError(`found '${cut(t.lit)}', expected: identifier`, t.pos);
    const problems = labelKeyErrors(t.lit);
    if (problems.length > 0) throw requirementError(invalid("<nil>", t.lit, problems.join("; ")), t.pos);
    const next = this.lookahead(true).tok;
    if ((next === Tok.EndOfString || next === Tok.Comma) && operator === undefined) operator = "exists";
    return { key: t.lit, operator };
  }

  private parseOperator(): LabelOperator {
    const t = this.consume(false);
    switch (t.tok) {
      case Tok.In:
        return "in";
      case Tok.NotIn:
        return "notin";
      case Tok.Equals:
      case Tok.DoubleEquals:
        return "=";
      case Tok.NotEquals:
        return "!=";
      case Tok.GreaterThan:
        return "gt";
      case Tok.LessThan:
        return "lt";
      default:
        throw requirementError(`found '${cut(t.lit)}', expected: ${BINARY_OPERATORS}`, t.pos);
    }
  }

  private parseValues(): ValueAt[] {
    const open = this.consume(true);
    // Go's message really lacks the comma here.
    if (open.tok !== Tok.OpenPar) throw requirementError(`found '${cut(open.lit)}' expected: '('`, open.pos);
    const t = this.lookahead(true);
    switch (t.tok) {
      case Tok.Identifier:
      case Tok.Comma: {
        const values = this.parseIdentifiersList();
        this.consume(true); // parseIdentifiersList only returns in front of ')'
        return values;
      }
      case Tok.ClosedPar:
        this.consume(true);
        return [{ value: "", position: t.pos }];
      default:
        throw requirementError(`found '${cut(t.lit)}', expected: ',', ')' or identifier`, t.pos);
    }
  }

  private parseIdentifiersList(): ValueAt[] {
    const values: ValueAt[] = [];
    for (;;) {
      const t = this.consume(true);
      switch (t.tok) {
        case Tok.Identifier: {
          if (values.length >= SELECTOR_LIMITS.maxValues) {
            throw requirementError(`more than ${SELECTOR_LIMITS.maxValues} values in one list; at most ${SELECTOR_LIMITS.maxValues} are allowed`, t.pos);
          }
          values.push({ value: t.lit, position: t.pos });
          const next = this.lookahead(true);
          if (next.tok === Tok.Comma) continue;
          if (next.tok === Tok.ClosedPar) return values;
          throw requirementError(`found '${cut(next.lit)}', expected: ',' or ')'`, next.pos);
        }
        case Tok.Comma: {
          // Empty entries ("(,a)", "(a,)", "(a,,b)") stand for the empty value.
          if (values.length === 0) values.push({ value: "", position: t.pos });
          const next = this.lookahead(true);
          if (next.tok === Tok.ClosedPar) {
            values.push({ value: "", position: t.pos });
            return values;
          }
          if (next.tok === Tok.Comma) {
            this.consume(true);
            values.push({ value: "", position: next.pos });
          }
          continue;
        }
        default:
          throw requirementError(`found '${cut(t.lit)}', expected: ',', or identifier`, t.pos);
      }
    }
  }

  private parseExactValue(): ValueAt {
    const t = this.lookahead(true);
    if (t.tok === Tok.EndOfString || t.tok === Tok.Comma) return { value: "", position: t.pos };
    this.consume(true);
    if (t.tok === Tok.Identifier) return { value: t.lit, position: t.pos };
    throw requirementError(`found '${cut(t.lit)}', expected: identifier`, t.pos);
  }
}

function asContext(t: Token, values: boolean): Token {
  return values && (t.tok === Tok.In || t.tok === Tok.NotIn) ? { ...t, tok: Tok.Identifier } : t;
}

function requirementError(reason: string, position: number): SelectorParseError {
  return new SelectorParseError(`unable to parse requirement: ${reason}`, position);
}

/**
 * Parses label selector text ("app=web,tier in (a,b),!canary,gen>3") with the
 * grammar and validation of labels.Parse, within {@link SELECTOR_LIMITS}. The empty string
 * matches everything.
 * @throws SelectorParseError with the position of the offending token.
 */
export function parseLabelSelector(text: string): LabelSelector {
  // Refused before it is read: the limits of ./selector-limits.ts.
  const tooLarge = selectorTooLarge(text);
  if (tooLarge) throw new SelectorParseError(tooLarge, -1);
  return new CompiledLabelSelector(new Parser(lex(text)).parse());
}

const MATCH_EXPRESSION_OPERATORS: Record<string, LabelOperator> = {
  In: "in",
  NotIn: "notin",
  Exists: "exists",
  DoesNotExist: "!",
};

/**
 * Builds a selector from the structured metav1.LabelSelector form
 * (matchLabels plus matchExpressions), as metav1.LabelSelectorAsSelector does.
 * With neither given it matches everything: that is the *empty* selector. A
 * *null* selector (a PDB or ReplicaSet with no `selector` at all) matches
 * nothing in Kubernetes; use {@link NOTHING_SELECTOR} for it.
 * @throws SelectorParseError (position -1) for an invalid key, value or operator.
 */
export function labelSelectorFromMatchLabels(matchLabels?: Record<string, string>, matchExpressions?: { key: string; operator: string; values?: string[] }[]): LabelSelector {
  const requirements: Requirement[] = [];
  const add = (key: string, operator: LabelOperator, values: string[]): void => {
    const keyProblems = labelKeyErrors(key);
    const errs: string[] = keyProblems.length > 0 ? [invalid("key", key, keyProblems.join("; "))] : [];
    const unique = sortedUnique(values);
    if ((operator === "exists" || operator === "!") && unique.length > 0) {
      errs.push(`values: Invalid value: ${JSON.stringify(values)}: values set must be empty for exists and does not exist`);
    }
    const valueProblem = requirementErrors(
      key,
      operator,
      unique.map((value) => ({ value, position: -1 })),
      "",
    );
    if (valueProblem !== undefined) errs.push(valueProblem.message);
    if (errs.length > 0) throw new SelectorParseError(aggregate(errs), -1);
    requirements.push({ key, operator, values: unique });
  };
  for (const [key, value] of Object.entries(matchLabels ?? {})) add(key, "=", [value]);
  for (const expr of matchExpressions ?? []) {
    const operator = Object.hasOwn(MATCH_EXPRESSION_OPERATORS, expr.operator) ? MATCH_EXPRESSION_OPERATORS[expr.operator] : undefined;
    if (operator === undefined) {
      throw new SelectorParseError(`${JSON.stringify(expr.operator)} is not a valid label selector operator`, -1);
    }
    add(expr.key, operator, expr.values ?? []);
  }
  return new CompiledLabelSelector(requirements);
}

/** The selector a null metav1.LabelSelector stands for: it matches nothing. */
export const NOTHING_SELECTOR: LabelSelector = Object.freeze({
  requirements: [],
  matches: () => false,
  toString: () => "",
});
