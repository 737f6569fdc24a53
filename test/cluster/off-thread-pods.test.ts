import assert from "node:assert/strict";
import { createServer, type ServerResponse } from "node:http";
import { afterEach, describe, test } from "node:test";
import { KubeConfig } from "@kubernetes/client-node";
import { KubeClient } from "../../src/cluster/kube-client.js";
import type { CachedPod } from "../../src/cluster/model.js";
import { podWatchListOffThread } from "../../src/cluster/off-thread-pods.js";
import { INITIAL_EVENTS_END } from "../../src/cluster/reflector.js";
import { keyOf, stripPod } from "../../src/cluster/strip.js";
import type { Decoded } from "../../src/cluster/watch-stream.js";
import { startSimulator, type Simulator } from "../../src/sim/index.js";
import { kubeConfigForServer } from "../support/sim-cluster.js";

const WATCH_LIST = { sendInitialEvents: true, resourceVersionMatch: "NotOlderThan", allowWatchBookmarks: true, timeoutSeconds: 60 };

interface Seen {
  type: string;
  /** The cache's key and pod: as the worker decoded them, or as the main thread strips the raw object. */
  key?: string;
  pod?: CachedPod;
  /** Any other event's object. */
  object?: unknown;
}

/**
 * Every event a watch-list of pods delivers, and how it ended. On the main thread it is read
 * up to the initial-events-end bookmark and then aborted; off the thread it ends there itself.
 */
function watchList(config: KubeConfig, offThread: boolean): Promise<{ seen: Seen[]; end: unknown; decoded: number }> {
  return new Promise((resolve, reject) => {
    const seen: Seen[] = [];
    let decoded = 0;
    const opened = new KubeClient(config).watch(
      "/api/v1/pods",
      WATCH_LIST,
      (type, object, fromWorker?: Decoded) => {
        if (fromWorker) decoded++;
        if (fromWorker) seen.push({ type, key: fromWorker.key, pod: fromWorker.item as CachedPod });
        else if ((type === "ADDED" || type === "MODIFIED") && object) seen.push({ type, key: keyOf(object), pod: stripPod("sim", object) });
        else seen.push({ type, object });
        if (!offThread && type === "BOOKMARK" && object?.metadata?.annotations?.[INITIAL_EVENTS_END] === "true") {
          void opened.then((controller) => controller.abort());
        }
      },
      (end) => resolve({ seen, end, decoded }),
      offThread ? podWatchListOffThread("sim") : undefined,
    );
    opened.catch(reject);
  });
}

describe("a pod watch-list streamed by the worker", () => {
  let sim: Simulator | undefined;
  afterEach(async () => sim?.stop());

  test("holds exactly the pods the main thread strips, in order, shares equal label sets, and ends at the initial-events-end bookmark", async () => {
    // Some 8,600 pods, about 25 MB: many socket chunks and batches.
    sim = await startSimulator({ port: 0, nodes: 300, podsPerNode: 30, seed: 5, churn: 0, clockSpeed: 0 });
    const config = new KubeConfig();
    config.loadFromString(sim.kubeconfig());
    const here = await watchList(config, false);
    const worker = await watchList(config, true);

    assert.ok(worker.seen.length > 8_000, `${worker.seen.length} events`);
    assert.equal(worker.decoded, worker.seen.length - 1, "every pod decoded by the worker, the bookmark passed on as sent");
    assert.deepEqual(worker.seen, here.seen);
    for (const [i, event] of worker.seen.entries()) {
      if (event.pod) assert.deepEqual(Object.keys(event.pod), Object.keys(here.seen[i]!.pod!), "the same properties in the same order");
    }
    assert.equal(worker.end, null, "over without an error, so the reflector watches on from the bookmark");

    const byLabels = new Map<string, CachedPod["labels"]>();
    let shared = 0;
    for (const { pod } of worker.seen) {
      if (!pod) continue;
      const text = JSON.stringify(pod.labels);
      const first = byLabels.get(text);
      if (first === undefined) byLabels.set(text, pod.labels);
      else if (first === pod.labels) shared++;
      else assert.fail(`two copies of the labels ${text}`);
    }
    assert.ok(shared > 7_000, `${shared} pods share a label set`);
  });
});

describe("a stream the worker cannot decode as pods", () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => close?.());

  /** A server answering every watch with `respond`. */
  async function serve(respond: (res: ServerResponse) => void): Promise<KubeConfig> {
    const server = createServer((_req, res) => respond(res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    close = async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    };
    return kubeConfigForServer(server, "crafted");
  }

  const pod = (name: unknown, extra: Record<string, unknown> = {}) => ({
    metadata: { namespace: "ns", name, uid: `uid-${String(name)}`, resourceVersion: "7", labels: { app: "a" } },
    spec: { nodeName: "n1", containers: [{ name: "c", resources: { requests: { cpu: "100m" } } }], ...extra },
    status: { phase: "Running" },
  });
  const lines = [
    "not json",
    "null",
    "5",
    JSON.stringify({ type: "ADDED", object: pod("first") }),
    // Cluster-scoped with a name that is not a string: its key is not one.
    JSON.stringify({ type: "ADDED", object: { ...pod(42), metadata: { name: 42, resourceVersion: "7" } } }),
    `{"type":"ADDED","object":${JSON.stringify(pod("negative-zero")).replace('"nodeName"', '"terminationGracePeriodSeconds":-0,"nodeName"')}}`,
    JSON.stringify({ type: "ADDED", object: { ...pod("numeric-rv"), metadata: { ...pod("numeric-rv").metadata, resourceVersion: 8 } } }),
    JSON.stringify({ type: "MODIFIED", object: pod("first", { nodeName: "n2" }) }),
    JSON.stringify({ type: "ADDED", object: null }),
    JSON.stringify({ type: "DELETED", object: pod("first") }),
    JSON.stringify({ type: "BOOKMARK", object: { kind: "Pod", metadata: { resourceVersion: "9" } } }),
    JSON.stringify({ type: "BOOKMARK", object: { kind: "Pod", metadata: { resourceVersion: "10", annotations: { [INITIAL_EVENTS_END]: "true" } } } }),
    JSON.stringify({ type: "ADDED", object: pod("after-the-bookmark") }),
  ];

  test("every line is read as the main thread reads it, pieces cut anywhere, and nothing after the initial-events-end bookmark", async () => {
    const bytes = Buffer.from(lines.slice(0, -2).join("\n") + "\n");
    // The bookmark and the line after it in one piece: the worker stops inside a chunk.
    const last = Buffer.from(lines.slice(-2).join("\n") + "\n");
    const config = await serve((res) => {
      res.writeHead(200, { "content-type": "application/json" });
      // In pieces of 7 bytes, each its own write: lines cut everywhere.
      let at = 0;
      const next = () => {
        if (at >= bytes.length) return res.end(last);
        res.write(bytes.subarray(at, (at += 7)), next);
      };
      next();
    });
    const here = await watchList(config, false);
    const worker = await watchList(config, true);
    const expected = here.seen.slice(0, here.seen.findIndex((e) => (e.object as any)?.metadata?.resourceVersion === "10") + 1);
    assert.deepEqual(worker.seen, expected);
    assert.equal(worker.decoded, 2, "only the two pods JSON carries exactly (first, and first modified) were decoded by the worker");
    const negativeZero = worker.seen.find((e) => e.pod?.name === "negative-zero")!.pod!;
    assert.ok(Object.is(negativeZero.terminationGracePeriodSeconds, -0));
    assert.equal(worker.end, null);
  });

  test("a refusal ends it once, with the status line and its code, as on the main thread", async () => {
    const config = await serve((res) => {
      res.writeHead(403, { "content-type": "application/json" });
      res.end(JSON.stringify({ kind: "Status", status: "Failure", message: "pods is forbidden", reason: "Forbidden", code: 403 }));
    });
    const ends = async (offThread: boolean) => {
      const { end } = await watchList(config, offThread);
      return { name: (end as Error).name, message: (end as Error).message, statusCode: (end as { statusCode?: number }).statusCode };
    };
    const worker = await ends(true);
    // The Status lookup after a refusal gives the apiserver's words, as for any watch.
    assert.deepEqual(worker, { name: "KubeApiError", message: "GET /api/v1/pods: pods is forbidden", statusCode: 403 });
    assert.deepEqual(worker, await ends(false));
  });

  test("a connection cut mid-stream ends it as on the main thread, after the events that arrived", async () => {
    const config = await serve((res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(lines[3] + "\n", () => res.destroy());
    });
    const here = await watchList(config, false);
    const worker = await watchList(config, true);
    assert.deepEqual(worker.seen, here.seen);
    assert.equal(worker.seen.length, 1);
    assert.deepEqual(
      { message: (worker.end as Error | null)?.message, code: (worker.end as { code?: string } | null)?.code },
      { message: (here.end as Error | null)?.message, code: (here.end as { code?: string } | null)?.code },
    );
  });
});
