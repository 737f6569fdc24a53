// Trends as lines: the sampled p95 of usage and requests per group over a chosen period,
// in twelve windows (one capacityReport per window, in one request).
import { useEffect, useState } from "preact/hooks";
import { gql, type ApiError } from "../api";
import { ErrorNote } from "../error-note";
import { bytes, cores } from "../format";
import { LineChart, type Forecast, type Series } from "./charts";
import { GroupBySelect, groupingVariable, keyText, PERIODS, PeriodSelect } from "./report-controls";

const WINDOWS = 12;

interface Trend {
  p95Usage: number | null;
  p95Requests: number;
}
interface WindowGroups {
  groups: { key: { value: string | null }[]; trends: { samples: number; cpu: Trend; memory: Trend } | null }[];
}

interface ForecastGroups {
  groups: {
    key: { value: string | null }[];
    cpu: { allocatable: number };
    memory: { allocatable: number };
    forecast: { cpuRequestsFullAt: string | null; memoryRequestsFullAt: string | null } | null;
  }[];
}

/** The whole period's forecast per group (hourly points need the period, not one window). */
const FORECAST = `forecast: capacityReport(groupBy: $groupBy, trendsSince: $since0, trendsUntil: $until${WINDOWS - 1}) {
  groups { key { value } cpu { allocatable } memory { allocatable } forecast { cpuRequestsFullAt memoryRequestsFullAt } } }`;

function trendsQuery(windows: number): string {
  const fields = `groups { key { value } trends { samples cpu { p95Usage p95Requests } memory { p95Usage p95Requests } } }`;
  const parts = Array.from({ length: windows }, (_, i) => `w${i}: capacityReport(groupBy: $groupBy, trendsSince: $since${i}, trendsUntil: $until${i}) { ${fields} }`);
  const variables = Array.from({ length: windows }, (_, i) => `$since${i}: DateTime!, $until${i}: DateTime!`).join(", ");
  return `query Trends($groupBy: [ReportGrouping!], ${variables}) { ${parts.join("\n")}\n${FORECAST} }`;
}

export function TrendsSection() {
  const [by, setBy] = useState("NODE_POOL");
  const [period, setPeriod] = useState(PERIODS[1]![0]);
  const [measure, setMeasure] = useState<"p95Usage" | "p95Requests">("p95Usage");
  const [data, setData] = useState<{ times: number[]; cpu: Series[]; memory: Series[]; cpuForecast: Forecast[]; memoryForecast: Forecast[] } | undefined>();
  const [error, setError] = useState<ApiError | undefined>();

  useEffect(() => {
    let current = true;
    const until = Date.now();
    const step = (period * 1000) / WINDOWS;
    const variables: Record<string, unknown> = { groupBy: groupingVariable(by) };
    const times: number[] = [];
    for (let i = 0; i < WINDOWS; i++) {
      variables[`since${i}`] = new Date(until - (WINDOWS - i) * step).toISOString();
      variables[`until${i}`] = new Date(until - (WINDOWS - i - 1) * step).toISOString();
      times.push(until - (WINDOWS - i - 1) * step);
    }
    gql<Record<string, WindowGroups> & { forecast: ForecastGroups }>(trendsQuery(WINDOWS), variables).then(
      (answer) => {
        if (!current) return;
        const names = new Set<string>();
        for (let i = 0; i < WINDOWS; i++) for (const g of answer[`w${i}`]!.groups) names.add(keyText(g.key));
        const series = (pick: (t: NonNullable<WindowGroups["groups"][number]["trends"]>) => number | null) =>
          [...names].sort().map((name) => ({
            name,
            values: Array.from({ length: WINDOWS }, (_, i) => {
              const trends = answer[`w${i}`]!.groups.find((g) => keyText(g.key) === name)?.trends;
              return trends && trends.samples > 0 ? pick(trends) : null;
            }),
          }));
        const forecasts = (resource: "cpu" | "memory"): Forecast[] =>
          answer.forecast.groups
            .filter((g) => names.has(keyText(g.key)))
            .map((g) => {
              const fullAt = g.forecast?.[resource === "cpu" ? "cpuRequestsFullAt" : "memoryRequestsFullAt"];
              return { name: keyText(g.key), level: g[resource].allocatable, fullAt: fullAt ? Date.parse(fullAt) : null };
            })
            .sort((a, b) => a.name.localeCompare(b.name));
        setData({ times, cpu: series((t) => t.cpu[measure]), memory: series((t) => t.memory[measure]), cpuForecast: forecasts("cpu"), memoryForecast: forecasts("memory") });
        setError(undefined);
      },
      (e) => current && setError(e),
    );
    return () => void (current = false);
  }, [by, period, measure]);

  return (
    <section aria-labelledby="trends-title" data-report="trends">
      <h2 id="trends-title">Trends</h2>
      <form class="controls" onSubmit={(event) => event.preventDefault()}>
        <GroupBySelect value={by} onChange={setBy} />
        <PeriodSelect value={period} onChange={setPeriod} />
        <label>
          Of{" "}
          <select value={measure} onChange={(event) => setMeasure((event.target as HTMLSelectElement).value as typeof measure)}>
            <option value="p95Usage">usage</option>
            <option value="p95Requests">requests</option>
          </select>
        </label>
      </form>
      <ErrorNote error={error} />
      {data &&
        (data.cpu.every((s) => s.values.every((v) => v === null)) ? (
          <p class="muted" data-empty="true">
            No samplings in this period yet (the service samples every <code>--trends-interval</code> seconds).
          </p>
        ) : (
          <div class="charts">
            <LineChart
              title={`CPU ${measure === "p95Usage" ? "usage" : "requests"}, 95th percentile per window`}
              times={data.times}
              series={data.cpu}
              format={cores}
              forecasts={measure === "p95Requests" ? data.cpuForecast : []}
            />
            <LineChart
              title={`Memory ${measure === "p95Usage" ? "usage" : "requests"}, 95th percentile per window`}
              times={data.times}
              series={data.memory}
              format={bytes}
              forecasts={measure === "p95Requests" ? data.memoryForecast : []}
            />
          </div>
        ))}
    </section>
  );
}
