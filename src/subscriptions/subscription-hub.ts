import type { ClusterRegistry } from "../cluster/cluster-registry.js";
import type { CachedNode } from "../cluster/model.js";
import type { ConditionTransitionView, HistoryQueries, MaintenanceEventView } from "../history/history-queries.js";
import type { Logger } from "../log/logger.js";
import type { HistoryNotice, PubSub } from "../pubsub/pubsub.js";

/** Nodes' status events as the contract's NodeStatusEvent, before field resolution. */
export interface NodeStatusEvent {
  cluster: string;
  name: string;
  node: CachedNode | null;
  transition: ConditionTransitionView | null;
  unschedulable: boolean;
  at: Date;
}

type Listener<T> = (event: T) => void;

/**
 * Listeners called per turn of the event loop. A call to an idle WebSocket subscriber writes
 * its frame at once (src/graphql/shared-event-execution.ts, deliverNow); any other starts a
 * delivery that runs as microtasks (its queue, execution, graphql-ws, the socket write), and
 * called all at once, thousands of those advance side by side, step by step, so none is
 * written until all have begun and every one's garbage is alive at each collection. A slice
 * at a time, each slice is written out before the next begins, and sockets and HTTP are
 * served in between (a slice of 250 frames is about 5 ms of writes).
 */
const LISTENERS_PER_TURN = 250;

/** Hands `event` to every listener registered now, {@link LISTENERS_PER_TURN} per turn of the event loop. */
async function fanOut<T>(listeners: ReadonlySet<Listener<T>>, event: T): Promise<void> {
  if (listeners.size <= LISTENERS_PER_TURN) {
    for (const listener of listeners) listener(event);
    return;
  }
  // Those registered when the event arrived and still registered: one subscribing meanwhile
  // starts after this event, one gone meanwhile is not called, as when all are called at once.
  const now = [...listeners];
  for (let i = 0; i < now.length; i++) {
    if (i > 0 && i % LISTENERS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
    if (listeners.has(now[i]!)) now[i]!(event);
  }
}

/**
 * Turns the recorder's notices (from this replica or, through PostgreSQL, from the leader)
 * into subscription events: loads the rows they name once per notice, whatever the number of
 * subscribers, and hands each event to every listener in notice order (so per node, in order).
 */
export class SubscriptionHub {
  private readonly statusListeners = new Set<Listener<NodeStatusEvent>>();
  private readonly maintenanceListeners = new Set<Listener<MaintenanceEventView>>();
  private readonly drainListeners = new Set<Listener<string>>();
  private chain: Promise<void> = Promise.resolve();
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly pubsub: PubSub,
    private readonly queries: HistoryQueries,
    private readonly clusters: ClusterRegistry,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.unsubscribe = this.pubsub.subscribe((notice) => {
      // One at a time, in arrival order: events of a node never overtake each other.
      this.chain = this.chain.then(() => this.dispatch(notice)).catch((error) => this.logger.warn({ err: (error as Error).message }, "could not deliver a history notice"));
    });
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    await this.chain;
  }

  onStatus(listener: Listener<NodeStatusEvent>): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  onMaintenance(listener: Listener<MaintenanceEventView>): () => void {
    this.maintenanceListeners.add(listener);
    return () => this.maintenanceListeners.delete(listener);
  }

  /** Called with the id of each drain operation whose state changed (on any replica). */
  onDrain(listener: Listener<string>): () => void {
    this.drainListeners.add(listener);
    return () => this.drainListeners.delete(listener);
  }

  get subscriberCount(): number {
    return this.statusListeners.size + this.maintenanceListeners.size + this.drainListeners.size;
  }

  private async dispatch(notice: HistoryNotice): Promise<void> {
    const wantStatus = this.statusListeners.size > 0;
    const [transitions, events] = await Promise.all([
      wantStatus ? this.queries.transitionsByIds(notice.transitions) : [],
      this.maintenanceListeners.size ? this.queries.eventsByIds(notice.maintenance) : [],
    ]);
    if (wantStatus) {
      const node = notice.deleted ? null : (this.clusters.get(notice.cluster)?.node(notice.node) ?? null);
      const unschedulable = notice.unschedulable ?? node?.unschedulable ?? false;
      const statusEvents: NodeStatusEvent[] = transitions.map((transition) => ({ cluster: notice.cluster, name: notice.node, node, transition, unschedulable, at: transition.at }));
      // A countdown that starts or ends with no condition transition beside it is news of its own.
      if (notice.unschedulable !== undefined || (transitions.length === 0 && (notice.deleted || notice.evictionCountdown))) {
        statusEvents.push({ cluster: notice.cluster, name: notice.node, node, transition: null, unschedulable, at: new Date(notice.at) });
      }
      for (const event of statusEvents) await fanOut(this.statusListeners, event);
    }
    for (const event of events) await fanOut(this.maintenanceListeners, event);
    if (notice.drain) await fanOut(this.drainListeners, notice.drain);
  }
}
