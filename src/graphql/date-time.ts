import { GraphQLError, GraphQLScalarType, Kind } from "graphql";

// RFC 3339 with a zone; fractions of a second allowed.
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

function parse(text: unknown): Date {
  if (typeof text !== "string" || !RFC3339.test(text) || Number.isNaN(Date.parse(text))) {
    throw new GraphQLError(`DateTime must be an RFC 3339 timestamp such as 2026-01-15T10:30:00Z, got ${JSON.stringify(text)}`, {
      extensions: { code: "BAD_USER_INPUT" },
    });
  }
  return new Date(text);
}

/** RFC 3339 timestamps in UTC out; any RFC 3339 timestamp with a zone in. */
export const DateTimeScalar = new GraphQLScalarType<Date, string>({
  name: "DateTime",
  description: "RFC 3339 timestamp in UTC, e.g. 2026-01-15T10:30:00Z.",
  serialize(value) {
    const date = value instanceof Date ? value : new Date(value as string | number);
    if (Number.isNaN(date.getTime())) throw new GraphQLError(`not a timestamp: ${String(value)}`);
    return date.toISOString();
  },
  parseValue: parse,
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw new GraphQLError("DateTime must be a string", { extensions: { code: "BAD_USER_INPUT" } });
    return parse(ast.value);
  },
});
