/**
 * Kubernetes resource.Quantity parsing, exact.
 *
 * Values are held as a signed bigint count of nano-units, because apimachinery
 * itself rounds every parsed quantity up to nano precision: after parsing, every
 * Quantity is an integer number of nanos, so bigint arithmetic is exact.
 *
 * Precision: `value()`, `milliValue()` and `toNumber()` return JavaScript numbers.
 * Below Number.MAX_SAFE_INTEGER (2^53 - 1) they are exact; above it they are the
 * nearest double to the exact result (e.g. "2Ei" = 2^61 is exact because it is a
 * power of two, "2Ei" in millis is 2^61 * 1000, which is close but not exact).
 * Where Go's int64 would overflow (MilliValue of "2Ei"), we return the large
 * double instead of a wrapped value. `nanos` is always exact.
 */

const DECIMAL_SUFFIXES: ReadonlyMap<string, number> = new Map([
  ["n", -9],
  ["u", -6],
  ["m", -3],
  ["", 0],
  ["k", 3],
  ["M", 6],
  ["G", 9],
  ["T", 12],
  ["P", 15],
  ["E", 18],
]);
const BINARY_SUFFIXES: ReadonlyMap<string, number> = new Map([
  ["Ki", 10],
  ["Mi", 20],
  ["Gi", 30],
  ["Ti", 40],
  ["Pi", 50],
  ["Ei", 60],
]);
const SUFFIX_LIST = "n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei, or an exponent such as e3";

const NANOS_PER_UNIT = 1_000_000_000n;
const NANOS_PER_MILLI = 1_000_000n;
const INT64_MAX = (1n << 63n) - 1n;
// Beyond this a value cannot be a finite double anyway; refusing keeps 10n ** exp bounded.
const MAX_EXPONENT = 10_000;

/** Thrown by {@link parseQuantity} for text that is not a Kubernetes quantity. */
export class QuantityParseError extends Error {
  override readonly name = "QuantityParseError";
  /** The text that failed to parse. */
  readonly input: string;
  constructor(input: string, reason: string) {
    super(`invalid quantity ${JSON.stringify(input)}: ${reason}`);
    this.input = input;
  }
}

/** A parsed resource quantity ("100m", "1.5Gi", "1e3"). */
export interface Quantity {
  /** The text as given. */
  readonly text: string;
  /** The exact value in nano-units (1e-9), after apimachinery's round-up to nano precision. */
  readonly nanos: bigint;
  /** Value in thousandths, rounded up (away from zero) like Go's Quantity.MilliValue. */
  milliValue(): number;
  /** Integer value, rounded up (away from zero) like Go's Quantity.Value: "100m" -> 1. */
  value(): number;
  /** The value as the nearest double. */
  toNumber(): number;
}

class ExactQuantity implements Quantity {
  constructor(
    readonly text: string,
    readonly nanos: bigint,
  ) {}
  milliValue(): number {
    return Number(divideAwayFromZero(this.nanos, NANOS_PER_MILLI));
  }
  value(): number {
    return Number(divideAwayFromZero(this.nanos, NANOS_PER_UNIT));
  }
  toNumber(): number {
    // Parsing the decimal string rounds once; dividing two doubles would round twice.
    return Number(`${this.nanos}e-9`);
  }
}

// Go's negativeScaleInt64 rounds away from zero when a quantity loses precision.
function divideAwayFromZero(n: bigint, d: bigint): bigint {
  const q = n / d;
  if (q * d === n) return q;
  return n < 0n ? q - 1n : q + 1n;
}

/**
 * Parses a Kubernetes quantity exactly as k8s.io/apimachinery's ParseQuantity
 * values it: the result is rounded up to nano precision and, like Go, a value
 * that needs arbitrary precision (more than 18 significant digits, a binary
 * suffix with a fraction, ...) is capped at 2^63-1 unless written with an exponent.
 *
 * Stricter than Go in one way: the OpenAPI grammar requires a digit, so "Gi",
 * "-" and "." are rejected here, where Go's parser reads them as zero.
 *
 * @throws QuantityParseError on malformed input; the message quotes it.
 */
export function parseQuantity(text: string): Quantity {
  if (text.length === 0) throw new QuantityParseError(text, "empty string");
  let i = 0;
  let negative = false;
  const first = text.charCodeAt(0);
  if (first === 0x2d /* - */ || first === 0x2b /* + */) {
    negative = first === 0x2d;
    i = 1;
  }
  const intStart = i;
  while (i < text.length && isDigit(text.charCodeAt(i))) i++;
  const intPart = text.slice(intStart, i);
  let fracPart = "";
  if (i < text.length && text.charCodeAt(i) === 0x2e /* . */) {
    const fracStart = ++i;
    while (i < text.length && isDigit(text.charCodeAt(i))) i++;
    fracPart = text.slice(fracStart, i);
  }
  const suffix = text.slice(i);
  for (let j = 0; j < suffix.length; j++) {
    const c = suffix.charCodeAt(j);
    if (!isDigit(c) && !isAsciiLetter(c) && c !== 0x2b && c !== 0x2d) {
      throw new QuantityParseError(text, `unexpected character ${JSON.stringify(suffix[j])} at position ${i + j}`);
    }
  }
  if (intPart.length === 0 && fracPart.length === 0) {
    throw new QuantityParseError(text, "expected a number before the suffix");
  }

  let exp10 = 0;
  let exp2 = 0;
  let format: "DecimalSI" | "BinarySI" | "DecimalExponent";
  const dec = DECIMAL_SUFFIXES.get(suffix);
  const bin = BINARY_SUFFIXES.get(suffix);
  if (dec !== undefined) {
    exp10 = dec;
    format = "DecimalSI";
  } else if (bin !== undefined) {
    exp2 = bin;
    format = "BinarySI";
  } else if (/^[eE][+-]?[0-9]+$/.test(suffix)) {
    exp10 = Number(suffix.slice(1));
    if (!Number.isSafeInteger(exp10) || Math.abs(exp10) > MAX_EXPONENT) {
      throw new QuantityParseError(text, `exponent ${suffix.slice(1)} is out of the supported range ±${MAX_EXPONENT}`);
    }
    format = "DecimalExponent";
  } else {
    throw new QuantityParseError(text, `unknown suffix ${JSON.stringify(suffix)} (expected ${SUFFIX_LIST})`);
  }

  // Go strips leading zeros of the integer part (an empty one counts as "0") but not of the fraction;
  // its fast-path decision below depends on exactly these lengths.
  const numDigits = intPart.replace(/^0+/, "") || "0";
  const digits = BigInt(numDigits + fracPart);
  let magnitude: bigint;
  const scale10 = exp10 - fracPart.length + 9; // power of ten that turns `digits` into nanos
  const scaled = exp2 > 0 ? digits << BigInt(exp2) : digits;
  if (scale10 >= 0) {
    magnitude = scaled * 10n ** BigInt(scale10);
  } else if (-scale10 > scaled.toString().length + 1) {
    // The divisor dwarfs the value: rounding up leaves one nano, or zero for zero.
    magnitude = scaled === 0n ? 0n : 1n;
  } else {
    magnitude = divideAwayFromZero(scaled, 10n ** BigInt(-scale10));
  }

  // Go keeps small values in an int64 "fast path" that is never capped; everything else goes
  // through inf.Dec, where DecimalSI and BinarySI (not DecimalExponent) are capped at 2^63-1.
  let fastPath: boolean;
  if (format === "BinarySI") {
    const precision = 15 - numDigits.length - Math.trunc((exp2 * 3) / 10) - 1;
    fastPath = fracPart.length === 0 && precision >= 0 && digits << BigInt(exp2) <= INT64_MAX;
  } else {
    const precision = 18 - (numDigits.length + fracPart.length);
    fastPath = precision >= 0 && exp10 - fracPart.length >= -9;
  }
  if (!fastPath && format !== "DecimalExponent" && magnitude > INT64_MAX * NANOS_PER_UNIT) {
    magnitude = INT64_MAX * NANOS_PER_UNIT;
  }
  return new ExactQuantity(text, negative ? -magnitude : magnitude);
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isAsciiLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

/** CPU in millicores, as Go's MilliValue: "100m" -> 100, "1" -> 1000, "0.1" -> 100. */
export function cpuMillicores(text: string): number {
  return parseQuantity(text).milliValue();
}

/** Bytes (or any integer resource), as Go's Value: "1Gi" -> 1073741824, "1G" -> 1e9. */
export function bytes(text: string): number {
  return parseQuantity(text).value();
}

/**
 * Formats millicores the way the apiserver canonicalises CPU: "3800m", or "4"
 * when the value is whole cores.
 * @throws RangeError for a value that is not a safe integer.
 */
export function formatMillicores(m: number): string {
  if (!Number.isSafeInteger(m)) throw new RangeError(`millicores must be a safe integer, got ${m}`);
  return m % 1000 === 0 ? String(m / 1000) : `${m}m`;
}

const BINARY_FORMAT_SUFFIXES = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"] as const;

/**
 * Formats a byte count with the largest binary suffix that divides it exactly
 * ("16Gi", "512Mi", "1536Mi"), else as a plain integer ("129000000").
 *
 * Unlike Go's canonical form, values below 1024 stay plain ("1000", where Go
 * would print "1k"); both parse back to the same quantity.
 * @throws RangeError for a value that is not an integer.
 */
export function formatBytes(b: number): string {
  if (!Number.isInteger(b)) throw new RangeError(`bytes must be an integer, got ${b}`);
  let n = BigInt(b);
  if (n === 0n) return "0";
  let unit = 0;
  while (unit < BINARY_FORMAT_SUFFIXES.length - 1 && n % 1024n === 0n) {
    n /= 1024n;
    unit++;
  }
  return `${n}${BINARY_FORMAT_SUFFIXES[unit]}`;
}
