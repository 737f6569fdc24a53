import { GraphQLError, GraphQLScalarType, Kind } from "graphql";

// RFC 3339 (section 5.6) date-time: full-date "T" full-time, a zone required; fractions of a
// second allowed. Only the shape here: each part's range is checked below, so the error can
// say which part is wrong.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/;

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/** The earliest and latest instants accepted: four-digit years, and PostgreSQL has no year 0. */
export const EARLIEST = Date.parse("0001-01-01T00:00:00Z");
export const LATEST = Date.parse("9999-12-31T23:59:59.999Z");

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const leap = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
const daysIn = (year: number, month: number) => (month === 2 && leap(year) ? 29 : DAYS[month - 1]!);

function invalid(text: unknown, why: string): GraphQLError {
  return new GraphQLError(`DateTime must be an RFC 3339 timestamp such as 2026-01-15T10:30:00Z; ${JSON.stringify(text)}: ${why}`, {
    extensions: { code: "BAD_USER_INPUT" },
  });
}

/** Parses an RFC 3339 timestamp, every part range- and calendar-checked (no rolling over: 2026-02-31 is refused, not March 3). */
export function parseDateTime(text: unknown): Date {
  if (typeof text !== "string") throw invalid(text, "not a string");
  const m = RFC3339.exec(text);
  if (!m) throw invalid(text, "not of the form YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm)");
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (year === 0) throw invalid(text, "year 0000 does not exist (years are 0001-9999)");
  if (month < 1 || month > 12) throw invalid(text, `month ${m[2]} is not 01-12`);
  const days = daysIn(year, month);
  if (day < 1 || day > days) throw invalid(text, `day ${m[3]} is not in ${MONTHS[month - 1]} ${m[1]} (01-${days})`);
  if (hour > 23) throw invalid(text, `hour ${m[4]} is not 00-23`);
  if (minute > 59) throw invalid(text, `minute ${m[5]} is not 00-59`);
  // RFC 3339 allows 60 for a leap second; JavaScript dates (and PostgreSQL) cannot hold one.
  if (second > 59) throw invalid(text, `second ${m[6]} is not 00-59 (leap seconds are not supported)`);
  if (m[9] !== undefined) {
    if (Number(m[10]) > 23) throw invalid(text, `offset hour ${m[10]} is not 00-23`);
    if (Number(m[11]) > 59) throw invalid(text, `offset minute ${m[11]} is not 00-59`);
  }
  const date = new Date(text.toUpperCase());
  if (Number.isNaN(date.getTime())) throw invalid(text, "not a timestamp");
  if (date.getTime() < EARLIEST || date.getTime() > LATEST) throw invalid(text, "outside 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z");
  return date;
}

/**
 * Each Date's text, kept as long as the Date is. toISOString costs about a microsecond, and a
 * query for 5,000 nodes serialises 25,000 condition times that the inventory's per-node views
 * keep from one query to the next (no code here changes a Date once made).
 */
const serialised = new WeakMap<Date, string>();

/** RFC 3339 timestamps in UTC out; any RFC 3339 timestamp with a zone in. */
export const DateTimeScalar = new GraphQLScalarType<Date, string>({
  name: "DateTime",
  description: "RFC 3339 timestamp in UTC, e.g. 2026-01-15T10:30:00Z.",
  serialize(value) {
    if (value instanceof Date) {
      const known = serialised.get(value);
      if (known !== undefined) return known;
    }
    const date = value instanceof Date ? value : new Date(value as string | number);
    if (Number.isNaN(date.getTime())) throw new GraphQLError(`not a timestamp: ${String(value)}`);
    const text = date.toISOString();
    if (value instanceof Date) serialised.set(value, text);
    return text;
  },
  parseValue: parseDateTime,
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw new GraphQLError("DateTime must be a string", { extensions: { code: "BAD_USER_INPUT" } });
    return parseDateTime(ast.value);
  },
});
