// Keeps the fleet's nodes live: one snapshot over HTTP (every page of `nodes`, and each
// cluster's liveness), then changes from graphql-ws: nodeStatusChanged for readiness and
// cordons, maintenanceEvents for drains starting and ending, clusterStatusChanged for a
// cluster whose watch is lost or back. Never polls; after a lost connection it reloads the
// snapshot, since events may have been missed meanwhile.
import { connected, gql, onReconnect, subscribe, type ApiError } from "../api";
import { TILE_FIELDS, toTile, type ClusterState, type NodeFields, type TileNode } from "./fleet-model";

const CLUSTER_FIELDS = `name disconnectedSince lastError`;

const FLEET = `query Fleet($filter: NodeFilter, $after: String) {
  nodes(filter: $filter, first: 5000, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node { ${TILE_FIELDS} } }
  }
  clusters { ${CLUSTER_FIELDS} }
}`;

const CLUSTERS = `subscription FleetClusters {
  clusterStatusChanged { ${CLUSTER_FIELDS} }
}`;

const STATUS = `subscription FleetStatus($filter: NodeFilter) {
  nodeStatusChanged(filter: $filter) { cluster name unschedulable node { ${TILE_FIELDS} } }
}`;

const DRAINS = `subscription FleetDrains {
  maintenanceEvents { cluster node kind }
}`;

interface StatusEvent {
  nodeStatusChanged: { cluster: string; name: string; unschedulable: boolean; node: NodeFields | null };
}
interface ClusterEvent {
  clusterStatusChanged: ClusterState;
}
interface MaintenanceEvent {
  maintenanceEvents: { cluster: string; node: string; kind: string };
}

const DRAIN_ENDS = new Set(["DRAIN_SUCCEEDED", "DRAIN_FAILED", "DRAIN_CANCELLED"]);

export interface FleetListener {
  /** The whole fleet was (re)loaded (always after the subscriptions' connection was acknowledged). */
  loaded(nodes: ReadonlyMap<string, TileNode>): void;
  /** One node changed (or was deleted: undefined). */
  changed(id: string, node: TileNode | undefined): void;
  /** Every cluster's liveness: at each (re)load, and whenever one changes. */
  clusters(states: ReadonlyMap<string, ClusterState>): void;
  failed(error: ApiError): void;
}

/** Starts following the nodes matching `labelSelector` (all when empty); returns the function that stops it. */
export function followFleet(labelSelector: string, listener: FleetListener): () => void {
  const filter = labelSelector.trim() ? { labelSelector: labelSelector.trim() } : null;
  const nodes = new Map<string, TileNode>();
  const clusters = new Map<string, ClusterState>();
  // Events that arrive while a snapshot loads are applied after it (they are newer).
  let loading = true;
  let queued: (() => void)[] = [];
  let stopped = false;

  const apply = (change: () => void) => (loading ? queued.push(change) : change());

  const onStatus = ({ nodeStatusChanged: event }: StatusEvent) =>
    apply(() => {
      const id = `${event.cluster}/${event.name}`;
      if (!event.node) {
        nodes.delete(id);
        listener.changed(id, undefined);
        return;
      }
      const tile = toTile(event.node);
      nodes.set(id, tile);
      listener.changed(id, tile);
    });

  const onMaintenance = ({ maintenanceEvents: event }: MaintenanceEvent) =>
    apply(() => {
      const id = `${event.cluster}/${event.node}`;
      const node = nodes.get(id);
      if (!node) return;
      const draining = event.kind === "DRAIN_STARTED" ? true : DRAIN_ENDS.has(event.kind) ? false : node.draining;
      const cordoned = event.kind === "CORDONED" ? true : event.kind === "UNCORDONED" ? false : node.cordoned;
      if (draining === node.draining && cordoned === node.cordoned) return;
      const tile = { ...node, draining, cordoned };
      nodes.set(id, tile);
      listener.changed(id, tile);
    });

  const onCluster = ({ clusterStatusChanged: cluster }: ClusterEvent) =>
    apply(() => {
      clusters.set(cluster.name, cluster);
      listener.clusters(clusters);
    });

  async function load(): Promise<void> {
    loading = true;
    const fresh = new Map<string, TileNode>();
    let after: string | null = null;
    let states: ClusterState[] | undefined;
    for (;;) {
      const data: { nodes: { pageInfo: { hasNextPage: boolean; endCursor: string | null }; edges: { node: NodeFields }[] }; clusters: ClusterState[] } = await gql(FLEET, { filter, after });
      states ??= data.clusters;
      for (const { node } of data.nodes.edges) {
        const tile = toTile(node);
        fresh.set(tile.id, tile);
      }
      if (!data.nodes.pageInfo.hasNextPage) break;
      after = data.nodes.pageInfo.endCursor;
    }
    if (stopped) return;
    nodes.clear();
    for (const [id, tile] of fresh) nodes.set(id, tile);
    clusters.clear();
    for (const state of states ?? []) clusters.set(state.name, state);
    listener.clusters(clusters);
    listener.loaded(nodes);
    loading = false;
    const changes = queued;
    queued = [];
    for (const change of changes) change();
  }

  const reload = () => load().catch((error) => listener.failed(error));
  // Subscribed, and the connection acknowledged, before the snapshot is asked for, so no
  // change falls between the two.
  const stops = [
    subscribe<StatusEvent>(STATUS, { filter }, onStatus, listener.failed),
    subscribe<MaintenanceEvent>(DRAINS, {}, onMaintenance, listener.failed),
    subscribe<ClusterEvent>(CLUSTERS, {}, onCluster, listener.failed),
    onReconnect(reload),
  ];
  void connected().then(() => {
    if (!stopped) void reload();
  });
  return () => {
    stopped = true;
    for (const stop of stops) stop();
  };
}
