/**
 * WATCH: initial state or history resume (410 Expired past the compacted
 * resourceVersion, sent as an ERROR event after 200, as real apiservers do),
 * fan-out of store events to every matching watcher (each event serialised
 * once), selector transitions as ADDED/DELETED, BOOKMARKs, sendInitialEvents,
 * timeoutSeconds, and the watch-list protocol (KEP-3157: sendInitialEvents=true with
 * resourceVersionMatch=NotOlderThan streams the current state as ADDED events, then a
 * BOOKMARK annotated k8s.io/initial-events-end at the state's resourceVersion).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { SimCluster } from "../cluster.js";
import type { Entry, KObject, StoreEvent } from "../store.js";
import { apiVersionOf, type ResourceDef } from "./resources.js";
import { badRequest, gone, invalid, tooLargeResourceVersion } from "./status.js";
import { listOptions, type ListOptions } from "./query-options.js";
import { renderTable, wantsTable } from "./table.js";
import { selectorsOf, servedAsStored, storage, versioned, type Target } from "./request.js";

interface Watcher {
  resource: string;
  namespace?: string;
  matches: (obj: KObject) => boolean;
  res: ServerResponse;
  version: string;
  def: ResourceDef;
  table: boolean;
  /** Changes that came while the initial state was still being written: sent after it, in order. */
  pending?: (Buffer | string)[];
  close: () => void;
}

const NL_CLOSE = Buffer.from("}\n");
const ADDED = Buffer.from('{"type":"ADDED","object":');
/** Initial events go out in writes of about this size. */
const INITIAL_CHUNK_BYTES = 1 << 20;
const DEFAULT_BOOKMARK_INTERVAL_MS = 60_000;

/** Every open watch of one simulated apiserver. */
export class WatchServer {
  private readonly watchers = new Set<Watcher>();
  private readonly eventLines = new WeakMap<StoreEvent, Buffer>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly cluster: SimCluster,
    private readonly bookmarkIntervalMs = DEFAULT_BOOKMARK_INTERVAL_MS,
    private readonly watchList = true,
  ) {
    this.unsubscribe = cluster.store.subscribe((e) => this.fanOut(e));
  }

  /** Close every watch stream (stop and dropConnections). */
  closeAll(): void {
    for (const w of [...this.watchers]) w.close();
  }

  dispose(): void {
    this.closeAll();
    this.unsubscribe();
  }

  serve(t: Target, q: URLSearchParams, req: IncomingMessage, res: ServerResponse): void {
    const resource = storage(t);
    const { store } = this.cluster;
    const sel = selectorsOf(t, q);
    const o = listOptions(q);
    const rvText = o.resourceVersion;
    const initialEvents = o.sendInitialEvents;
    validateWatchListOptions(o, this.watchList);
    if (rvText !== "" && rvText !== "0" && Number(rvText) > store.resourceVersion) {
      // A version this server has not reached (NotOlderThan, or a resume point after its store went
      // back): the apiserver waits up to 3 s for its cache, then says so, and no event flows.
      throw tooLargeResourceVersion(rvText, store.resourceVersion);
    }
    const table = wantsTable(req.headers.accept);
    res.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "no-cache, private", "Transfer-Encoding": "chunked" });
    res.flushHeaders();
    const kind = t.def.kind;
    const apiVersion = apiVersionOf(t.def.group, t.version);
    // With sendInitialEvents=true the resourceVersion is a floor for the state sent, not a resume point.
    if (rvText !== "" && rvText !== "0" && initialEvents !== true) {
      const rv = Number(rvText);
      if (!Number.isFinite(rv)) {
        res.end(`{"type":"ERROR","object":${JSON.stringify(badRequest(`invalid resource version: ${rvText}`).status)}}\n`);
        return;
      }
      const floor = store.compactedRv(resource);
      if (rv < floor) {
        // Real apiservers answer 200 and then an ERROR event with the Expired Status.
        const status = gone(`too old resource version: ${rv} (${floor})`).status;
        res.end(`{"type":"ERROR","object":${JSON.stringify(status)}}\n`);
        return;
      }
    }
    let timer: NodeJS.Timeout | undefined;
    let bookmarkTimer: NodeJS.Timeout | undefined;
    const w: Watcher = {
      resource,
      ...(t.namespace ? { namespace: t.namespace } : {}),
      matches: sel.matches,
      res,
      version: t.version,
      def: t.def,
      table,
      close: () => {
        if (!this.watchers.delete(w)) return;
        clearTimeout(timer);
        clearInterval(bookmarkTimer);
        res.end();
      },
    };
    const bookmark = (annotations?: Record<string, string>, resourceVersion = store.resourceVersion) =>
      res.write(`{"type":"BOOKMARK","object":{"kind":"${kind}","apiVersion":"${apiVersion}","metadata":{"resourceVersion":"${resourceVersion}","creationTimestamp":null${annotations ? `,"annotations":${JSON.stringify(annotations)}` : ""}}}}\n`);
    if (initialEvents === true || (initialEvents === undefined && (rvText === "" || rvText === "0"))) {
      // The state as of now (entries are immutable, so the snapshot holds), written at the
      // reader's pace; changes after it wait in `pending` so that none slips between.
      const snapshot: Entry[] = [];
      for (const e of store.list(resource, t.namespace)) if (sel.matches(e.obj)) snapshot.push(e);
      const snapshotRv = store.resourceVersion;
      w.pending = [];
      // The stored bytes framed as an event without copying them, or a line rendered for a table or another version.
      const pieces = (e: Entry): Buffer[] =>
        table
          ? [Buffer.from(`{"type":"ADDED","object":${JSON.stringify(renderTable(resource, [e.obj], this.cluster.clock.now(), { resourceVersion: e.obj.metadata.resourceVersion }))}}\n`)]
          : servedAsStored(t)
            ? [ADDED, e.bytes, NL_CLOSE]
            : [Buffer.from(`{"type":"ADDED","object":${versioned(e.json, t)}}\n`)];
      let i = 0;
      const pump = (): void => {
        while (i < snapshot.length) {
          if (!this.watchers.has(w)) return;
          const parts: Buffer[] = [];
          let size = 0;
          while (i < snapshot.length && size < INITIAL_CHUNK_BYTES) {
            for (const piece of pieces(snapshot[i++]!)) {
              parts.push(piece);
              size += piece.length;
            }
          }
          // One buffer per megabyte: a Buffer.concat per object allocated 150,000 small buffers, most of a large watch-list's time.
          if (!res.write(Buffer.concat(parts))) return void res.once("drain", pump);
        }
        if (!this.watchers.has(w)) return;
        if (initialEvents === true) bookmark({ "k8s.io/initial-events-end": "true" }, snapshotRv);
        for (const change of w.pending!) res.write(change);
        delete w.pending;
      };
      this.watchers.add(w);
      pump();
    } else {
      if (rvText !== "" && rvText !== "0") for (const e of store.eventsAfter(resource, Number(rvText))) this.deliver(w, e);
      this.watchers.add(w);
    }
    const timeout = o.timeoutSeconds ?? 0;
    // Without timeoutSeconds the apiserver ends watches after 30-60 minutes.
    timer = setTimeout(() => w.close(), (timeout > 0 ? timeout : 1800 + Math.floor(this.cluster.rng.next() * 1800)) * 1000);
    if (o.allowWatchBookmarks) {
      bookmarkTimer = setInterval(() => w.pending === undefined && bookmark(), this.bookmarkIntervalMs);
    }
    req.socket.on("close", () => w.close());
    res.on("close", () => w.close());
  }

  private eventLine(e: StoreEvent, type: string): Buffer {
    const build = () => Buffer.concat([Buffer.from(`{"type":"${type}","object":`), e.entry.bytes, NL_CLOSE]);
    if (type !== e.type) return build();
    // Serialised once per event, however many watchers receive it.
    let line = this.eventLines.get(e);
    if (line === undefined) this.eventLines.set(e, (line = build()));
    return line;
  }

  private deliver(w: Watcher, e: StoreEvent): void {
    const obj = e.entry.obj;
    if (w.namespace && obj.metadata.namespace !== w.namespace) return;
    let type: string = e.type;
    if (e.type === "MODIFIED") {
      const now = w.matches(obj);
      const before = w.matches(e.prev!.obj);
      if (!now && !before) return;
      if (now && !before) type = "ADDED";
      else if (!now && before) type = "DELETED";
    } else if (!w.matches(obj)) return;
    if (w.table) {
      const table = renderTable(w.resource, [obj], this.cluster.clock.now(), { resourceVersion: obj.metadata.resourceVersion });
      this.send(w, `{"type":"${type}","object":${JSON.stringify(table)}}\n`);
      return;
    }
    this.send(w, servedAsStored(w) ? this.eventLine(e, type) : `{"type":"${type}","object":${versioned(e.entry.json, w)}}\n`);
  }

  private send(w: Watcher, line: Buffer | string): void {
    if (w.pending) w.pending.push(line);
    else w.res.write(line);
  }

  private fanOut(e: StoreEvent): void {
    for (const w of this.watchers) if (w.resource === e.resource) this.deliver(w, e);
  }
}

/**
 * The apiserver's ValidateListOptions for a watch: sendInitialEvents needs
 * resourceVersionMatch=NotOlderThan and allowWatchBookmarks=true, and resourceVersionMatch
 * means nothing on a watch without it. 422 Invalid on ListOptions, before the stream opens.
 */
function validateWatchListOptions(o: ListOptions, watchList: boolean): void {
  const sendInitialEvents = o.sendInitialEvents;
  const match = o.resourceVersionMatch;
  const causes: { field: string; message: string; reason: string }[] = [];
  if (sendInitialEvents !== undefined && !watchList) {
    causes.push({ field: "sendInitialEvents", reason: "FieldValueForbidden", message: "Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled" });
  } else if (sendInitialEvents !== undefined) {
    if (match !== "NotOlderThan") causes.push({ field: "resourceVersionMatch", reason: "FieldValueInvalid", message: `Invalid value: "${match}": sendInitialEvents requires setting resourceVersionMatch to NotOlderThan` });
    if (!o.allowWatchBookmarks) causes.push({ field: "allowWatchBookmarks", reason: "FieldValueForbidden", message: "Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true" });
  } else if (match !== "") {
    causes.push({ field: "resourceVersionMatch", reason: "FieldValueForbidden", message: "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided" });
  }
  if (causes.length) throw invalid("ListOptions", "meta.k8s.io", "", causes);
}
