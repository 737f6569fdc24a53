// Availability per group as bars, and an outage strip per node that had outages, from the
// recorded Ready transitions of the period.
import { useEffect, useState } from "preact/hooks";
import { gql, type ApiError } from "../api";
import { Bar } from "../bar";
import { ErrorNote } from "../error-note";
import { availability, duration } from "../format";
import { OutageStrips, type Span } from "./charts";
import { GroupBySelect, groupingVariable, keyText, PERIODS, PeriodSelect } from "./report-controls";

const AVAILABILITY = `query Availability($from: DateTime!, $to: DateTime!, $groupBy: [ReportGrouping!]) {
  availabilityReport(from: $from, to: $to, groupBy: $groupBy) {
    groups { key { value } nodeCount observedSeconds unobservedSeconds readySeconds availability outages longestOutageSeconds mttrSeconds flaps maintenanceSeconds }
    total { nodeCount observedSeconds unobservedSeconds readySeconds availability outages mttrSeconds }
    nodes { cluster node deleted observedSeconds unobservedSeconds availability outages }
    clustersNotConfigured
  }
  conditionTransitions(filter: { type: "Ready", since: $from, until: $to }, first: 5000) {
    edges { node { cluster node from to at } }
  }
}`;

interface NodeFigures {
  cluster: string;
  node: string;
  deleted: boolean;
  observedSeconds: number;
  unobservedSeconds: number;
  availability: number | null;
  outages: number;
}

/** Ready time of the observed time, and how much of the period nobody observed: never shown as available. */
function observedText(f: { availability: number | null; unobservedSeconds: number }): string {
  const shown = f.availability === null ? "not observed" : `${availability(f.availability)} of observed time available`;
  return f.unobservedSeconds > 0 ? `${shown}, ${duration(f.unobservedSeconds)} unobserved` : shown;
}

/** Node-seconds of the period, observed or not (at least one, so an empty group divides safely). */
const periodSeconds = (f: { observedSeconds: number; unobservedSeconds: number }) => Math.max(1, f.observedSeconds + f.unobservedSeconds);

/** Strips for at most this many nodes, those with the lowest availability first. */
const MOST_STRIPS = 40;

interface Group {
  key: { value: string | null }[];
  nodeCount: number;
  observedSeconds: number;
  unobservedSeconds: number;
  readySeconds: number;
  availability: number | null;
  outages: number;
  longestOutageSeconds: number;
  mttrSeconds: number | null;
  flaps: number;
  maintenanceSeconds: number;
}
interface Answer {
  availabilityReport: { groups: Group[]; total: Group; nodes: NodeFigures[]; clustersNotConfigured: string[] | null };
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
  const notConfigured = new Set(report?.clustersNotConfigured ?? []);
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
            {report.total.nodeCount} nodes, {observedText(report.total)}, {report.total.outages} {report.total.outages === 1 ? "outage" : "outages"}
            {report.total.mttrSeconds !== null ? `, mean time to recover ${duration(report.total.mttrSeconds)}` : ""}.
          </p>
          <div class="bars">
            {report.groups.map((g) => (
              <Bar
                key={keyText(g.key)}
                title={keyText(g.key)}
                whole={1}
                wholeText={`${g.nodeCount} ${g.nodeCount === 1 ? "node" : "nodes"} · ${g.outages} ${g.outages === 1 ? "outage" : "outages"} (longest ${duration(g.longestOutageSeconds)}) · ${g.flaps} flaps · maintenance ${duration(g.maintenanceSeconds)}`}
                parts={[
                  // Shares of the whole period: the unobserved part is its own bar, not counted as available.
                  {
                    label: "available",
                    value: g.readySeconds / periodSeconds(g),
                    kind: "bar-headroom",
                    text: g.availability === null ? "not observed" : `${availability(g.availability)} of observed`,
                  },
                  { label: "unobserved", value: g.unobservedSeconds / periodSeconds(g), kind: "bar-unobserved", text: `${duration(g.unobservedSeconds)} unobserved` },
                ]}
              />
            ))}
          </div>
          {notConfigured.size > 0 && (
            <p class="warn" data-clusters-not-configured={[...notConfigured].join(",")}>
              Not configured any more (recorded history only): {[...notConfigured].join(", ")}
            </p>
          )}
          <h3>Outages per node</h3>
          {worst.length ? (
            <OutageStrips
              from={answer!.from}
              to={answer!.to}
              rows={worst.map((n) => ({
                name: `${n.cluster}/${n.node}${n.deleted ? " (deleted)" : ""}${notConfigured.has(n.cluster) ? " (not configured)" : ""}`,
                spans: outageSpans(
                  transitions.filter((t) => t.cluster === n.cluster && t.node === n.node),
                  answer!.from,
                  answer!.to,
                ),
                text: `${observedText(n)}, ${n.outages} ${n.outages === 1 ? "outage" : "outages"}`,
              }))}
            />
          ) : null}
          {worst.length ? (
            <ul class="outage-list">
              {worst.map((n) => (
                <li key={`${n.cluster}/${n.node}`} data-node={`${n.cluster}/${n.node}`} data-not-configured={String(notConfigured.has(n.cluster))}>
                  <strong>
                    {n.cluster}/{n.node}
                  </strong>
                  {n.deleted ? " (deleted)" : ""}
                  {notConfigured.has(n.cluster) ? <span class="warn"> (cluster not configured: recorded history only)</span> : ""}: {observedText(n)}, {n.outages}{" "}
                  {n.outages === 1 ? "outage" : "outages"}
                </li>
              ))}
            </ul>
          ) : (
            <p class="muted">No node had an outage in this period.</p>
          )}
        </>
      )}
    </section>
  );
}
