import { request as httpRequest, type RequestOptions as HttpRequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";
import type { OffThreadWatch } from "./off-thread-pods.js";
import { readWatchEvents, refusedWatch, type Decoded } from "./watch-stream.js";

/** One entry of a Status's details.causes; `reason` is the cause's type (JSON `reason`), e.g. "NamespaceTerminating". */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/**
 * A Kubernetes API answer other than 2xx, with the apiserver's Status when it sent one.
 * `statusMessage` is the apiserver's own words (or "HTTP 503" when it sent no Status), fit to
 * show a caller; `message` adds the request (`POST /api/v1/...: `) for the log.
 */
export class KubeApiError extends Error {
  override name = "KubeApiError";
  /** The Status's `reason`, e.g. "NotFound", "Conflict", "TooManyRequests", "Forbidden". */
  readonly reason: string | undefined;
  /** The Status's details.causes, e.g. the DisruptionBudget that refused an eviction. */
  readonly causes: readonly StatusCause[];

  constructor(
    readonly statusCode: number,
    readonly statusMessage: string,
    status: { reason?: string; causes?: readonly StatusCause[]; request?: string } = {},
  ) {
    super(status.request ? `${status.request}: ${statusMessage}` : statusMessage);
    this.reason = status.reason;
    this.causes = status.causes ?? [];
  }
}

/** A request that got no usable answer (none in time, or not JSON); `detail` says how, without the request. */
export class KubeRequestError extends Error {
  override name = "KubeRequestError";
  constructor(
    request: string,
    readonly detail: string,
  ) {
    super(`${request}: ${detail}`);
  }
}

/** The reasons the apiserver gives a Status (metav1.StatusReason), as far as we tell them apart. */
const KNOWN_REASONS = new Set(["NotFound", "Conflict", "AlreadyExists", "TooManyRequests", "Forbidden", "Unauthorized", "Invalid", "BadRequest", "ServiceUnavailable", "Gone", "Expired"]);

/**
 * kubectl's apierrors rule: the Status's reason decides; the HTTP code only when the reason is
 * missing or one we do not know (an aggregated API or a proxy in between may send just a code).
 */
function reasonOrCode(error: unknown, reason: string, code: number): boolean {
  if (!(error instanceof KubeApiError)) return false;
  if (error.reason === reason) return true;
  return (error.reason === undefined || !KNOWN_REASONS.has(error.reason)) && error.statusCode === code;
}

/** 404: the object (or the API) does not exist. */
export const isNotFound = (error: unknown): error is KubeApiError => reasonOrCode(error, "NotFound", 404);
/** 409: someone else wrote first (an update on a stale resourceVersion). */
export const isConflict = (error: unknown): error is KubeApiError => reasonOrCode(error, "Conflict", 409);
/** 409 AlreadyExists: a create of a name that is taken. */
export const isAlreadyExists = (error: unknown): error is KubeApiError => error instanceof KubeApiError && error.reason === "AlreadyExists";
/** 429: try later, e.g. an eviction a PodDisruptionBudget refuses. */
export const isTooManyRequests = (error: unknown): error is KubeApiError => reasonOrCode(error, "TooManyRequests", 429);
/** 403: the caller may not, or admission refused (a terminating namespace, see {@link hasStatusCause}). */
export const isForbidden = (error: unknown): error is KubeApiError => reasonOrCode(error, "Forbidden", 403);
/** 401: the credentials were not accepted. */
export const isUnauthorized = (error: unknown): error is KubeApiError => reasonOrCode(error, "Unauthorized", 401);
/** 422 or 400: the request itself is wrong. */
export const isInvalid = (error: unknown): error is KubeApiError => reasonOrCode(error, "Invalid", 422) || reasonOrCode(error, "BadRequest", 400);
/** 503: the API is not served right now (e.g. metrics.k8s.io without metrics-server). */
export const isServiceUnavailable = (error: unknown): error is KubeApiError => reasonOrCode(error, "ServiceUnavailable", 503);

/** Whether the Status names this cause type, as apierrors.HasStatusCause does (e.g. "NamespaceTerminating"). */
export function hasStatusCause(error: unknown, type: string): boolean {
  return error instanceof KubeApiError && error.causes.some((cause) => cause.reason === type);
}

/** The cause type the NamespaceLifecycle admission gives a write into a namespace being deleted (corev1.NamespaceTerminatingCause). */
export const NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating";

/** The apiserver's Status of a failed answer (or its HTTP status alone when the body is no Status). */
function apiErrorOf(status: number, text: string, request: string, plain = false): KubeApiError {
  // A kubelet answers in plain text: its first line is the reason.
  let message = plain && text.trim() ? `HTTP ${status}: ${text.trim().split("\n")[0]!.slice(0, 300)}` : `HTTP ${status}`;
  let reason: string | undefined;
  let causes: readonly StatusCause[] = [];
  try {
    const body = JSON.parse(text) as { kind?: string; message?: string; reason?: string; details?: { causes?: StatusCause[] } };
    if (body.kind === "Status") {
      message = body.message ?? String(status);
      reason = body.reason;
      causes = body.details?.causes ?? [];
    }
  } catch {
    // Not a Status object: keep the HTTP status alone.
  }
  return new KubeApiError(status, message, { reason, causes, request });
}

/** What went wrong talking to Kubernetes, in words fit for a caller: the apiserver's own message, never the request line. */
export function kubeErrorDetail(error: unknown): string {
  if (error instanceof KubeApiError) return error.statusMessage;
  if (error instanceof KubeRequestError) return error.detail;
  return error instanceof Error ? error.message : String(error);
}

/**
 * The most an answer may be, unless its request says otherwise: an object (a Lease, a patched
 * node) is under 1.5 MiB in etcd, and the NodeMetrics of 5,000 nodes are ~2 MiB. A server
 * sending more is not an apiserver: the request fails instead of growing the process.
 */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** The most a LIST page (500 objects) may be: 256 KiB an object on average, far above what nodes, pods and events are. */
export const MAX_LIST_PAGE_BYTES = 128 * 1024 * 1024;

/** How long a request (a watch included) may wait for its answer's headers: a server that accepts and never answers fails. */
export const HEADERS_TIMEOUT_MS = 10_000;

export interface RequestOptions {
  /** The whole request's deadline, from sending to its body's end; 30 s when omitted. */
  timeoutMs?: number;
  /** Of the body: application/json, or a patch type. */
  contentType?: string;
  /** Extra headers, e.g. Impersonate-User. */
  headers?: Record<string, string>;
  /** Abandons the request (a reflector stopping mid-LIST). */
  signal?: AbortSignal;
  /** The answer's size limit; {@link MAX_RESPONSE_BYTES} when omitted. */
  maxBytes?: number;
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

/**
 * The thin HTTP edge to one cluster: authentication and TLS come from @kubernetes/client-node's
 * KubeConfig. Lists are read as raw JSON rather than through the generated API classes: their
 * deserialisation would cost more than the rest of a 150,000-pod sync, and the cache strips
 * every object on arrival anyway. Watches are read the same way (see watch-stream.ts).
 */
export class KubeClient {
  constructor(readonly kubeConfig: KubeConfig) {}

  get server(): string {
    return this.kubeConfig.getCurrentCluster()?.server ?? "";
  }

  /** GET `path` with `query`, parsed; rejects with KubeApiError on a non-2xx answer. */
  getJson<T>(path: string, query: Record<string, string | number | boolean | undefined> = {}, timeoutMs = 60_000, signal?: AbortSignal, maxBytes?: number): Promise<T> {
    return this.request<T>("GET", path, query, undefined, { timeoutMs, ...(signal ? { signal } : {}), ...(maxBytes ? { maxBytes } : {}) });
  }

  /** The server's URL for `path` with `query` (undefined values left out). */
  private urlFor(path: string, query: Record<string, string | number | boolean | undefined>): URL {
    const url = new URL(this.server.replace(/\/$/, "") + path);
    for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, String(value));
    return url;
  }

  /** Any verb with an optional JSON body; the parsed answer, or KubeApiError. */
  async request<T>(
    method: string,
    path: string,
    query: Record<string, string | number | boolean | undefined> = {},
    body?: unknown,
    { timeoutMs = 30_000, contentType = "application/json", headers = {}, signal, maxBytes = MAX_RESPONSE_BYTES }: RequestOptions = {},
  ): Promise<T> {
    const url = this.urlFor(path, query);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const options: HttpRequestOptions = {
      method,
      ...(signal ? { signal } : {}),
      headers: {
        ...headers,
        accept: "application/json",
        ...(payload ? { "content-type": contentType, "content-length": payload.length } : {}),
      },
    };
    await this.kubeConfig.applyToHTTPSOptions(options);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise<T>((resolve, reject) => {
      const request = `${method} ${path}`;
      const req = send(url, options, (res) => {
        clearTimeout(headersDeadline);
        const chunks: Buffer[] = [];
        let bytes = 0;
        res.on("data", (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > maxBytes) return req.destroy(new KubeRequestError(request, `the answer is over ${maxBytes / 1024 / 1024} MiB: not read further`));
          chunks.push(chunk);
        });
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) {
            try {
              resolve(JSON.parse(text) as T);
            } catch {
              reject(new KubeRequestError(`${method} ${path}`, "the answer is not JSON"));
            }
            return;
          }
          reject(apiErrorOf(status, text, `${method} ${path}`));
        });
      });
      // Deadlines for the headers and for the whole answer: a socket timeout alone is reset by every byte a trickling server sends.
      const headersDeadline = setTimeout(() => req.destroy(new KubeRequestError(request, `no answer within ${Math.min(timeoutMs, HEADERS_TIMEOUT_MS)} ms`)), Math.min(timeoutMs, HEADERS_TIMEOUT_MS));
      const deadline = setTimeout(() => req.destroy(new KubeRequestError(request, `no answer within ${timeoutMs} ms`)), timeoutMs);
      req.on("close", () => (clearTimeout(headersDeadline), clearTimeout(deadline)));
      req.on("error", reject);
      req.end(payload);
    });
  }

  /**
   * GET `path` as text, at most `maxBytes` of it (`truncated` when there was more): the first
   * bytes (`keep` "head": the rest is not read), or the last ("tail": the answer is read through,
   * keeping no more than that). Rejects with KubeApiError on a non-2xx answer. For the kubelet's
   * answers through the node proxy.
   */
  async getText(path: string, query: Record<string, string | number | boolean | undefined>, maxBytes: number, keep: "head" | "tail" = "head", timeoutMs = 15_000): Promise<{ text: string; truncated: boolean }> {
    const url = this.urlFor(path, query);
    const options: HttpRequestOptions = { method: "GET", headers: { accept: "text/plain, application/json" } };
    await this.kubeConfig.applyToHTTPSOptions(options);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(url, options, (res) => {
        let chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        let done = false;
        const finish = () => {
          done = true;
          const all = Buffer.concat(chunks);
          const text = (keep === "head" ? all.subarray(0, maxBytes) : all.subarray(Math.max(0, all.length - maxBytes))).toString("utf8");
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve({ text, truncated });
          else reject(apiErrorOf(status, text, `GET ${path}`, true));
        };
        res.on("data", (chunk: Buffer) => {
          if (done) return;
          chunks.push(chunk);
          size += chunk.length;
          if (size <= maxBytes) return;
          truncated = true;
          if (keep === "head") {
            finish();
            res.destroy();
            return;
          }
          // Keep the last maxBytes only.
          const kept = Buffer.concat(chunks).subarray(size - maxBytes);
          chunks = [kept];
          size = kept.length;
        });
        res.on("error", (error) => (done ? undefined : reject(error)));
        res.on("end", () => (done ? undefined : finish()));
      });
      req.setTimeout(timeoutMs, () => req.destroy(new KubeRequestError(`GET ${path}`, `no answer within ${timeoutMs} ms`)));
      req.on("error", reject);
      req.end();
    });
  }

  /**
   * Starts a watch; `onEvent` gets each event's type and raw object (or, when `offThread`
   * opened it, what it decoded the object to), `onDone` is called exactly once when the stream
   * ends for any reason. Returns the abort handle.
   */
  async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (type: WatchEventType, object: Record<string, any>, decoded?: Decoded) => void,
    onDone: (error: unknown) => void,
    offThread?: OffThreadWatch,
  ): Promise<AbortController> {
    // A refused watch is reported by its status line ("Forbidden"), as client-node's Watch
    // reports it, while the apiserver's Status says which permission is missing: ask once more
    // with a one-item list, which is refused for the same reason with that Status, and hand on
    // its KubeApiError (whose words, "cannot list", are the ones operators already see).
    let statusLookup: Promise<void> | undefined;
    const done = (error: unknown) => {
      const code = (error as { statusCode?: number } | undefined)?.statusCode;
      // Only a refusal (401, 403) has words worth fetching; a 410 or a refused watch-list (400, 422) is handled by its code.
      if (code !== 401 && code !== 403) return onDone(error);
      statusLookup = this.getJson(path, { limit: 1 }, 10_000).then(
        () => onDone(error),
        (status: unknown) => onDone(status instanceof KubeApiError && status.statusCode === code ? status : error),
      );
    };
    const controller = await this.openWatch(path, query, onEvent, done, offThread);
    // A refused watch has ended before the caller sees it open, as it did without the lookup.
    await statusLookup;
    return controller;
  }

  /**
   * The watch as client-node's Watch makes it (same URL, authentication, TLS and keep-alive
   * from the KubeConfig; `done` once; a refusal as an Error with the status line's text and
   * `statusCode`), with the stream read by {@link readWatchEvents}, or made and read by
   * `offThread` when it can. Resolves once the answer's headers have arrived, or the request
   * failed (then `done` has been called).
   */
  private async openWatch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (type: WatchEventType, object: Record<string, any>, decoded?: Decoded) => void,
    done: (error: unknown) => void,
    offThread: OffThreadWatch | undefined,
  ): Promise<AbortController> {
    const url = this.urlFor(path, { watch: true, ...query });
    const controller = new AbortController();
    const options: HttpRequestOptions = { method: "GET", signal: controller.signal, headers: { accept: "application/json" } };
    await this.kubeConfig.applyToHTTPSOptions(options);
    let finished = false;
    const finish = (error: unknown) => {
      if (finished) return;
      finished = true;
      controller.abort();
      done(error);
    };
    const elsewhere = offThread?.open(url, options, controller.signal, (type, object, decoded) => onEvent(type as WatchEventType, object, decoded), finish);
    if (elsewhere) {
      await elsewhere;
      return controller;
    }
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    await new Promise<void>((opened) => {
      const req = send(url, options, (res) => {
        clearTimeout(headersDeadline);
        opened();
        if (res.statusCode === 200) return readWatchEvents(res, (type, object) => onEvent(type as WatchEventType, object), finish);
        res.resume();
        finish(refusedWatch(res.statusCode ?? 500, res.statusMessage));
      });
      // A watch is quiet for minutes: keep the connection probed, as client-node does.
      req.on("socket", (socket) => socket.setKeepAlive(true, 30_000));
      const headersDeadline = setTimeout(() => req.destroy(new KubeRequestError(`GET ${path} (watch)`, `no answer within ${HEADERS_TIMEOUT_MS} ms`)), HEADERS_TIMEOUT_MS);
      req.on("close", () => clearTimeout(headersDeadline));
      req.on("error", (error) => {
        opened();
        finish(error);
      });
      req.end();
    });
    return controller;
  }
}
