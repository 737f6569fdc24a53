import assert from "node:assert/strict";
import { createServer } from "node:http";
import { afterEach, describe, test } from "node:test";
import { KubeConfig, Watch } from "@kubernetes/client-node";
import { KubeClient } from "../../src/cluster/kube-client.js";
import { INITIAL_EVENTS_END } from "../../src/cluster/reflector.js";
import { stripPod } from "../../src/cluster/strip.js";
import { LineSplitter } from "../../src/cluster/watch-stream.js";
import { startSimulator, type Simulator } from "../../src/sim/index.js";
import { kubeConfigForServer } from "../support/sim-cluster.js";

/** The lines a splitter hands on for `chunks`. */
function split(chunks: Buffer[]): string[] {
  const lines: string[] = [];
  const splitter = new LineSplitter((line) => {
    lines.push(line);
  });
  for (const chunk of chunks) splitter.push(chunk);
  splitter.end();
  return lines;
}

const WATCH_LIST = { sendInitialEvents: true, resourceVersionMatch: "NotOlderThan", allowWatchBookmarks: true, timeoutSeconds: 60 };

describe("the watch stream's lines", () => {
  test("a line cut anywhere between chunks, inside a multi-byte character too, comes out whole", () => {
    const lines = ['{"name":"café"}', '{"zone":"日本-1"}', "", '{"emoji":"🚀","n":1}'];
    const bytes = Buffer.from(lines.join("\n") + "\n");
    for (let first = 0; first <= bytes.length; first++) {
      for (let second = first; second <= bytes.length; second += 7) {
        assert.deepEqual(split([bytes.subarray(0, first), bytes.subarray(first, second), bytes.subarray(second)]), lines, `cut at ${first} and ${second}`);
      }
    }
  });

  test("a line spread over many chunks, and a last line without its newline, are kept", () => {
    const long = JSON.stringify({ labels: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, `v${i}`])) });
    const bytes = Buffer.from(`${long}\n{"last":true}`);
    const chunks = Array.from({ length: Math.ceil(bytes.length / 100) }, (_, i) => bytes.subarray(i * 100, (i + 1) * 100));
    assert.deepEqual(split(chunks), [long, '{"last":true}']);
  });
});

describe("KubeClient.watch", () => {
  let sim: Simulator | undefined;
  afterEach(async () => sim?.stop());

  /** Every event of a watch-list of all pods up to its initial-events-end bookmark, through `watch`. */
  function initialEvents(watch: (onEvent: (type: string, object: any) => void, onDone: (error: unknown) => void) => Promise<AbortController>) {
    return new Promise<{ type: string; object: any }[]>((resolve, reject) => {
      const events: { type: string; object: any }[] = [];
      const opened = watch(
        (type, object) => {
          events.push({ type, object });
          if (type === "BOOKMARK" && object.metadata.annotations?.[INITIAL_EVENTS_END] === "true") {
            void opened.then((controller) => controller.abort());
            resolve(events);
          }
        },
        (error) => reject(error ?? new Error("ended before the bookmark")),
      );
    });
  }

  test("reads a large watch-list exactly as client-node's Watch reads it: the same events, the same stripped pods", async () => {
    // Some 8,600 pods, about 25 MB: many socket chunks, lines cut between them.
    sim = await startSimulator({ port: 0, nodes: 300, podsPerNode: 30, seed: 5, churn: 0, clockSpeed: 0 });
    const config = new KubeConfig();
    config.loadFromString(sim.kubeconfig());
    const ours = await initialEvents((onEvent, onDone) => new KubeClient(config).watch("/api/v1/pods", WATCH_LIST, onEvent, onDone));
    const theirs = await initialEvents((onEvent, onDone) => new Watch(config).watch("/api/v1/pods", WATCH_LIST, onEvent, onDone));
    assert.ok(ours.length > 8_000, `${ours.length} events`);
    assert.deepEqual(ours, theirs);
    assert.deepEqual(
      ours.map((e) => (e.type === "ADDED" ? stripPod("sim", e.object) : e)),
      theirs.map((e) => (e.type === "ADDED" ? stripPod("sim", e.object) : e)),
    );
  });

  test("a refusal ends the watch once, before it opens, with the status line and its code, as client-node's Watch does", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ kind: "Status", status: "Failure", message: "etcd is down", reason: "InternalError", code: 500 }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const config = kubeConfigForServer(server, "failing");
      const outcome = async (watch: (onDone: (error: unknown) => void) => Promise<unknown>) => {
        const ends: unknown[] = [];
        await watch((error) => ends.push(error));
        return ends.map((e) => ({ message: (e as Error).message, statusCode: (e as { statusCode?: number }).statusCode }));
      };
      const ours = await outcome((onDone) => new KubeClient(config).watch("/api/v1/pods", {}, () => {}, onDone));
      const theirs = await outcome((onDone) => new Watch(config).watch("/api/v1/pods", {}, () => {}, onDone));
      assert.deepEqual(ours, [{ message: "Internal Server Error", statusCode: 500 }]);
      assert.deepEqual(ours, theirs);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
