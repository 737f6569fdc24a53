/**
 * When a group's requests reach its allocatable at the trend of the period asked: a Theil–Sen
 * line (the median of the slopes between every two points: robust to the odd spike that a
 * least-squares fit follows) through the hourly p95 of the group's summed requests. Null when
 * there is no trend (fewer than three hours, or requests flat or falling) or when the line
 * crosses allocatable more than a year after the period's end.
 */

const HOUR_MS = 3_600_000;
const YEAR_MS = 365 * 24 * HOUR_MS;
/** Points fitted at most (the fit is quadratic in them): the latest hours are kept. */
const MAX_POINTS = 2_000;

export interface Point {
  at: number;
  value: number;
}

/** The p95 (nearest rank) of each hour's values, hours binned from the epoch, oldest first. */
export function hourlyP95(points: readonly { at: number; value: number | null }[]): Point[] {
  const hours = new Map<number, number[]>();
  for (const p of points) {
    if (p.value === null || !Number.isFinite(p.value)) continue;
    const hour = Math.floor(p.at / HOUR_MS) * HOUR_MS;
    let values = hours.get(hour);
    if (!values) hours.set(hour, (values = []));
    values.push(p.value);
  }
  return [...hours.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([at, values]) => {
      values.sort((a, b) => a - b);
      return { at, value: values[Math.max(0, Math.ceil(0.95 * values.length) - 1)]! };
    });
}

function median(values: number[]): number {
  values.sort((a, b) => a - b);
  const mid = values.length >> 1;
  return values.length % 2 ? values[mid]! : (values[mid - 1]! + values[mid]!) / 2;
}

/** Theil–Sen: slope (per ms) and intercept (at t = 0) of the line through `points`; null below three. */
export function theilSen(points: readonly Point[]): { slope: number; intercept: number } | null {
  const ps = points.slice(-MAX_POINTS);
  if (ps.length < 3) return null;
  const slopes: number[] = [];
  for (let i = 0; i < ps.length; i++) for (let j = i + 1; j < ps.length; j++) if (ps[j]!.at !== ps[i]!.at) slopes.push((ps[j]!.value - ps[i]!.value) / (ps[j]!.at - ps[i]!.at));
  if (slopes.length === 0) return null;
  const slope = median(slopes);
  const intercept = median(ps.map((p) => p.value - slope * p.at));
  return { slope, intercept };
}

/** When the trend of `points` reaches `limit`, or null (see the file comment). `until`: the period's end. */
export function fullAt(points: readonly Point[], limit: number, until: number): Date | null {
  if (!(limit > 0)) return null;
  const line = theilSen(points);
  if (!line || !(line.slope > 0)) return null;
  const at = (limit - line.intercept) / line.slope;
  if (!Number.isFinite(at) || at > until + YEAR_MS) return null;
  return new Date(Math.round(at));
}
