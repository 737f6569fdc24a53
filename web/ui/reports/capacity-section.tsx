// Capacity per group as bars: allocatable, requests, usage and headroom of CPU and memory,
// and how many pods of a chosen shape still fit, counted node by node by the service.
import { useEffect, useState } from "preact/hooks";
import { gql, type ApiError } from "../api";
import { Bar } from "../bar";
import { ErrorNote } from "../error-note";
import { bytes, cores, percent } from "../format";
import { GroupBySelect, groupingVariable, keyText } from "./report-controls";

const CAPACITY = `query Capacity($groupBy: [ReportGrouping!], $podShape: PodShapeInput) {
  capacityReport(groupBy: $groupBy, podShape: $podShape) {
    incompleteClusters
    groups { key { value } nodeCount readyNodeCount schedulableNodeCount
      cpu { allocatable requests usage headroom } memory { allocatable requests usage headroom }
      pods { allocatable requests headroom } fit { pods nodesWithRoom nodesExcluded } }
  }
}`;

interface Figures {
  allocatable: number;
  requests: number;
  usage: number | null;
  headroom: number;
}
interface Group {
  key: { value: string | null }[];
  nodeCount: number;
  readyNodeCount: number;
  schedulableNodeCount: number;
  cpu: Figures;
  memory: Figures;
  pods: Figures;
  fit: { pods: number; nodesWithRoom: number; nodesExcluded: number } | null;
}

function resourceBar(title: string, figures: Figures, show: (n: number) => string) {
  const of = (n: number) => (figures.allocatable > 0 ? ` (${percent(n / figures.allocatable)})` : "");
  const parts = [
    { label: "requests", value: figures.requests, kind: "bar-requests", text: `${show(figures.requests)}${of(figures.requests)}` },
    ...(figures.usage !== null ? [{ label: "usage", value: figures.usage, kind: "bar-usage", text: `${show(figures.usage)}${of(figures.usage)}` }] : []),
    { label: "headroom", value: Math.max(0, figures.headroom), kind: "bar-headroom", text: `${show(figures.headroom)}${of(figures.headroom)}` },
  ];
  return <Bar title={title} whole={figures.allocatable} wholeText={`allocatable ${show(figures.allocatable)}`} parts={parts} />;
}

export function CapacitySection() {
  const [by, setBy] = useState("NODE_POOL");
  const [cpu, setCpu] = useState("500m");
  const [memory, setMemory] = useState("1Gi");
  const [shape, setShape] = useState({ cpu: "500m", memory: "1Gi" });
  const [groups, setGroups] = useState<Group[] | undefined>();
  const [incomplete, setIncomplete] = useState<string[]>([]);
  const [error, setError] = useState<ApiError | undefined>();

  useEffect(() => {
    let current = true;
    gql<{ capacityReport: { groups: Group[]; incompleteClusters: string[] } }>(CAPACITY, { groupBy: groupingVariable(by), podShape: shape }).then(
      (data) => {
        if (!current) return;
        setGroups(data.capacityReport.groups);
        setIncomplete(data.capacityReport.incompleteClusters);
        setError(undefined);
      },
      (e) => current && setError(e),
    );
    return () => void (current = false);
  }, [by, shape]);

  const mostFit = Math.max(1, ...(groups ?? []).map((g) => g.fit?.pods ?? 0));
  return (
    <section aria-labelledby="capacity-title" data-report="capacity">
      <h2 id="capacity-title">Capacity</h2>
      <form class="controls" onSubmit={(event) => (event.preventDefault(), setShape({ cpu: cpu.trim(), memory: memory.trim() }))}>
        <GroupBySelect value={by} onChange={setBy} />
        <fieldset>
          <legend>Pod shape</legend>
          <label>
            CPU <input name="cpu" size={6} value={cpu} onInput={(event) => setCpu((event.target as HTMLInputElement).value)} />
          </label>{" "}
          <label>
            Memory <input name="memory" size={6} value={memory} onInput={(event) => setMemory((event.target as HTMLInputElement).value)} />
          </label>
        </fieldset>
        <button type="submit">Count pods that fit</button>
      </form>
      <ErrorNote error={error} />
      {incomplete.length > 0 && <p class="warn">Not synced, left out: {incomplete.join(", ")}</p>}
      {groups?.map((group) => (
        <article class="report-group" key={keyText(group.key)} data-group={keyText(group.key)}>
          <h3>
            {keyText(group.key)}{" "}
            <span class="muted">
              {group.nodeCount} {group.nodeCount === 1 ? "node" : "nodes"}, {group.readyNodeCount} Ready, {group.schedulableNodeCount} schedulable
            </span>
          </h3>
          <div class="bars">
            {resourceBar("CPU", group.cpu, cores)}
            {resourceBar("Memory", group.memory, bytes)}
            <Bar
              title={`Pods of ${shape.cpu} CPU and ${shape.memory} memory that fit`}
              whole={mostFit}
              wholeText={group.fit ? `on ${group.fit.nodesWithRoom} nodes; ${group.fit.nodesExcluded} left out (cordoned, not Ready or tainted)` : ""}
              parts={[{ label: "fit", value: group.fit?.pods ?? 0, kind: "bar-headroom", text: `${group.fit?.pods ?? 0} pods` }]}
            />
          </div>
        </article>
      ))}
    </section>
  );
}
