// Availability per group as bars, and an outage strip per node that had outages, from the
// recorded Ready transitions of the period.
import { useEffect, useState } from "preact/hooks";
import { gql, type ApiError } from "../api";
import { Bar } from "../bar";
import { ErrorNote } from "../error-note";
import { duration, percent } from "../format";
import { OutageStrips, type Span } from "./charts";
import { GroupBySelect, groupingVariable, keyText, PERIODS, PeriodSelect } from "./report-controls";

const AVAILABILITY = `query Availability($from: DateTime!, $to: DateTime!, $groupBy: [ReportGrouping!]) {
  availabilityReport(from: $from, to: $to, groupBy: $groupBy) {
    groups { key { value } nodeCount availability outages longestOutageSeconds mttrSeconds flaps maintenanceSeconds }
    total { nodeCount availability outages mttrSeconds }
    nodes { cluster node deleted availability outages }
  }
  conditionTransitions(filter: { type: "Ready", since: $from, until: $to }, first: 5000) {
    edges { node { cluster node from to at } }
  }
}`;

/** Strips for at most this many nodes, those with the lowest availability first. */
const MOST_STRIPS = 40;

interface Group {
  key: { value: string | null }[];
  nodeCount: number;
  availability: number | null;
  outages: number;
  longestOutageSeconds: number;
  mttrSeconds: number | null;
  flaps: number;
  maintenanceSeconds: number;
}
interface Answer {
  availabilityReport: { groups: Group[]; total: Group; nodes: { cluster: string; node: string; deleted: boolean; availability: number | null; outages: number }[] };
  conditionTransitions: { edges: { node: { cluster: string; node: string; from: string | null; to: string; at: string } }[] };
}

/**
 * The spans of Ready not True within [from, to), from the period's transitions. The API gives
 * them newest first (by time, then by id): reversed, not sorted again, so two transitions
 * within one second (lastTransitionTime has second precision) stay in the order they happened.
 */
export function outageSpans(transitions: { from: string | null; to: string; at: string }[], from: number, to: number): Span[] {
  const ordered = [...transitions].reverse();
  const spans: Span[] = [];
  let state = ordered[0]?.from ?? "TRUE";
  let since = from;
  for (const t of ordered) {
    const at = Date.parse(t.at);
    if (state !== "TRUE") spans.push({ from: since, to: at, state: state as Span["state"] });
    state = t.to;
    since = at;
  }
  if (state !== "TRUE") spans.push({ from: since, to, state: state as Span["state"] });
  return spans;
}

export function AvailabilitySection() {
  const [by, setBy] = useState("ZONE");
  const [period, setPeriod] = useState(PERIODS[2]![0]);
  const [answer, setAnswer] = useState<{ data: Answer; from: number; to: number } | undefined>();
  const [error, setError] = useState<ApiError | undefined>();

  useEffect(() => {
    let current = true;
    const to = Date.now();
    const from = to - period * 1000;
    gql<Answer>(AVAILABILITY, { from: new Date(from).toISOString(), to: new Date(to).toISOString(), groupBy: groupingVariable(by) }).then(
      (data) => {
        if (!current) return;
        setAnswer({ data, from, to });
        setError(undefined);
      },
      (e) => current && setError(e),
    );
    return () => void (current = false);
  }, [by, period]);

  const report = answer?.data.availabilityReport;
  const worst = (report?.nodes ?? [])
    .filter((n) => n.outages > 0)
    .sort((a, b) => (a.availability ?? 0) - (b.availability ?? 0))
    .slice(0, MOST_STRIPS);
  const transitions = answer?.data.conditionTransitions.edges.map((e) => e.node) ?? [];
  return (
    <section aria-labelledby="availability-title" data-report="availability">
      <h2 id="availability-title">Availability</h2>
      <form class="controls" onSubmit={(event) => event.preventDefault()}>
        <GroupBySelect value={by} onChange={setBy} />
        <PeriodSelect value={period} onChange={setPeriod} />
      </form>
      <ErrorNote error={error} />
      {report && (
        <>
          <p>
            {report.total.nodeCount} nodes, {report.total.availability === null ? "nothing observed" : `${percent(report.total.availability)} available`}, {report.total.outages} {report.total.outages === 1 ? "outage" : "outages"}
            {report.total.mttrSeconds !== null ? `, mean time to recover ${duration(report.total.mttrSeconds)}` : ""}.
          </p>
          <div class="bars">
            {report.groups.map((g) => (
              <Bar
                key={keyText(g.key)}
                title={keyText(g.key)}
                whole={1}
                wholeText={`${g.nodeCount} ${g.nodeCount === 1 ? "node" : "nodes"} · ${g.outages} ${g.outages === 1 ? "outage" : "outages"} (longest ${duration(g.longestOutageSeconds)}) · ${g.flaps} flaps · maintenance ${duration(g.maintenanceSeconds)}`}
                parts={[{ label: "available", value: g.availability ?? 0, kind: "bar-headroom", text: g.availability === null ? "not observed" : percent(g.availability) }]}
              />
            ))}
          </div>
          <h3>Outages per node</h3>
          {worst.length ? (
            <OutageStrips
              from={answer!.from}
              to={answer!.to}
              rows={worst.map((n) => ({
                name: `${n.node}${n.deleted ? " (deleted)" : ""}`,
                spans: outageSpans(
                  transitions.filter((t) => t.cluster === n.cluster && t.node === n.node),
                  answer!.from,
                  answer!.to,
                ),
                text: `${n.availability === null ? "not observed" : percent(n.availability)} available, ${n.outages} ${n.outages === 1 ? "outage" : "outages"}`,
              }))}
            />
          ) : (
            <p class="muted">No node had an outage in this period.</p>
          )}
        </>
      )}
    </section>
  );
}
