/**
 * What the CLI prints of text it did not write: node names, labels, osImage, kernelVersion,
 * reasons and messages come from kubelets and the service. On a terminal a control character is
 * a command (ESC sequences set the title, clear the screen, recolour, move the cursor; C1's CSI
 * is one byte), and bidirectional overrides reorder what is shown; in a spreadsheet a cell that
 * starts with `=`, `+`, `-`, `@`, a tab or a carriage return is a formula (OWASP, "CSV Injection").
 * Every output path of the CLI goes through this module.
 */

/**
 * C0 controls but the line feed (a carriage return only before one: CSV's CRLF), DEL, C1
 * controls, and the bidirectional embedding, override and isolate characters.
 */
const UNSAFE = /[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]|\r(?!\n)/g;

const escaped = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * `text` safe to write to a terminal: every control character but a line end written out as
 * `\uXXXX`, so it shows instead of acting. Inside a JSON string that is the same character, so
 * JSON output stays the same data.
 */
export function terminalText(text: string): string {
  return text.replace(UNSAFE, escaped);
}

/** Cells that a spreadsheet would read as a formula (OWASP). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV cell: a text cell that starts like a formula is prefixed with a single quote (OWASP),
 * control characters are written out as on a terminal, and RFC 4180 quoting (a cell with a
 * comma, quote or line break quoted, its quotes doubled). Numbers and booleans are as they are.
 */
export function csvCell(value: string | number | boolean | null): string {
  if (value === null) return "";
  if (typeof value !== "string") return String(value);
  const text = terminalText(FORMULA_START.test(value) ? `'${value}` : value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** RFC 4180 CSV: CRLF line ends, each cell by {@link csvCell}. */
export function toCsv(rows: readonly (readonly (string | number | boolean | null)[])[]): string {
  return rows.map((row) => row.map(csvCell).join(",")).join("\r\n") + "\r\n";
}
