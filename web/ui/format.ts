// Numbers as people read them: cores, binary bytes, percentages, times.

export function cores(millicores: number): string {
  const value = millicores / 1000;
  return `${value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)} cores`;
}

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

export function bytes(value: number): string {
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) [value, unit] = [value / 1024, unit + 1];
  return `${value >= 100 || unit === 0 ? value.toFixed(0) : value.toFixed(1)} ${UNITS[unit]}`;
}

/** Availability by the CLI's rule: 100% only when every observed second was Ready. */
export { formatAvailability as availability } from "../../src/reports/availability-percent.js";

export const percent = (ratio: number) => `${(ratio * 100).toFixed(ratio < 0.1 && ratio > 0 ? 1 : 0)}%`;

export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  return date
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, "Z");
}

/** `3d 4h`, `12m 5s`: a duration to a second. */
export function duration(seconds: number): string {
  const s = Math.round(seconds);
  const parts: [number, string][] = [
    [Math.floor(s / 86400), "d"],
    [Math.floor((s % 86400) / 3600), "h"],
    [Math.floor((s % 3600) / 60), "m"],
    [s % 60, "s"],
  ];
  const shown = parts.filter(([n]) => n > 0).slice(0, 2);
  return shown.length ? shown.map(([n, u]) => `${n}${u}`).join(" ") : "0s";
}

/** How long ago, from now. */
export const ago = (iso: string) => `${duration((Date.now() - Date.parse(iso)) / 1000)} ago`;
