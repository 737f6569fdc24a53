import { request as httpRequest, type RequestOptions as HttpRequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { Watch, type KubeConfig } from "@kubernetes/client-node";

/** A Kubernetes API answer other than 2xx, with the apiserver's Status when it sent one. */
export class KubeApiError extends Error {
  override name = "KubeApiError";
  constructor(
    readonly statusCode: number,
    message: string,
    readonly reason?: string,
    /** The Status's details.causes, e.g. the DisruptionBudget that refused an eviction. */
    readonly causes: readonly { reason?: string; message?: string; field?: string }[] = [],
  ) {
    super(message);
  }
}

export interface RequestOptions {
  /** 30 s when omitted. */
  timeoutMs?: number;
  /** Of the body: application/json, or a patch type. */
  contentType?: string;
  /** Extra headers, e.g. Impersonate-User. */
  headers?: Record<string, string>;
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

/**
 * The thin HTTP edge to one cluster: authentication and TLS come from @kubernetes/client-node's
 * KubeConfig, watches from its Watch. Lists are read as raw JSON rather than through the
 * generated API classes: their deserialisation would cost more than the rest of a 150,000-pod
 * sync, and the cache strips every object on arrival anyway.
 */
export class KubeClient {
  private readonly watcher: Watch;

  constructor(readonly kubeConfig: KubeConfig) {
    this.watcher = new Watch(kubeConfig);
  }

  get server(): string {
    return this.kubeConfig.getCurrentCluster()?.server ?? "";
  }

  /** GET `path` with `query`, parsed; rejects with KubeApiError on a non-2xx answer. */
  getJson<T>(path: string, query: Record<string, string | number | boolean | undefined> = {}, timeoutMs = 60_000): Promise<T> {
    return this.request<T>("GET", path, query, undefined, { timeoutMs });
  }

  /** Any verb with an optional JSON body; the parsed answer, or KubeApiError. */
  async request<T>(
    method: string,
    path: string,
    query: Record<string, string | number | boolean | undefined> = {},
    body?: unknown,
    { timeoutMs = 30_000, contentType = "application/json", headers = {} }: RequestOptions = {},
  ): Promise<T> {
    const url = new URL(this.server.replace(/\/$/, "") + path);
    for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, String(value));
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const options: HttpRequestOptions = {
      method,
      headers: {
        ...headers,
        accept: "application/json",
        ...(payload ? { "content-type": contentType, "content-length": payload.length } : {}),
      },
    };
    await this.kubeConfig.applyToHTTPSOptions(options);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise<T>((resolve, reject) => {
      const req = send(url, options, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) {
            try {
              resolve(JSON.parse(text) as T);
            } catch {
              reject(new KubeApiError(status, `${method} ${path}: the answer is not JSON`));
            }
            return;
          }
          let message = `${method} ${path}: HTTP ${status}`;
          let reason: string | undefined;
          let causes: KubeApiError["causes"] = [];
          try {
            const body = JSON.parse(text) as { kind?: string; message?: string; reason?: string; details?: { causes?: KubeApiError["causes"] } };
            if (body.kind === "Status") {
              message = `${method} ${path}: ${body.message ?? status}`;
              reason = body.reason;
              causes = body.details?.causes ?? [];
            }
          } catch {
            // Not a Status object: keep the HTTP status alone.
          }
          reject(new KubeApiError(status, message, reason, causes));
        });
      });
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
      req.on("error", reject);
      req.end(payload);
    });
  }

  /**
   * Starts a watch; `onEvent` gets each event's type and raw object, `onDone` is called
   * exactly once when the stream ends for any reason. Returns the abort handle.
   */
  watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (type: WatchEventType, object: Record<string, any>) => void,
    onDone: (error: unknown) => void,
  ): Promise<AbortController> {
    return this.watcher.watch(path, query, (type: string, object: Record<string, any>) => onEvent(type as WatchEventType, object), onDone);
  }
}
