import type { Logger } from "../log/logger.js";
import { MAX_LIST_PAGE_BYTES } from "./cluster-limits.js";
import { KubeApiError, type KubeClient } from "./kube-client.js";
import type { OffThreadWatch } from "./off-thread-pods.js";
import { keyOf } from "./strip.js";
import { INITIAL_EVENTS_END } from "./watch-stream.js";
import { backoffDelay } from "../lifecycle/backoff.js";

export { INITIAL_EVENTS_END };

/** What a reflector feeds: a full replacement after each list, then one change at a time. */
export interface ReflectorSink<T> {
  /** The complete set after a (re)list, keyed by namespace/name; the sink may keep the map itself. */
  replace(items: Map<string, T>): void;
  upsert(key: string, item: T): void;
  remove(key: string): void;
}

export interface ReflectorOptions<T> {
  /** For logs: "nodes", "pods". */
  resource: string;
  /** Collection path, e.g. /api/v1/nodes. */
  path: string;
  client: KubeClient;
  transform(raw: Record<string, any>): T;
  sink: ReflectorSink<T>;
  logger: Logger;
  /** Items per LIST page (limit/continue). */
  pageSize?: number;
  /**
   * Load the initial state with the watch-list protocol (one watch with sendInitialEvents=true,
   * ended by the BOOKMARK annotated k8s.io/initial-events-end) when the server supports it,
   * paged LIST when not. Default true.
   */
  watchList?: boolean;
  /**
   * Makes and reads the watch-list's request elsewhere (off-thread-pods.ts); by default on this
   * thread. Such a stream may end at the initial-events-end BOOKMARK: the loop then watches on
   * from its resourceVersion, as after any watch that ends.
   */
  watchListOffThread?: OffThreadWatch;
  /** Server-side watch timeout; the watch is renewed from the last resourceVersion. */
  watchTimeoutSeconds?: number;
  /**
   * A watch that delivers nothing (not even a BOOKMARK) for this long is presumed dead and
   * restarted: client-node 1.x loses its own client-side timeout, so a silently dropped
   * connection would otherwise never be noticed.
   */
  stallTimeoutMs?: number;
  /**
   * How long a watch-list may take to deliver the initial state (to its initial-events-end
   * BOOKMARK): a server that trickles events forever never completes a sync, and fails.
   */
  initialListTimeoutMs?: number;
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** Called whenever connected/synced change, for status and readiness. */
  onStateChange?(state: ReflectorState): void;
  /**
   * Called when the server's resourceVersions went back (a watch event or a list older than
   * what was already seen): the cluster is not the one the cache holds (restarted from another
   * state, restored, or another cluster at the same address). This reflector relists already.
   */
  onResourceVersionsWentBack?(detail: string): void;
  /**
   * Asked before a watch resumes (after it ended or failed): says (its detail) whether the server is
   * another cluster than the one cached, which a resume from an old resourceVersion would not
   * show until its first event.
   */
  anotherClusterSince?(): Promise<string | undefined>;
}

export interface ReflectorState {
  /** The watch stream is open. */
  connected: boolean;
  /** A full list has been loaded at least once. */
  synced: boolean;
  /** The last failure, cleared by the next successful list or watch: the apiserver's own words when it answered. */
  lastError?: string;
  /** The apiserver's reason for it (a Status reason such as "Forbidden" or "Unauthorized"), when it gave one. */
  lastErrorReason?: string;
  relists: number;
  restarts: number;
  /** Date.now() of the last list or watch delivery (bookmarks included): how fresh the cache is. */
  lastEventAt?: number;
}

class WatchExpired extends Error {}

/** A watch delivered a resourceVersion lower than one already seen. */
class ResourceVersionsWentBack extends Error {}

/**
 * The apiserver's answer to a list or watch from a resourceVersion it has not reached yet
 * (client-go's apierrors.IsTooLargeResourceVersion): after a restart with lower versions, a
 * watch from the last one seen is refused so, again and again; only a relist sees the cluster.
 */
function isTooLargeResourceVersion(error: unknown): boolean {
  return (
    error instanceof KubeApiError && error.statusCode === 504 && (error.causes.some((cause) => cause.reason === "ResourceVersionTooLarge") || /too large resource version/i.test(error.statusMessage))
  );
}

/** A resourceVersion as a number, when it is one (apiservers' are; they are opaque by contract). */
function rvNumber(rv: string | undefined): bigint | undefined {
  return rv !== undefined && /^\d{1,30}$/.test(rv) ? BigInt(rv) : undefined;
}

/** The server answered a watch-list request as if it did not know the protocol. */
class WatchListUnsupported extends Error {}

/**
 * List, then watch from the list's resourceVersion, forever: the client-go reflector loop.
 * A 410 (history expired) relists; any other failure restarts with exponential backoff and
 * jitter; a stalled watch is cut and renewed. It never stops on its own: only stop() ends it.
 */
export class Reflector<T> {
  private readonly options: Required<Omit<ReflectorOptions<T>, "onStateChange" | "watchListOffThread" | "onResourceVersionsWentBack" | "anotherClusterSince">> &
    Pick<ReflectorOptions<T>, "onStateChange" | "watchListOffThread" | "onResourceVersionsWentBack" | "anotherClusterSince">;
  /** The highest resourceVersion seen from this server, across relists: what a restarted cluster's fall below. */
  private highestRv: bigint | undefined;
  private stopped = false;
  private resourceVersion: string | undefined;
  /** Ends the current watch stream, if one is open or opening. */
  private endWatch: (() => void) | undefined;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  /** Cancels an in-flight LIST page when the reflector stops. */
  private readonly stopping = new AbortController();
  /** Whether the server speaks watch-list: unknown until tried. */
  private watchListSupported: boolean | undefined;
  readonly state: ReflectorState = { connected: false, synced: false, relists: 0, restarts: 0 };

  constructor(options: ReflectorOptions<T>) {
    this.options = {
      pageSize: 500,
      watchList: true,
      watchTimeoutSeconds: 300,
      stallTimeoutMs: 90_000,
      initialListTimeoutMs: 300_000,
      backoffInitialMs: 250,
      backoffMaxMs: 30_000,
      ...options,
    };
  }

  start(): void {
    this.loop ??= this.run();
  }

  /**
   * Forgets what was seen and loads the whole state again (another resource of the cluster
   * found it restarted): not synced until then, so readiness does not count stale objects.
   */
  relist(): void {
    this.resourceVersion = undefined;
    this.highestRv = undefined;
    this.setState({ synced: false });
    this.endWatch?.();
    this.wake?.();
  }

  /** Ends the loop and the open watch; resolves when the loop has exited. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    this.endWatch?.();
    this.wake?.();
    await this.loop;
  }

  private setState(change: Partial<ReflectorState>): void {
    const { connected, synced } = this.state;
    Object.assign(this.state, change);
    if (connected !== this.state.connected || synced !== this.state.synced) this.options.onStateChange?.(this.state);
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        let delivered: boolean;
        if (this.resourceVersion !== undefined && this.options.anotherClusterSince) {
          const another = await this.options.anotherClusterSince();
          if (another) throw new ResourceVersionsWentBack(another);
        }
        if (this.resourceVersion !== undefined) delivered = await this.watchOnce();
        else if (this.options.watchList && this.watchListSupported !== false) delivered = await this.watchOnce(new Map());
        else {
          await this.list();
          delivered = await this.watchOnce();
        }
        if (delivered) failures = 0;
        // A stream that ends at once, again and again, must not become a busy loop.
        else await this.sleep(this.backoff(++failures));
      } catch (caught) {
        if (this.stopped) break;
        const error = isTooLargeResourceVersion(caught)
          ? new ResourceVersionsWentBack(`the server is behind resourceVersion ${this.resourceVersion}: ${(caught as KubeApiError).statusMessage}`)
          : caught;
        if (this.resourceVersion === undefined && this.options.watchList && this.watchListSupported === undefined && isWatchListRefusal(error)) {
          // Not a failure of the cluster: it is older or has the WatchList feature off.
          this.watchListSupported = false;
          this.options.logger.info({ resource: this.options.resource, err: describe(error) }, "the server does not stream lists (watch-list): using paged LIST");
          continue;
        }
        this.setState({ connected: false, lastError: describe(error), lastErrorReason: error instanceof KubeApiError ? error.reason : undefined });
        if (error instanceof ResourceVersionsWentBack) {
          this.options.logger.warn({ resource: this.options.resource, detail: error.message }, "resourceVersions went back: the cluster is not the one cached; relisting");
          this.resourceVersion = undefined;
          this.highestRv = undefined;
          this.setState({ synced: false, lastError: undefined, lastErrorReason: undefined });
          this.options.onResourceVersionsWentBack?.(error.message);
          continue;
        }
        if (error instanceof WatchExpired || (error as { statusCode?: number }).statusCode === 410) {
          this.options.logger.info({ resource: this.options.resource }, "watch history expired: relisting");
          this.resourceVersion = undefined;
          continue;
        }
        failures++;
        this.state.restarts++;
        const jittered = this.backoff(failures);
        this.options.logger.warn({ resource: this.options.resource, err: describe(error), retryInMs: Math.round(jittered), failures }, "list/watch failed: retrying");
        await this.sleep(jittered);
      }
    }
    this.setState({ connected: false });
  }

  private async list(): Promise<void> {
    const items = new Map<string, T>();
    let continueToken: string | undefined;
    let resourceVersion = "";
    do {
      const page = await this.options.client.getJson<{ metadata: { resourceVersion: string; continue?: string }; items: Record<string, any>[] }>(
        this.options.path,
        { limit: this.options.pageSize, continue: continueToken },
        60_000,
        this.stopping.signal,
        MAX_LIST_PAGE_BYTES,
      );
      for (const raw of page.items) items.set(keyOf(raw), this.options.transform(raw));
      continueToken = page.metadata.continue || undefined;
      resourceVersion = page.metadata.resourceVersion;
    } while (continueToken && !this.stopped);
    if (this.stopped) return;
    this.replaceAll(items, resourceVersion, "listed");
  }

  private replaceAll(items: Map<string, T>, resourceVersion: string, how: string): void {
    this.options.sink.replace(items);
    this.resourceVersion = resourceVersion;
    const listed = rvNumber(resourceVersion);
    const before = this.highestRv;
    this.highestRv = listed;
    // A relist (after a 410) of a server whose versions started again: the other resources are stale too.
    if (listed !== undefined && before !== undefined && listed < before) {
      this.options.logger.warn({ resource: this.options.resource, resourceVersion, before: String(before) }, "resourceVersions went back: the cluster is not the one cached");
      this.options.onResourceVersionsWentBack?.(`listed at ${resourceVersion} after ${before}`);
    }
    this.state.relists++;
    this.state.lastEventAt = Date.now();
    this.setState({ synced: true, lastError: undefined, lastErrorReason: undefined });
    this.options.logger.debug({ resource: this.options.resource, count: items.size, resourceVersion }, how);
  }

  /**
   * One watch stream, from the current resourceVersion until it ends. Resolves true if it
   * delivered anything (a healthy stream that simply timed out), rejects on errors. Given
   * `initial`, it is a watch-list: the current state arrives as ADDED events, gathered in
   * `initial` until the initial-events-end BOOKMARK replaces the sink's contents at once, and the
   * same stream then goes on as a watch.
   */
  private watchOnce(initial?: Map<string, T>): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      let delivered = false;
      let settled = false;
      let stallTimer: NodeJS.Timeout | undefined;
      let initialTimer: NodeJS.Timeout | undefined;
      let controller: AbortController | undefined;
      const finish = (error?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(stallTimer);
        clearTimeout(initialTimer);
        // If the request is still opening, the controller arrives later and is aborted then.
        controller?.abort();
        this.endWatch = undefined;
        this.setState({ connected: false });
        if (error) reject(error);
        else resolve(delivered);
      };
      stallTimer = setTimeout(() => {
        this.options.logger.warn({ resource: this.options.resource, ms: this.options.stallTimeoutMs }, "watch silent for too long: restarting it");
        finish();
      }, this.options.stallTimeoutMs);
      this.endWatch = () => finish();
      const timeoutSeconds = Math.round(this.options.watchTimeoutSeconds * (0.5 + Math.random() * 0.5)) || 1;
      let loading = initial;
      if (loading) {
        const ms = this.options.initialListTimeoutMs;
        initialTimer = setTimeout(() => finish(new Error(`the initial ${this.options.resource} were not all delivered within ${Math.round(ms / 1000)} s`)), ms);
      }
      const query = loading
        ? { sendInitialEvents: true, resourceVersionMatch: "NotOlderThan", allowWatchBookmarks: true, timeoutSeconds }
        : { resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds };
      this.options.client
        .watch(
          this.options.path,
          query,
          (type, object, decoded) => {
            if (settled) return;
            // Restarts the countdown in place: a watch-list delivers 150,000 events in seconds.
            stallTimer!.refresh();
            this.state.lastEventAt = Date.now();
            if (!this.state.connected) this.setState({ connected: true, lastError: undefined, lastErrorReason: undefined });
            delivered = true;
            switch (type) {
              case "ADDED":
              case "MODIFIED": {
                const key = decoded ? decoded.key : keyOf(object);
                const item = decoded ? (decoded.item as T) : this.options.transform(object);
                if (loading) loading.set(key, item);
                else this.options.sink.upsert(key, item);
                break;
              }
              case "DELETED":
                if (loading) loading.delete(keyOf(object));
                else this.options.sink.remove(keyOf(object));
                break;
              case "BOOKMARK":
                if (loading && object?.metadata?.annotations?.[INITIAL_EVENTS_END] === "true") {
                  this.watchListSupported = true;
                  this.replaceAll(loading, String(object.metadata.resourceVersion), "streamed the initial state (watch-list)");
                  loading = undefined;
                  clearTimeout(initialTimer);
                }
                break;
              case "ERROR": {
                const code = object?.code as number | undefined;
                return finish(code === 410 ? new WatchExpired() : new KubeApiError(code ?? 500, object?.message ?? "watch error", { reason: object?.reason, causes: object?.details?.causes ?? [] }));
              }
            }
            const rv = decoded ? decoded.resourceVersion : object?.metadata?.resourceVersion;
            // Initial events carry each object's own version, in no order; after them every event moves forwards.
            if (rv && !loading) {
              const n = rvNumber(String(rv));
              if (n !== undefined && this.highestRv !== undefined && n < this.highestRv) {
                return finish(new ResourceVersionsWentBack(`a ${type} at resourceVersion ${rv} after ${this.highestRv}`));
              }
              if (n !== undefined) this.highestRv = n;
            }
            if (rv) this.resourceVersion = rv;
          },
          // A stream that ends before its initial state is complete is of a server that ignored the request.
          (error) => finish(error ?? (loading ? new WatchListUnsupported("the watch ended before its initial-events-end bookmark") : undefined)),
          loading ? this.options.watchListOffThread : undefined,
        )
        .then(
          (opened) => {
            controller = opened;
            if (settled) opened.abort();
            // The response headers arrived: the stream is open even before its first event.
            else this.setState({ connected: true, lastError: undefined, lastErrorReason: undefined });
          },
          (error) => finish(error),
        );
    });
  }

  /** Exponential in the number of consecutive failures, capped, with jitter so replicas spread out. */
  private backoff(failures: number): number {
    return backoffDelay({ initialMs: this.options.backoffInitialMs, maxMs: this.options.backoffMaxMs, jitter: true }, failures);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => (clearTimeout(timer), resolve());
    });
  }
}

/** A server without watch-list refuses its parameters (422, 400) or never ends the initial events. */
function isWatchListRefusal(error: unknown): boolean {
  if (error instanceof WatchListUnsupported) return true;
  const code = (error as { statusCode?: number }).statusCode;
  return code === 400 || code === 422;
}

function describe(error: unknown): string {
  if (error instanceof WatchExpired) return "watch history expired (410)";
  // The apiserver's words (e.g. which permission is missing), without our request line.
  if (error instanceof KubeApiError) return error.statusMessage;
  const e = error as { message?: string; code?: string };
  return e?.message || e?.code || String(error);
}
