import pg from "pg";
import type { Logger } from "../log/logger.js";
import type { HistoryNotice, PubSub } from "./pubsub.js";
import { backoffDelay } from "../lifecycle/backoff.js";

const CHANNEL = "node_inventory_history";
/** NOTIFY's payload limit is 8000 bytes; stay clear of it and split larger notices. */
const MAX_PAYLOAD = 7_000;

/**
 * PostgreSQL LISTEN/NOTIFY, so what the leader records reaches subscribers on every replica
 * sharing the database. One dedicated connection listens and reconnects with backoff when it
 * is lost; publishing uses a short-lived pooled connection.
 */
export class PostgresPubSub implements PubSub {
  private readonly handlers = new Set<(message: HistoryNotice) => void>();
  private listener: pg.Client | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  private readonly publisher: pg.Pool;

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
  ) {
    this.publisher = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 5_000 });
    this.publisher.on("error", () => {});
  }

  /** Resolves once listening (or after the first failure, retrying in the background). */
  async start(): Promise<void> {
    await this.listen(0);
  }

  private async listen(failures: number): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 5_000 });
    const reconnect = () => {
      if (this.closed || this.listener !== client) return;
      this.listener = undefined;
      client.end().catch(() => {});
      const delay = backoffDelay({ initialMs: 200, maxMs: 10_000 }, failures + 1);
      this.logger.warn({ retryInMs: delay }, "lost the LISTEN connection: reconnecting");
      this.retry = setTimeout(() => void this.listen(failures + 1), delay);
      this.retry.unref();
    };
    client.on("error", reconnect);
    client.on("end", reconnect);
    client.on("notification", (n) => {
      if (n.channel !== CHANNEL || !n.payload) return;
      let message: HistoryNotice;
      try {
        message = JSON.parse(n.payload) as HistoryNotice;
      } catch {
        return;
      }
      for (const handler of this.handlers) handler(message);
    });
    this.listener = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      if (failures > 0) this.logger.info("LISTEN connection restored");
    } catch {
      reconnect();
    }
  }

  async publish(message: HistoryNotice): Promise<void> {
    for (const part of split(message)) {
      await this.publisher.query("SELECT pg_notify($1, $2)", [CHANNEL, JSON.stringify(part)]);
    }
  }

  subscribe(handler: (message: HistoryNotice) => void): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => {});
    await this.publisher.end().catch(() => {});
    this.handlers.clear();
  }
}

/** A notice too large for one NOTIFY becomes several, each with a share of the ids. */
function split(message: HistoryNotice): HistoryNotice[] {
  if (JSON.stringify(message).length <= MAX_PAYLOAD) return [message];
  const half = (ids: string[]) => [ids.slice(0, Math.ceil(ids.length / 2)), ids.slice(Math.ceil(ids.length / 2))] as const;
  const [t1, t2] = half(message.transitions);
  const [m1, m2] = half(message.maintenance);
  return [...split({ ...message, transitions: t1, maintenance: m1 }), ...split({ ...message, transitions: t2, maintenance: m2, deleted: false })];
}
