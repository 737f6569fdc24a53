import { ConfigError } from "../config/config.js";

/** `7d`, `12h`, `30m`, `45s`, `1w`, `1h30m` (or a bare number of seconds) in seconds. */
export function parseDuration(text: string, flag: string): number {
  if (/^\d+$/.test(text)) return Number(text);
  const units: Record<string, number> = { w: 604_800, d: 86_400, h: 3_600, m: 60, s: 1 };
  if (!/^(\d+[wdhms])+$/.test(text)) throw new ConfigError(`${flag}: "${text}" is not a duration (e.g. 7d, 12h, 30m, 1h30m)`);
  let seconds = 0;
  for (const [, n, unit] of text.matchAll(/(\d+)([wdhms])/g)) seconds += Number(n) * units[unit!]!;
  return seconds;
}
