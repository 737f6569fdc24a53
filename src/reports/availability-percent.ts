/**
 * Availability as a percentage, the one rule the CLI and the web UI share: "100%" only when
 * every observed second was Ready; otherwise truncated (never rounded up) to two decimals, four
 * at 99.99% and above, so 0.999 reads "99.90%", not "100%". Pure, with no imports, so the
 * browser bundle can import it too.
 */
export function formatAvailability(ratio: number | null): string {
  if (ratio === null) return "-";
  if (ratio >= 1) return "100%";
  if (ratio <= 0) return "0%";
  const percent = ratio * 100;
  const digits = percent >= 99.99 ? 4 : 2;
  const scale = 10 ** digits;
  // A hair over the true value guards against 0.9997 * 100 = 99.96999… truncating a digit low.
  const shown = Math.min(Math.max(Math.floor(percent * scale + 1e-6) / scale, 1 / scale), 100 - 1 / scale);
  return `${shown.toFixed(digits)}%`;
}
