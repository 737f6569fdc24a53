// Draws the fleet's tiles straight into the DOM, outside Preact: thousands of tiles are built
// once per grouping or filter, and a change to one node touches only its tile and the
// counts of the groups it is in (a few attribute and text writes), so a wallboard of 5,000
// nodes follows its subscriptions without re-rendering anything else.
import { clock, count, describeTile, groupNodes, groupPath, type ClusterState, type Counts, type Dimension, type Group, type TileNode } from "./fleet-model";

interface GroupView {
  counts: Counts;
  header: HTMLElement;
  summary: HTMLElement;
}

interface Placement {
  tile: HTMLAnchorElement;
  node: TileNode;
  groups: GroupView[];
}

const GLYPH: Record<TileNode["ready"], string> = { true: "", false: "✕", unknown: "?" };

/** The page a tile opens. */
export const nodeHref = (node: { cluster: string; name: string }) => `/ui/nodes/${encodeURIComponent(node.cluster)}/${encodeURIComponent(node.name)}`;

function summaryText(counts: Counts): string {
  const parts = [`${counts.total} ${counts.total === 1 ? "node" : "nodes"}`, `${counts.ready} Ready`];
  if (counts.notReady) parts.push(`${counts.notReady} NotReady`);
  if (counts.unknown) parts.push(`${counts.unknown} Unknown`);
  if (counts.cordoned) parts.push(`${counts.cordoned} cordoned`);
  if (counts.draining) parts.push(`${counts.draining} draining`);
  return parts.join(" · ");
}

/** The clusters a group's nodes belong to, at any depth. */
function clustersIn(group: Group, into = new Set<string>()): Set<string> {
  for (const node of group.nodes) into.add(node.cluster);
  for (const child of group.children) clustersIn(child, into);
  return into;
}

/** What a group's header says of the clusters in it that are not live (empty when all are). */
function staleText(stale: ClusterState[]): string {
  const oldest = stale.map((c) => c.disconnectedSince!).sort()[0]!;
  const why = stale.length === 1 && stale[0]!.lastError ? `: ${stale[0]!.lastError}` : "";
  const who = `cluster${stale.length === 1 ? "" : "s"} ${stale.map((c) => c.name).join(", ")}`;
  return `⚠ last known state: ${who} not live since ${clock(oldest)}${why}`;
}

function paintTile(tile: HTMLAnchorElement, node: TileNode, stale: ClusterState | undefined, names: boolean): void {
  tile.dataset.ready = node.ready;
  tile.dataset.cordoned = String(node.cordoned);
  tile.dataset.evictionCountdown = String(Boolean(node.countdown));
  tile.dataset.draining = String(node.draining);
  tile.dataset.stale = String(stale !== undefined);
  const text = describeTile(node, stale?.disconnectedSince ?? undefined);
  tile.setAttribute("aria-label", text);
  tile.title = text;
  tile.textContent = names ? `${GLYPH[node.ready]}${GLYPH[node.ready] ? " " : ""}${node.name}` : GLYPH[node.ready];
}

export class TileGrid {
  private readonly placed = new Map<string, Placement>();
  private dimensions: readonly Dimension[] = [];
  private visible: (node: TileNode) => boolean = () => true;
  private nodes: ReadonlyMap<string, TileNode> = new Map();
  private pending = 0;
  private focusId: string | undefined;
  /** The clusters whose state is not live, by name. */
  private stale = new Map<string, ClusterState>();
  private names = false;
  /** Whether `show` was called: before it there is nothing to draw, and a drawing would count no nodes as loaded. */
  private given = false;
  /** Counts over the tiles shown, kept as nodes change. */
  private total: Counts | undefined;
  /** Called after each full drawing with the number of tiles drawn (the bench waits on it). */
  onDrawn: (tiles: number, total: Counts) => void = () => {};
  /** Called after each change to the counts over the tiles shown (a new object each time). */
  onCounts: (total: Counts) => void = () => {};

  constructor(private readonly root: HTMLElement) {
    root.addEventListener("keydown", (event) => this.onKey(event));
    root.addEventListener("focusin", (event) => {
      const tile = (event.target as HTMLElement).closest<HTMLAnchorElement>("a.tile");
      if (tile) this.rove(tile);
    });
  }

  /** Replaces everything: the nodes, how they are grouped and which are shown; draws at the next frame. */
  show(nodes: ReadonlyMap<string, TileNode>, dimensions: readonly Dimension[], visible: (node: TileNode) => boolean): void {
    this.nodes = nodes;
    this.dimensions = dimensions;
    this.visible = visible;
    this.given = true;
    this.scheduleDraw();
  }

  /** Which clusters are live: the tiles and groups of one that is not are marked stale, with since when. */
  setClusters(states: ReadonlyMap<string, ClusterState>): void {
    const stale = new Map([...states].filter(([, state]) => state.disconnectedSince !== null));
    const key = (m: Map<string, ClusterState>) => JSON.stringify([...m].sort());
    if (key(stale) === key(this.stale)) return;
    this.stale = stale;
    this.scheduleDraw();
  }

  /** Names mode: each tile shows its node's name, for a wall screen read from afar. */
  setNames(names: boolean): void {
    if (names === this.names) return;
    this.names = names;
    this.root.classList.toggle("names", names);
    this.scheduleDraw();
  }

  /**
   * One node changed (`node`), or went away (undefined): its tile and its groups' counts are
   * patched in place; only a node that moves between groups, appears or disappears from the
   * view makes the whole view be drawn again (at the next frame, however many such changes).
   */
  update(id: string, node: TileNode | undefined): void {
    if (this.pending) return; // a full drawing is coming and will read the node map
    const placement = this.placed.get(id);
    if (!placement) {
      if (node && this.visible(node)) this.scheduleDraw();
      return;
    }
    if (!node || !this.visible(node) || groupPath(this.dimensions, node).join("\u0000") !== groupPath(this.dimensions, placement.node).join("\u0000")) {
      this.scheduleDraw();
      return;
    }
    for (const group of placement.groups) {
      count(group.counts, placement.node, -1);
      count(group.counts, node, 1);
      group.header.dataset.count = String(group.counts.total);
      group.summary.textContent = summaryText(group.counts);
    }
    if (this.total) {
      const total = { ...this.total };
      count(total, placement.node, -1);
      count(total, node, 1);
      this.total = total;
      this.onCounts(total);
    }
    placement.node = node;
    paintTile(placement.tile, node, this.stale.get(node.cluster), this.names);
  }

  private scheduleDraw(): void {
    if (this.given && !this.pending) this.pending = requestAnimationFrame(() => this.draw());
  }

  private draw(): void {
    this.pending = 0;
    this.placed.clear();
    const shown: TileNode[] = [];
    for (const node of this.nodes.values()) if (this.visible(node)) shown.push(node);
    const tree = groupNodes(shown, this.dimensions);
    const fragment = document.createDocumentFragment();
    if (this.dimensions.length) for (const group of tree.children) fragment.append(this.drawGroup(group, [], 0));
    else fragment.append(this.drawTiles(tree.nodes, []));
    this.root.replaceChildren(fragment);
    // One tile in the tab order (the last one focused, else the first); arrows move between them.
    const focus = (this.focusId && this.placed.get(this.focusId)?.tile) || this.root.querySelector<HTMLAnchorElement>("a.tile");
    if (focus) focus.tabIndex = 0;
    this.total = { ...tree.counts };
    this.onDrawn(shown.length, this.total);
    // For `npm run bench:ui`: when the tiles were first painted (the frame after this one).
    requestAnimationFrame(() => setTimeout(() => performance.mark("ni:tiles-painted", { detail: shown.length })));
  }

  private drawGroup(group: Group, parents: GroupView[], level: number): HTMLElement {
    const section = document.createElement("section");
    section.className = `group level-${level}`;
    const header = document.createElement(level === 0 ? "h2" : level === 1 ? "h3" : "h4");
    header.className = "group-header";
    header.dataset.group = group.path.join("/");
    header.dataset.count = String(group.counts.total);
    const name = document.createElement("span");
    name.className = "group-name";
    name.textContent = group.path[group.path.length - 1]!;
    const summary = document.createElement("span");
    summary.className = "group-summary";
    summary.textContent = summaryText(group.counts);
    header.append(name, summary);
    const stale = [...clustersIn(group)].sort().flatMap((cluster) => this.stale.get(cluster) ?? []);
    header.dataset.stale = String(stale.length > 0);
    // Said once, on the highest group it concerns; the groups inside are marked.
    if (stale.length && parents.at(-1)?.header.dataset.stale !== "true") {
      const note = document.createElement("span");
      note.className = "stale-note";
      note.textContent = staleText(stale);
      header.append(note);
    }
    section.append(header);
    const view: GroupView = { counts: { ...group.counts }, header, summary };
    const views = [...parents, view];
    if (group.children.length) for (const child of group.children) section.append(this.drawGroup(child, views, level + 1));
    else section.append(this.drawTiles(group.nodes, views));
    return section;
  }

  private drawTiles(nodes: TileNode[], groups: GroupView[]): HTMLElement {
    const list = document.createElement("div");
    list.className = "tiles";
    for (const node of nodes) {
      const tile = document.createElement("a");
      tile.className = "tile";
      tile.href = nodeHref(node);
      tile.dataset.node = node.id;
      tile.tabIndex = -1;
      paintTile(tile, node, this.stale.get(node.cluster), this.names);
      list.append(tile);
      this.placed.set(node.id, { tile, node, groups });
    }
    return list;
  }

  private rove(tile: HTMLAnchorElement): void {
    const id = tile.dataset.node;
    if (id === this.focusId && tile.tabIndex === 0) return;
    for (const other of this.root.querySelectorAll<HTMLAnchorElement>('a.tile[tabindex="0"]')) other.tabIndex = -1;
    tile.tabIndex = 0;
    this.focusId = id;
  }

  /** Arrow keys move between tiles (left/right in reading order, up/down to the tile above or below), Home/End to the ends. */
  private onKey(event: KeyboardEvent): void {
    const current = (event.target as HTMLElement).closest<HTMLAnchorElement>("a.tile");
    if (!current) return;
    const tiles = [...this.root.querySelectorAll<HTMLAnchorElement>("a.tile")];
    const at = tiles.indexOf(current);
    let next: HTMLAnchorElement | undefined;
    if (event.key === "ArrowRight") next = tiles[at + 1];
    else if (event.key === "ArrowLeft") next = tiles[at - 1];
    else if (event.key === "Home") next = tiles[0];
    else if (event.key === "End") next = tiles[tiles.length - 1];
    else if (event.key === "ArrowDown" || event.key === "ArrowUp") next = this.vertical(tiles, at, event.key === "ArrowDown" ? 1 : -1);
    else return;
    event.preventDefault();
    if (next) {
      this.rove(next);
      next.focus();
    }
  }

  /** The nearest tile in the next row down (or up): the row's tile closest to this one's column. */
  private vertical(tiles: HTMLAnchorElement[], at: number, step: 1 | -1): HTMLAnchorElement | undefined {
    const from = tiles[at]!.getBoundingClientRect();
    let rowTop: number | undefined;
    let best: HTMLAnchorElement | undefined;
    let bestDistance = Infinity;
    for (let i = at + step; i >= 0 && i < tiles.length; i += step) {
      const box = tiles[i]!.getBoundingClientRect();
      if (box.top === from.top) continue;
      rowTop ??= box.top;
      if (box.top !== rowTop) break;
      const distance = Math.abs(box.left - from.left);
      if (distance < bestDistance) [best, bestDistance] = [tiles[i], distance];
    }
    return best;
  }
}
