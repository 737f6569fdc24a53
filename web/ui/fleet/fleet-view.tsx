// The wallboard: every node of every cluster as a tile, grouped as chosen, filtered by a
// label selector (applied by the service, to the snapshot and the subscription alike) and by
// name (here, as one types), live from subscriptions.
import { useEffect, useRef, useState } from "preact/hooks";
import type { ApiError } from "../api";
import { DIMENSION_NAMES, emptyCounts, nameMatcher, type Counts, type Dimension, type TileNode } from "./fleet-model";
import { followFleet } from "./fleet-source";
import { TileGrid } from "./tile-grid";
import { ErrorNote } from "../error-note";

type Level = "" | Exclude<Dimension, `label:${string}`> | "LABEL";
const LEVEL_CHOICES: [Level, string][] = [["", "nothing"], ...(Object.entries(DIMENSION_NAMES) as [Level, string][]), ["LABEL", "a label…"]];

/** The view's settings live in the address, so a wallboard's URL keeps its grouping and filters. */
function fromAddress() {
  const params = new URLSearchParams(location.search);
  const group = params.get("group")?.split(",") ?? ["CLUSTER", "NODE_POOL", "ZONE"];
  const levels = [0, 1, 2].map((i) => (group[i]?.startsWith("label:") ? "LABEL" : ((group[i] ?? "") as Level)));
  const labelKey = group.find((g) => g.startsWith("label:"))?.slice("label:".length) ?? "";
  return { levels, labelKey, selector: params.get("selector") ?? "", name: params.get("name") ?? "" };
}

function dimensionsOf(levels: Level[], labelKey: string): Dimension[] {
  const dimensions: Dimension[] = [];
  for (const level of levels) {
    if (!level) continue;
    const dimension: Dimension = level === "LABEL" ? `label:${labelKey.trim()}` : level;
    if (level === "LABEL" && !labelKey.trim()) continue;
    if (!dimensions.includes(dimension)) dimensions.push(dimension);
  }
  return dimensions;
}

export function FleetView() {
  const initial = useRef(fromAddress()).current;
  const [levels, setLevels] = useState<Level[]>(initial.levels);
  const [labelKey, setLabelKey] = useState(initial.labelKey);
  const [selectorDraft, setSelectorDraft] = useState(initial.selector);
  const [selector, setSelector] = useState(initial.selector);
  const [name, setName] = useState(initial.name);
  const [error, setError] = useState<ApiError | undefined>();
  const [status, setStatus] = useState<{ loaded: boolean; shown: number; counts: Counts }>({ loaded: false, shown: 0, counts: emptyCounts() });
  const tilesRef = useRef<HTMLDivElement>(null);
  const grid = useRef<TileGrid | undefined>(undefined);
  const nodes = useRef<ReadonlyMap<string, TileNode> | undefined>(undefined);
  const dimensions = dimensionsOf(levels, labelKey);
  const dimensionsKey = dimensions.join(",");
  // What the subscription's callbacks read when the fleet reloads.
  const levelsRef = useRef(levels);
  const labelKeyRef = useRef(labelKey);
  const nameRef = useRef(name);
  levelsRef.current = levels;
  labelKeyRef.current = labelKey;
  nameRef.current = name;

  useEffect(() => {
    grid.current = new TileGrid(tilesRef.current!);
    grid.current.onDrawn = (shown, counts) => setStatus({ loaded: true, shown, counts });
  }, []);

  // Follow the fleet; a new selector is a new snapshot and a new subscription.
  useEffect(() => {
    setError(undefined);
    setStatus((s) => ({ ...s, loaded: false }));
    const current = () => ({ dimensions: dimensionsOf(levelsRef.current, labelKeyRef.current), visible: nameMatcher(nameRef.current) });
    return followFleet(selector, {
      loaded(fleet) {
        nodes.current = fleet;
        const { dimensions, visible } = current();
        grid.current!.show(fleet, dimensions, visible);
      },
      changed: (id, node) => grid.current!.update(id, node),
      failed: setError,
    });
  }, [selector]);

  // Regroup or refilter what is loaded, without asking the service again.
  useEffect(() => {
    if (nodes.current) grid.current!.show(nodes.current, dimensions, nameMatcher(name));
    const params = new URLSearchParams();
    params.set("group", dimensionsKey);
    if (selector) params.set("selector", selector);
    if (name) params.set("name", name);
    history.replaceState(history.state, "", `${location.pathname}?${params}`);
  }, [dimensionsKey, name, selector]);

  const setLevel = (index: number, value: Level) => setLevels((old) => old.map((level, i) => (i === index ? value : level)));
  const { counts } = status;

  return (
    <main id="main" class="fleet" aria-labelledby="fleet-title">
      <h1 id="fleet-title" tabIndex={-1}>Fleet</h1>
      <form class="controls" onSubmit={(event) => (event.preventDefault(), setSelector(selectorDraft))}>
        <fieldset class="grouping">
          <legend>Group by</legend>
          {levels.map((level, index) => (
            <label key={index}>
              <span class="visually-hidden">Grouping level {index + 1}</span>
              <select value={level} onChange={(event) => setLevel(index, (event.target as HTMLSelectElement).value as Level)}>
                {LEVEL_CHOICES.map(([value, text]) => (
                  <option value={value}>{text}</option>
                ))}
              </select>
            </label>
          ))}
          {levels.includes("LABEL") && (
            <label>
              Label key <input value={labelKey} placeholder="e.g. team" onInput={(event) => setLabelKey((event.target as HTMLInputElement).value)} />
            </label>
          )}
        </fieldset>
        <label>
          Label selector{" "}
          <input
            name="selector"
            value={selectorDraft}
            placeholder="e.g. node-pool=general,!spot"
            aria-describedby="selector-help"
            onInput={(event) => setSelectorDraft((event.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit">Apply</button>
        <span id="selector-help" class="help">
          Kubernetes syntax, applied by the service
        </span>
        <label>
          Name <input name="name" type="search" value={name} placeholder="part of a name" onInput={(event) => setName((event.target as HTMLInputElement).value)} />
        </label>
      </form>
      <ErrorNote error={error} />
      <Legend />
      <p class="totals" role="status" aria-live="polite" data-loaded={String(status.loaded)}>
        {status.loaded
          ? `${status.shown} nodes shown: ${counts.ready} Ready, ${counts.notReady} NotReady, ${counts.unknown} Unknown; ${counts.cordoned} cordoned, ${counts.draining} draining`
          : "Loading the fleet…"}
      </p>
      <div ref={tilesRef} class="fleet-groups" aria-label="Nodes, grouped; arrow keys move between tiles, Enter opens one" role="region" />
    </main>
  );
}

function Legend() {
  return (
    <ul class="legend" aria-label="Legend">
      <li>
        <span class="tile sample" data-ready="true" aria-hidden="true" /> Ready
      </li>
      <li>
        <span class="tile sample" data-ready="false" aria-hidden="true">
          ✕
        </span>{" "}
        NotReady
      </li>
      <li>
        <span class="tile sample" data-ready="unknown" aria-hidden="true">
          ?
        </span>{" "}
        Unknown
      </li>
      <li>
        <span class="tile sample" data-ready="true" data-cordoned="true" aria-hidden="true" /> cordoned (striped)
      </li>
      <li>
        <span class="tile sample" data-ready="true" data-draining="true" aria-hidden="true" /> draining (ringed)
      </li>
    </ul>
  );
}
