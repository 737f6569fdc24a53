// The wallboard: every node of every cluster as a tile, grouped as chosen, filtered by a
// label selector (applied by the service, to the snapshot and the subscription alike) and by
// name (here, as one types), live from subscriptions.
import { useEffect, useRef, useState } from "preact/hooks";
import type { ApiError } from "../api";
import { clock, DIMENSION_NAMES, emptyCounts, nameMatcher, type ClusterState, type Counts, type Dimension, type TileNode } from "./fleet-model";
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
  return { levels, labelKey, selector: params.get("selector") ?? "", name: params.get("name") ?? "", names: params.get("names") === "1" };
}

/**
 * The dimensions the levels make. A label level whose key is not typed yet keeps grouping by
 * what that level held before (`held`), so choosing "a label…" never merges clusters unseen.
 */
function dimensionsOf(levels: Level[], labelKey: string, held: readonly Level[] = []): Dimension[] {
  const dimensions: Dimension[] = [];
  levels.forEach((level, index) => {
    const keyless = level === "LABEL" && !labelKey.trim();
    const effective = keyless ? (held[index] ?? "") : level;
    if (!effective || (keyless && effective === "LABEL")) return;
    const dimension: Dimension = effective === "LABEL" ? `label:${labelKey.trim()}` : effective;
    if (!dimensions.includes(dimension)) dimensions.push(dimension);
  });
  return dimensions;
}

export function FleetView() {
  const initial = useRef(fromAddress()).current;
  const [levels, setLevels] = useState<Level[]>(initial.levels);
  const [labelKey, setLabelKey] = useState(initial.labelKey);
  const [selectorDraft, setSelectorDraft] = useState(initial.selector);
  const [selector, setSelector] = useState(initial.selector);
  const [name, setName] = useState(initial.name);
  const [names, setNames] = useState(initial.names);
  // What each level held before "a label…" was chosen for it, used until a key is typed.
  const [held, setHeld] = useState<Level[]>([]);
  const [clusters, setClusters] = useState<ClusterState[]>([]);
  const [error, setError] = useState<ApiError | undefined>();
  const [status, setStatus] = useState<{ loaded: boolean; shown: number; counts: Counts }>({ loaded: false, shown: 0, counts: emptyCounts() });
  const tilesRef = useRef<HTMLDivElement>(null);
  const grid = useRef<TileGrid | undefined>(undefined);
  const nodes = useRef<ReadonlyMap<string, TileNode> | undefined>(undefined);
  const dimensions = dimensionsOf(levels, labelKey, held);
  const dimensionsKey = dimensions.join(",");
  // What the subscription's callbacks read when the fleet reloads.
  const dimensionsRef = useRef(dimensions);
  const nameRef = useRef(name);
  dimensionsRef.current = dimensions;
  nameRef.current = name;

  useEffect(() => {
    grid.current = new TileGrid(tilesRef.current!);
    grid.current.onDrawn = (shown, counts) => setStatus({ loaded: true, shown, counts });
    // Every change to a shown node moves the summary line too, not only a full drawing.
    grid.current.onCounts = (counts) => setStatus((s) => ({ ...s, shown: counts.total, counts }));
  }, []);

  useEffect(() => grid.current!.setNames(names), [names]);

  // Follow the fleet; a new selector is a new snapshot and a new subscription.
  useEffect(() => {
    setError(undefined);
    setStatus((s) => ({ ...s, loaded: false }));
    const current = () => ({ dimensions: dimensionsRef.current, visible: nameMatcher(nameRef.current) });
    return followFleet(selector, {
      loaded(fleet) {
        nodes.current = fleet;
        const { dimensions, visible } = current();
        grid.current!.show(fleet, dimensions, visible);
      },
      changed: (id, node) => grid.current!.update(id, node),
      clusters(states) {
        grid.current!.setClusters(states);
        setClusters([...states.values()]);
      },
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
    if (names) params.set("names", "1");
    history.replaceState(history.state, "", `${location.pathname}?${params}`);
  }, [dimensionsKey, name, selector, names]);

  const setLevel = (index: number, value: Level) => {
    if (value === "LABEL") setHeld((old) => Object.assign([...old], { [index]: old[index] && levels[index] === "LABEL" ? old[index] : levels[index] }));
    setLevels((old) => old.map((level, i) => (i === index ? value : level)));
  };
  const { counts } = status;
  const stale = clusters.filter((c) => c.disconnectedSince !== null).sort((a, b) => (a.name < b.name ? -1 : 1));
  const keyless = levels.includes("LABEL") && !labelKey.trim();

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
              Label key{" "}
              <input
                value={labelKey}
                placeholder="e.g. team"
                aria-invalid={keyless}
                aria-describedby={keyless ? "label-key-help" : undefined}
                onInput={(event) => setLabelKey((event.target as HTMLInputElement).value)}
              />
            </label>
          )}
          {keyless && (
            <span id="label-key-help" class="warn" data-label-key-missing="true">
              Type a label key; until then that level groups as before.
            </span>
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
        <label>
          <input type="checkbox" name="names" checked={names} onChange={(event) => setNames((event.target as HTMLInputElement).checked)} /> Text on tiles
        </label>
      </form>
      <ErrorNote error={error} />
      {stale.length > 0 && (
        <div class="stale-banner" role="alert" data-stale-clusters={stale.map((c) => c.name).join(",")}>
          {stale.map((c) => (
            <p key={c.name}>
              Cluster <strong>{c.name}</strong> is not live since {clock(c.disconnectedSince!)}
              {c.lastError ? ` (${c.lastError})` : ""}: its nodes show their last known state.
            </p>
          ))}
        </div>
      )}
      <Legend />
      <p
        class="totals"
        role="status"
        aria-live="polite"
        data-loaded={String(status.loaded)}
        data-summary
        data-nodes={status.shown}
        data-ready={counts.ready}
        data-notready={counts.notReady}
        data-unknown={counts.unknown}
        data-cordoned={counts.cordoned}
        data-draining={counts.draining}
      >
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
      <li>
        <span class="tile sample" data-ready="true" data-stale="true" aria-hidden="true" /> stale: last known, its cluster not live (faded, dotted)
      </li>
    </ul>
  );
}
