// Small SVG charts: lines over time, and an outage strip per node. Each has a text title and
// a description, and every series or span a <title>, so the figures are there without the picture.

const COLOURS = ["#1a56db", "#bf5700", "#1b7a35", "#8250df", "#b3261e", "#0f766e", "#6d4c41", "#57606a"];

export interface Series {
  name: string;
  /** One value per point in time; null where nothing was sampled. */
  values: (number | null)[];
}

/** Where a series' line is heading: it reaches `level` (its allocatable) at `fullAt`, or never (null: no trend). */
export interface Forecast {
  name: string;
  level: number;
  fullAt: number | null;
}

/** A future time in words: the date, and how far off it is. */
export function fullAtText(fullAt: number, now: number): string {
  const days = (fullAt - now) / 86_400_000;
  const off = days < 1 ? `in ${Math.max(0, Math.round(days * 24))} hours` : `in ${Math.round(days)} ${Math.round(days) === 1 ? "day" : "days"}`;
  return `${new Date(fullAt).toISOString().slice(0, 16).replace("T", " ")} UTC (${off})`;
}

/**
 * Lines over `times` (ms since the epoch), one per series, with a legend in words. With
 * forecasts, the time axis runs on past the last window (up to three periods more) and each
 * series with a trend gets a dotted projection to its allocatable, with a marker where it is reached.
 */
export function LineChart({ title, times, series, format, forecasts = [] }: { title: string; times: number[]; series: Series[]; format: (value: number) => string; forecasts?: Forecast[] }) {
  const width = 720;
  const height = 220;
  const pad = { left: 70, right: 12, top: 12, bottom: 28 };
  const all = series.flatMap((s) => s.values.filter((v): v is number => v !== null));
  const ahead = forecasts.filter((f): f is Forecast & { fullAt: number } => f.fullAt !== null);
  const max = Math.max(1, ...all, ...ahead.map((f) => f.level)) * 1.1;
  const first = times[0] ?? 0;
  const last = times[times.length - 1] ?? 0;
  const horizon = ahead.length ? Math.min(Math.max(last, ...ahead.map((f) => f.fullAt)), last + 3 * (last - first)) : last;
  const at = (t: number) => pad.left + (horizon > first ? ((t - first) / (horizon - first)) * (width - pad.left - pad.right) : 0);
  const x = (i: number) => at(times[i]!);
  const y = (v: number) => pad.top + (1 - v / max) * (height - pad.top - pad.bottom);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((t) => t * max);
  const label = (t: number) => new Date(t).toISOString().slice(5, 16).replace("T", " ");
  return (
    <figure class="chart-figure">
      <svg
        class="chart"
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={`${title}: ${series.map((s) => `${s.name} peaks at ${format(Math.max(0, ...s.values.filter((v): v is number => v !== null)))}`).join("; ")}`}
      >
        {ticks.map((t) => (
          <g key={t}>
            <line class="grid" x1={pad.left} x2={width - pad.right} y1={y(t)} y2={y(t)} />
            <text x={pad.left - 6} y={y(t) + 4} text-anchor="end">
              {format(t)}
            </text>
          </g>
        ))}
        <line class="axis" x1={pad.left} x2={width - pad.right} y1={height - pad.bottom} y2={height - pad.bottom} />
        {times.length > 0 && (
          <>
            <text x={pad.left} y={height - 8}>
              {label(times[0]!)}
            </text>
            <text x={width - pad.right} y={height - 8} text-anchor="end">
              {label(horizon)}
            </text>
          </>
        )}
        {series.map((s, index) => {
          const colour = COLOURS[index % COLOURS.length]!;
          // Gaps where nothing was sampled: one path segment per run of values.
          let d = "";
          let pen = false;
          s.values.forEach((v, i) => {
            if (v === null) pen = false;
            else {
              d += `${pen ? "L" : "M"}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
              pen = true;
            }
          });
          return (
            <g key={s.name}>
              <title>{s.name}</title>
              <path d={d} fill="none" stroke={colour} stroke-width={2} stroke-dasharray={index % 2 ? "6 3" : undefined} />
              {s.values.map((v, i) => (v === null ? null : <circle cx={x(i)} cy={y(v)} r={3} fill={colour} />))}
            </g>
          );
        })}
        {ahead.map((f) => {
          const index = series.findIndex((s) => s.name === f.name);
          const s = series[index];
          const i = s ? s.values.map((v, k) => (v === null ? -1 : k)).reduce((a, b) => Math.max(a, b), -1) : -1;
          if (!s || i < 0) return null;
          const value = s.values[i]!;
          // Clipped at the horizon: the projection goes on, the chart does not.
          const end = Math.min(f.fullAt, horizon);
          const endValue = f.fullAt > times[i]! ? value + ((f.level - value) * (end - times[i]!)) / (f.fullAt - times[i]!) : f.level;
          const colour = COLOURS[index % COLOURS.length]!;
          return (
            <g key={`forecast-${f.name}`} data-forecast={f.name}>
              <title>{`${f.name}: requests reach allocatable ${format(f.level)} at ${fullAtText(f.fullAt, last)}`}</title>
              <line class="allocatable" x1={pad.left} x2={width - pad.right} y1={y(f.level)} y2={y(f.level)} stroke={colour} stroke-width={1} stroke-dasharray="2 4" />
              <line class="projection" x1={x(i)} y1={y(value)} x2={at(end)} y2={y(endValue)} stroke={colour} stroke-width={2} stroke-dasharray="1 4" />
              {f.fullAt <= horizon && <path class="full-marker" d={`M${at(f.fullAt).toFixed(1)},${(y(f.level) - 7).toFixed(1)}l6,7l-6,7l-6,-7z`} fill={colour} />}
            </g>
          );
        })}
      </svg>
      <figcaption>
        <strong>{title}</strong>
        <ul class="chart-legend">
          {series.map((s, index) => (
            <li key={s.name}>
              <svg width="28" height="10" aria-hidden="true">
                <line x1="0" x2="28" y1="5" y2="5" stroke={COLOURS[index % COLOURS.length]} stroke-width="3" stroke-dasharray={index % 2 ? "6 3" : undefined} />
              </svg>{" "}
              {s.name}
            </li>
          ))}
        </ul>
        {forecasts.length > 0 && (
          <ul class="chart-forecasts">
            {forecasts.map((f) => (
              <li key={f.name} data-forecast-group={f.name} data-full-at={f.fullAt === null ? "" : new Date(f.fullAt).toISOString()}>
                {f.name}:{" "}
                {f.fullAt === null ? "no trend to full (requests not growing towards allocatable within a year)" : `requests reach allocatable ${format(f.level)} on ${fullAtText(f.fullAt, last)}`}
              </li>
            ))}
          </ul>
        )}
      </figcaption>
    </figure>
  );
}

export interface Span {
  from: number;
  to: number;
  state: "FALSE" | "UNKNOWN";
}

/** One strip per node over [from, to): NotReady spans red and solid, Unknown grey and hatched. */
export function OutageStrips({ from, to, rows }: { from: number; to: number; rows: { name: string; spans: Span[]; text: string }[] }) {
  const width = 720;
  const rowHeight = 18;
  const labelWidth = 220;
  const x = (t: number) => labelWidth + ((t - from) / (to - from)) * (width - labelWidth - 8);
  const height = rows.length * (rowHeight + 4) + 20;
  return (
    <svg class="chart outages" viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`Outages per node: ${rows.map((r) => `${r.name} ${r.text}`).join("; ")}`}>
      <defs>
        <pattern id="unknown-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
          <rect width="6" height="6" fill="#5f6368" />
          <line x1="0" y1="0" x2="0" y2="6" stroke="#fff" stroke-width="2" />
        </pattern>
      </defs>
      {rows.map((row, i) => {
        const top = i * (rowHeight + 4);
        return (
          <g key={row.name}>
            <text x={0} y={top + 13}>
              {row.name}
            </text>
            <rect x={labelWidth} y={top} width={width - labelWidth - 8} height={rowHeight} fill="#e6f4ea" stroke="#8c959f" />
            {row.spans.map((span) => (
              <rect x={x(span.from)} y={top} width={Math.max(2, x(span.to) - x(span.from))} height={rowHeight} fill={span.state === "FALSE" ? "#b3261e" : "url(#unknown-hatch)"}>
                <title>{`${span.state === "FALSE" ? "NotReady" : "Unknown"} from ${new Date(span.from).toISOString()} to ${new Date(span.to).toISOString()}`}</title>
              </rect>
            ))}
          </g>
        );
      })}
      <text x={labelWidth} y={height - 4}>
        {new Date(from).toISOString().slice(0, 16).replace("T", " ")}
      </text>
      <text x={width - 8} y={height - 4} text-anchor="end">
        {new Date(to).toISOString().slice(0, 16).replace("T", " ")}
      </text>
    </svg>
  );
}
