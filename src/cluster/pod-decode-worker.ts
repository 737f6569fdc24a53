/**
 * The pod watch-list worker: opens a pods watch-list request, parses and strips each pod as it
 * arrives, and sends the main thread its events in pod-wire.ts's batches, one per socket
 * chunk. At the initial-events-end BOOKMARK the stream is over for it: it closes the request,
 * and the reflector goes on watching from that bookmark's resourceVersion on the main thread.
 * See off-thread-pods.ts.
 */

import { request as httpRequest, type IncomingMessage, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { parentPort } from "node:worker_threads";
import { Interner } from "./interner.js";
import { WireEncoder } from "./pod-wire.js";
import { stripPod } from "./strip.js";
import { INITIAL_EVENTS_END, LineSplitter } from "./watch-stream.js";

/** What the main thread sends: open a stream (the request as KubeClient made it), or close it. */
export type ToPodWatchWorker = { stream: number; open: { url: string; options: RequestOptions } } | { stream: number; close: true };

/** A failure, as much of it as crosses threads. */
export interface WorkerError {
  message: string;
  code?: string;
}

/**
 * What the worker sends, in order: the answer's status once its headers arrive (or the
 * request's error), then batches; `ended` with the last (and `error` if the stream broke).
 */
export type FromPodWatchWorker =
  | { stream: number; status: number; statusMessage: string }
  | { stream: number; error: WorkerError }
  | { stream: number; batch: string; ended?: true; error?: WorkerError };

const port = parentPort!;
/** Each open request, to close it when the main thread no longer reads it. */
const requests = new Map<number, { destroy(): void }>();
/**
 * Small and bounded: sharing here only lets a batch send each label set once; the main
 * thread's own interner makes the cache's sharing.
 */
const interner = new Interner(5_000);

function errorOf(error: unknown): WorkerError {
  const e = error as { message?: string; code?: string };
  return { message: e?.message ?? String(error), ...(e?.code ? { code: e.code } : {}) };
}

function open(stream: number, url: string, options: RequestOptions): void {
  const send = url.startsWith("https:") ? httpsRequest : httpRequest;
  const req = send(url, options, (res) => {
    port.postMessage({ stream, status: res.statusCode ?? 500, statusMessage: res.statusMessage ?? "" } satisfies FromPodWatchWorker);
    if (res.statusCode === 200) return read(stream, res);
    // A refusal ends the stream here: the main thread makes the error from the status.
    requests.delete(stream);
    res.resume();
  });
  // A watch is quiet for minutes: keep the connection probed, as client-node does.
  req.on("socket", (socket) => socket.setKeepAlive(true, 30_000));
  req.on("error", (error) => {
    if (requests.delete(stream)) port.postMessage({ stream, error: errorOf(error) } satisfies FromPodWatchWorker);
  });
  requests.set(stream, req);
  req.end();
}

function read(stream: number, res: IncomingMessage): void {
  const encoder = new WireEncoder();
  let complete = false;
  const lines = new LineSplitter((line) => {
    let event: { type?: unknown; object?: unknown };
    try {
      event = JSON.parse(line);
    } catch {
      return; // skipped, as on the main thread
    }
    if (event === null || typeof event !== "object") return encoder.addLine(line);
    const { type, object } = event;
    if ((type === "ADDED" || type === "MODIFIED") && typeof object === "object" && object !== null) {
      try {
        return encoder.addPod(type, object as Record<string, any>, stripPod("", object, interner), line);
      } catch {
        return encoder.addLine(line); // the main thread meets the same failure and skips the event
      }
    }
    encoder.addLine(line);
    complete = type === "BOOKMARK" && (object as any)?.metadata?.annotations?.[INITIAL_EVENTS_END] === "true";
    return complete;
  });
  const finish = (error?: unknown) => {
    if (!requests.delete(stream)) return;
    res.destroy();
    port.postMessage({ stream, batch: encoder.take(), ended: true, ...(error ? { error: errorOf(error) } : {}) } satisfies FromPodWatchWorker);
  };
  res.on("data", (chunk: Buffer) => {
    if (!requests.has(stream)) return;
    try {
      lines.push(chunk);
    } catch (error) {
      return finish(error);
    }
    if (complete) return finish();
    if (encoder.size > 0) port.postMessage({ stream, batch: encoder.take() } satisfies FromPodWatchWorker);
  });
  res.on("end", () => {
    lines.end();
    finish();
  });
  res.on("error", finish);
  // Closed before its end (the connection dropped): over, as on the main thread.
  res.on("close", () => finish(res.complete ? undefined : res.errored ?? undefined));
}

port.on("message", (message: ToPodWatchWorker) => {
  if ("open" in message) return open(message.stream, message.open.url, message.open.options);
  const req = requests.get(message.stream);
  requests.delete(message.stream);
  req?.destroy();
});
