/**
 * Streams a pod watch-list's initial events beside the main thread.
 *
 * The first sync of a 5,000-node cluster streams 150,000 pods, 455 MB of JSON. Reading,
 * parsing and stripping them was most of the main thread's work until synced (JSON.parse alone
 * 2.5-4.6 s of CPU), while the second core was nearly idle, and whenever the main thread was
 * busy elsewhere (the database opening, the metrics, history) the stream stood still. A worker
 * thread now makes the request, reads, parses and strips; the main thread builds each cached
 * pod from a ~150-byte array (pod-wire.ts). At the initial-events-end BOOKMARK the worker ends
 * the stream, and the reflector watches on from the bookmark's resourceVersion on the main
 * thread as after any watch that ends. When no stream is loading the worker is stopped, and its
 * heap given back.
 *
 * The worker makes the request KubeClient made, from the same options (authentication, TLS),
 * when they can cross to a thread: not through a proxy agent, whose sockets are made here. Then,
 * or if the worker cannot start or has failed, the stream is read on the main thread as before.
 */

import { Agent as HttpAgent, type RequestOptions } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { Worker } from "node:worker_threads";
import type { FromPodWatchWorker, ToPodWatchWorker, WorkerError } from "./pod-decode-worker.js";
import { WireDecoder } from "./pod-wire.js";
import { HEADERS_TIMEOUT_MS } from "./kube-client.js";
import { eventOfLine, handOn, refusedWatch, type WatchEventHandler } from "./watch-stream.js";

/** Opens a watch elsewhere than on the main thread; undefined if it cannot, and the caller opens it itself. */
export interface OffThreadWatch {
  open(url: URL, options: RequestOptions, signal: AbortSignal, onEvent: WatchEventHandler, done: (error: unknown) => void): Promise<void> | undefined;
}

/** The object of a decoded event: everything the reflector reads is in `decoded`. */
const NO_OBJECT: Record<string, any> = Object.freeze({});

/** Pod watch-lists of `cluster` in the worker, their pods as stripPod(cluster, …) makes them. */
export function podWatchListOffThread(cluster: string): OffThreadWatch {
  return {
    open(url, options, signal, onEvent, done) {
      const request = portable(options);
      if (request === undefined) return undefined;
      return PodWatchWorker.get()?.open(url.href, request, signal, new WireDecoder(cluster), onEvent, done);
    },
  };
}

/** The request's options without its agent and signal, if nothing is lost by leaving the agent. */
function portable(options: RequestOptions): RequestOptions | undefined {
  const { agent, signal, ...rest } = options as RequestOptions & { signal?: AbortSignal };
  // client-node makes a plain Agent from the same TLS options, or a proxy's agent.
  if (agent !== undefined && agent.constructor !== HttpAgent && agent.constructor !== HttpsAgent) return undefined;
  return rest;
}

/** The one worker of the process, running while any stream is read by it. */
class PodWatchWorker {
  private static current: PodWatchWorker | undefined;
  /** Set once a worker has failed: from then on streams are read on the main thread. */
  private static failed = false;

  static get(): PodWatchWorker | undefined {
    if (PodWatchWorker.failed) return undefined;
    try {
      PodWatchWorker.current ??= new PodWatchWorker();
    } catch {
      PodWatchWorker.failed = true;
    }
    return PodWatchWorker.current;
  }

  private readonly worker = new Worker(new URL("./pod-decode-worker.js", import.meta.url));
  private readonly streams = new Map<number, { receive(message: FromPodWatchWorker): void; fail(error: Error): void }>();
  private nextStream = 0;

  private constructor() {
    // It never keeps the process alive: a service that is stopping does not wait for it.
    this.worker.unref();
    this.worker.on("message", (message: FromPodWatchWorker) => this.streams.get(message.stream)?.receive(message));
    const fail = (error: unknown) => {
      if (PodWatchWorker.current !== this) return;
      PodWatchWorker.current = undefined;
      PodWatchWorker.failed = true;
      const failure = error instanceof Error ? error : new Error(`the pod watch worker stopped (exit code ${String(error)})`);
      for (const stream of this.streams.values()) stream.fail(failure);
    };
    this.worker.on("error", fail);
    this.worker.on("exit", fail);
  }

  /** Resolves once the answer's headers arrived or the request failed (then `done` has been called). */
  open(url: string, options: RequestOptions, signal: AbortSignal, decoder: WireDecoder, onEvent: WatchEventHandler, done: (error: unknown) => void): Promise<void> | undefined {
    const stream = this.nextStream++;
    try {
      this.worker.postMessage({ stream, open: { url, options } } satisfies ToPodWatchWorker);
    } catch {
      this.stopIfIdle();
      return undefined; // an option that cannot be copied to a thread: read here
    }
    let finished = false;
    let opened!: () => void;
    const headers = new Promise<void>((resolve) => (opened = resolve));
    // A server that accepts and never answers fails as on the main thread (kube-client.ts).
    const headersDeadline = setTimeout(() => {
      this.worker.postMessage({ stream, close: true } satisfies ToPodWatchWorker);
      finish(new Error(`GET ${new URL(url).pathname} (watch): no answer within ${HEADERS_TIMEOUT_MS} ms`));
    }, HEADERS_TIMEOUT_MS);
    const finish = (error: unknown) => {
      if (finished) return;
      finished = true;
      clearTimeout(headersDeadline);
      opened();
      signal.removeEventListener("abort", abort);
      this.release(stream);
      done(error);
    };
    const abort = () => {
      this.worker.postMessage({ stream, close: true } satisfies ToPodWatchWorker);
      finish(null);
    };
    signal.addEventListener("abort", abort);
    const onPod = (type: string, key: string, pod: { resourceVersion: string }) => handOn(onEvent, type, NO_OBJECT, { key, item: pod, resourceVersion: pod.resourceVersion });
    const onLine = (line: string) => eventOfLine(line, onEvent);
    const reading = () => !finished;
    this.streams.set(stream, {
      receive: (message) => {
        if (finished) return;
        if ("status" in message) {
          clearTimeout(headersDeadline);
          opened();
          if (message.status === 200) return;
          return finish(refusedWatch(message.status, message.statusMessage));
        }
        if ("batch" in message) {
          decoder.decode(message.batch, reading, onPod, onLine);
          if (message.ended) finish(message.error ? errorFrom(message.error) : null);
          return;
        }
        finish(errorFrom(message.error));
      },
      fail: finish,
    });
    return headers;
  }

  private release(stream: number): void {
    if (this.streams.delete(stream)) this.stopIfIdle();
  }

  private stopIfIdle(): void {
    if (this.streams.size === 0 && PodWatchWorker.current === this) {
      PodWatchWorker.current = undefined;
      void this.worker.terminate();
    }
  }
}

function errorFrom(error: WorkerError): Error {
  return Object.assign(new Error(error.message), error.code ? { code: error.code } : {});
}
