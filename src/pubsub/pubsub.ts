/**
 * The publish/subscribe seam between the replica that records history and every replica
 * that serves subscribers. Messages are small (ids, not rows: PostgreSQL's NOTIFY takes at
 * most 8000 bytes); receivers load what they need. Delivery is in publish order.
 */
export interface PubSub {
  publish(message: HistoryNotice): Promise<void>;
  /** Calls `handler` for every message, from this replica and the others; returns the unsubscribe. */
  subscribe(handler: (message: HistoryNotice) => void): () => void;
  close(): Promise<void>;
}

/** What the recorder wrote in one batch, per node: enough for subscribers to load and filter. */
export interface HistoryNotice {
  cluster: string;
  node: string;
  /** Ids of the condition_transition rows written. */
  transitions: string[];
  /** Ids of the maintenance_event rows written. */
  maintenance: string[];
  /** The node's schedulability after the change, when it changed. */
  unschedulable?: boolean;
  /** The node was deleted. */
  deleted?: boolean;
  /** A not-ready or unreachable NoExecute taint came or went: an eviction countdown started or ended. */
  evictionCountdown?: boolean;
  /** The id of a drain operation whose state changed. */
  drain?: string;
  /** The replica that published a drain notice, so it can skip its own. */
  from?: string;
  at: string;
}

/** One process, one replica: an in-memory fan-out. */
export class InProcessPubSub implements PubSub {
  private readonly handlers = new Set<(message: HistoryNotice) => void>();

  async publish(message: HistoryNotice): Promise<void> {
    for (const handler of this.handlers) handler(message);
  }

  subscribe(handler: (message: HistoryNotice) => void): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  async close(): Promise<void> {
    this.handlers.clear();
  }
}
