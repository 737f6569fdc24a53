/**
 * Reads served from the store: GET of one object and LIST (selectors,
 * limit/continue, the Table form), with the list streamed from the stored JSON.
 * An unfiltered page is found by binary search on the store's sorted keys (ObjectStore.page).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { SimCluster } from "../cluster.js";
import type { Entry } from "../store.js";
import { apiVersionOf } from "./resources.js";
import { badRequest, gone, tooLargeResourceVersion, unconverted } from "./status.js";
import { listOptions, validateListOptions, type ListOptions } from "./query-options.js";
import { stateAt, waitForResourceVersion } from "./resource-versions.js";
import { renderTable, wantsTable } from "./table.js";
import { entryOf, selectorsOf, send, servedAsStored, storage, versioned, wantsPretty, type Target } from "./request.js";

type Obj = Record<string, any>;

const COMMA = Buffer.from(",");
const CLOSE = Buffer.from("]}");
/** Writes of a streamed list are gathered up to this size. */
const LIST_CHUNK_BYTES = 1 << 20;

const EXPIRED_CONTINUE = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/** GET of one object (or its Table row). */
export function serveGet(cluster: SimCluster, t: Target, q: URLSearchParams, req: IncomingMessage, res: ServerResponse): void {
  const e = entryOf(cluster, t);
  if (wantsTable(req.headers.accept)) {
    return send(cluster, res, 200, renderTable(storage(t), [e.obj], cluster.clock.now(), { resourceVersion: e.obj.metadata.resourceVersion }, q.get("includeObject") ?? "Metadata"));
  }
  send(cluster, res, 200, versioned(e.json, t));
}

/** How long a list at a resourceVersion not yet reached waits for it (the watch cache's blockTimeout). */
const FRESHNESS_WAIT_MS = 3000;

/**
 * LIST, with label/field selectors, limit and continue, at the resourceVersion
 * asked for: none is the current state; "0" or NotOlderThan N is the cache's
 * state once it has reached N (waiting up to 3 s, then 504); Exact N, or N with
 * a limit, is read from storage at N (410 once compacted).
 */
export function serveList(cluster: SimCluster, t: Target, q: URLSearchParams, req: IncomingMessage, res: ServerResponse): void | Promise<void> {
  const o = listOptions(q);
  validateListOptions(o);
  const store = cluster.store;
  const rv = o.resourceVersion === "" || o.continue ? 0 : Number(o.resourceVersion);
  if (!Number.isSafeInteger(rv) || rv < 0) throw badRequest(`invalid resource version: ${o.resourceVersion}`);
  // What the apiserver's cacher sends to etcd instead of serving itself: an exact read.
  const exact = rv > 0 && (o.resourceVersionMatch === "Exact" || (o.resourceVersionMatch === "" && o.limit > 0));
  if (exact) {
    if (rv < store.compactedRv(storage(t))) throw gone("The resourceVersion for the provided list is too old.");
    if (rv > store.resourceVersion) throw unconverted("etcdserver: mvcc: required revision is a future revision");
    return listEntries(cluster, t, q, o, req, res, rv);
  }
  if (rv > store.resourceVersion) {
    return waitForResourceVersion(cluster, rv, FRESHNESS_WAIT_MS).then((reached) => {
      if (!reached) throw tooLargeResourceVersion(rv, store.resourceVersion);
      listEntries(cluster, t, q, o, req, res);
    });
  }
  listEntries(cluster, t, q, o, req, res);
}


/** The list itself: the current state, or the state at `atRv` (an exact read). */
function listEntries(cluster: SimCluster, t: Target, q: URLSearchParams, o: ListOptions, req: IncomingMessage, res: ServerResponse, atRv?: number): void {
  const resource = storage(t);
  const store = cluster.store;
  const sel = selectorsOf(t, q);
  const limit = o.limit > 0 ? o.limit : 0;
  let listRv = store.resourceVersion;
  let after: string | undefined;
  const token = o.continue;
  const filtered = sel.label.requirements.length > 0 || sel.field.requirements.length > 0;
  if (atRv !== undefined) return collect(cluster, t, q, req, res, atRv, stateAt(store, resource, atRv, t.namespace), sel.matches, limit, filtered);
  if (token) {
    let parsed: { rv: number; start: string };
    try {
      parsed = JSON.parse(Buffer.from(token, "base64").toString("utf8"));
    } catch {
      throw badRequest("continue key is not valid: illegal base64 data");
    }
    if (parsed.rv < store.compactedRv(resource)) throw gone(EXPIRED_CONTINUE);
    listRv = parsed.rv;
    after = parsed.start;
  }
  let source: Iterable<Entry>;
  if (!filtered && limit > 0) {
    // An unfiltered page is served from the sorted keys: no scan of the rest to count it.
    const { entries, remaining } = store.page(resource, t.namespace, after, limit);
    return respond(cluster, t, q, req, res, listRv, entries, remaining > 0, remaining, false);
  }
  if (sel.nodeName !== undefined) {
    // spec.nodeName is indexed, as the apiserver's watch cache indexes it.
    const keys = [...store.byIndex(resource, "nodeName", sel.nodeName)].filter((k) => (!t.namespace || k.startsWith(`${t.namespace}/`)) && (after === undefined || k > after)).sort();
    source = keys.map((k) => store.get(resource, k)!).filter(Boolean);
  } else {
    source = store.list(resource, t.namespace, after);
  }
  collect(cluster, t, q, req, res, listRv, source, sel.matches, limit, filtered);
}

/** One page of `source`'s matching entries, counting the rest when unfiltered (remainingItemCount). */
function collect(cluster: SimCluster, t: Target, q: URLSearchParams, req: IncomingMessage, res: ServerResponse, listRv: number, source: Iterable<Entry>, matches: (o: Entry["obj"]) => boolean, limit: number, filtered: boolean): void {
  const items: Entry[] = [];
  let more = false;
  let remaining = 0;
  for (const e of source) {
    if (!matches(e.obj)) continue;
    if (limit > 0 && items.length >= limit) {
      more = true;
      if (filtered) break;
      remaining++;
      continue;
    }
    items.push(e);
  }
  respond(cluster, t, q, req, res, listRv, items, more, remaining, filtered);
}

/** The list's answer: its metadata (continue token, remainingItemCount) and the items, JSON or Table. */
function respond(cluster: SimCluster, t: Target, q: URLSearchParams, req: IncomingMessage, res: ServerResponse, listRv: number, items: Entry[], more: boolean, remaining: number, filtered: boolean): void {
  const resource = storage(t);
  const meta: Obj = { resourceVersion: String(listRv) };
  if (more) {
    meta.continue = Buffer.from(JSON.stringify({ v: "meta.k8s.io/v1", rv: listRv, start: items[items.length - 1]!.key })).toString("base64");
    if (!filtered) meta.remainingItemCount = remaining;
  }
  if (wantsTable(req.headers.accept)) {
    return send(cluster, res, 200, renderTable(resource, items.map((e) => e.obj), cluster.clock.now(), meta, q.get("includeObject") ?? "Metadata"));
  }
  if (wantsPretty(res)) {
    const list = { kind: `${t.def.kind}List`, apiVersion: apiVersionOf(t.def.group, t.version), metadata: meta, items: items.map((e) => JSON.parse(versioned(e.json, t))) };
    return send(cluster, res, 200, list);
  }
  streamList(res, t, meta, items);
}

/**
 * Stream the stored JSON: no object is re-serialised for a list, and a slow
 * reader holds back the writer instead of the whole list piling up in memory.
 */
function streamList(res: ServerResponse, t: Target, meta: Obj, items: Entry[]): void {
  res.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "no-cache, private" });
  const head = Buffer.from(`{"kind":"${t.def.kind}List","apiVersion":"${apiVersionOf(t.def.group, t.version)}","metadata":${JSON.stringify(meta)},"items":[`);
  const same = servedAsStored(t);
  let i = 0;
  const pump = (): void => {
    while (i < items.length) {
      const parts: Buffer[] = i === 0 ? [head] : [];
      let size = 0;
      while (i < items.length && size < LIST_CHUNK_BYTES) {
        const bytes = same ? items[i]!.bytes : Buffer.from(versioned(items[i]!.json, t));
        if (i > 0) parts.push(COMMA);
        parts.push(bytes);
        size += bytes.length;
        i++;
      }
      if (!res.write(Buffer.concat(parts))) {
        res.once("drain", pump);
        return;
      }
    }
    res.end(items.length === 0 ? Buffer.concat([head, CLOSE]) : CLOSE);
  };
  res.on("close", () => (i = items.length + 1));
  pump();
}
