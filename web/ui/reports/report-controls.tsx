// What the three reports share: the grouping dimensions and the periods to choose from.

export const DIMENSIONS: [string, string][] = [
  ["CLUSTER", "cluster"],
  ["NODE_POOL", "node pool"],
  ["ZONE", "zone"],
  ["INSTANCE_TYPE", "instance type"],
  ["ROLE", "role"],
];

export const PERIODS: [number, string][] = [
  [3600, "the last hour"],
  [6 * 3600, "the last 6 hours"],
  [24 * 3600, "the last 24 hours"],
  [7 * 86400, "the last 7 days"],
  [30 * 86400, "the last 30 days"],
];

/** A group's key as people read it: its values joined, a missing one shown as (none). */
export const keyText = (key: { value: string | null }[]) => (key.length ? key.map((k) => k.value ?? "(none)").join(" / ") : "all nodes");

export const groupingVariable = (by: string) => [{ by }];

const selected = (event: Event) => (event.target as HTMLSelectElement).value;

/** The "Group by" choice every report has. */
export function GroupBySelect({ value, onChange }: { value: string; onChange: (by: string) => void }) {
  return (
    <label>
      Group by{" "}
      <select value={value} onChange={(event) => onChange(selected(event))}>
        {DIMENSIONS.map(([dimension, text]) => (
          <option value={dimension}>{text}</option>
        ))}
      </select>
    </label>
  );
}

/** The "Period" choice of the reports over time. */
export function PeriodSelect({ value, onChange }: { value: number; onChange: (seconds: number) => void }) {
  return (
    <label>
      Period{" "}
      <select value={String(value)} onChange={(event) => onChange(Number(selected(event)))}>
        {PERIODS.map(([seconds, text]) => (
          <option value={String(seconds)}>{text}</option>
        ))}
      </select>
    </label>
  );
}
