// Draws the fleet's tiles straight into the DOM, outside Preact: thousands of tiles are built
// once per grouping or filter, and a change to one node touches only its tile and the
// counts of the groups it is in (a few attribute and text writes), so a wallboard of 5,000
// nodes follows its subscriptions without re-rendering anything else.
import { count, describeTile, groupNodes, groupPath, type Counts, type Dimension, type Group, type TileNode } from "./fleet-model";

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

function paintTile(tile: HTMLAnchorElement, node: TileNode): void {
  tile.dataset.ready = node.ready;
  tile.dataset.cordoned = String(node.cordoned);
  tile.dataset.evictionCountdown = String(Boolean(node.countdown));
  tile.dataset.draining = String(node.draining);
  const text = describeTile(node);
  tile.setAttribute("aria-label", text);
  tile.title = text;
  tile.textContent = GLYPH[node.ready];
}

export class TileGrid {
  private readonly placed = new Map<string, Placement>();
  private dimensions: readonly Dimension[] = [];
  private visible: (node: TileNode) => boolean = () => true;
  private nodes: ReadonlyMap<string, TileNode> = new Map();
  private pending = 0;
  private focusId: string | undefined;
  /** Called after each full drawing with the number of tiles drawn (the bench waits on it). */
  onDrawn: (tiles: number, total: Counts) => void = () => {};

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
    placement.node = node;
    paintTile(placement.tile, node);
  }

  private scheduleDraw(): void {
    if (!this.pending) this.pending = requestAnimationFrame(() => this.draw());
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
    this.onDrawn(shown.length, tree.counts);
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
      paintTile(tile, node);
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
