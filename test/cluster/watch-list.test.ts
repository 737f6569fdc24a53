import assert from "node:assert/strict";
import { createServer, type ServerResponse } from "node:http";
import { Writable } from "node:stream";
import { afterEach, describe, test } from "node:test";
import { KubeConfig } from "@kubernetes/client-node";
import { KubeClient } from "../../src/cluster/kube-client.js";
import { INITIAL_EVENTS_END, Reflector, type ReflectorSink } from "../../src/cluster/reflector.js";
import { createLogger } from "../../src/log/logger.js";
import { R, startSimulator, type Simulator } from "../../src/sim/index.js";
import { eventually, readWatch } from "../sim/support.js";
import { kubeConfigForServer } from "../support/sim-cluster.js";

const quiet = createLogger("error", new Writable({ write: (_c, _e, done) => done() }));

/** A sink that keeps what the reflector hands it, and how. */
function recordingSink() {
  const items = new Map<string, string>();
  const calls = { replace: 0, upsert: 0, remove: 0 };
  const sink: ReflectorSink<string> = {
    replace(all) {
      calls.replace++;
      items.clear();
      for (const [k, v] of all) items.set(k, v);
    },
    upsert(key, value) {
      calls.upsert++;
      items.set(key, value);
    },
    remove(key) {
      calls.remove++;
      items.delete(key);
    },
  };
  return { items, calls, sink };
}

function reflectorFor(sim: Simulator, path: string, sink: ReflectorSink<string>) {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(sim.kubeconfig());
  return new Reflector<string>({
    resource: path,
    path,
    client: new KubeClient(kubeConfig),
    transform: (raw) => `${raw.metadata.name}@${raw.metadata.resourceVersion}`,
    sink,
    logger: quiet,
    pageSize: 50,
    // Watches the server ends after a second: the simulator logs a request when it ends.
    watchTimeoutSeconds: 1,
  });
}

/** The requests the reflector made for `path`, as "verb query". */
function requestsFor(sim: Simulator, path: string): string[] {
  return sim
    .requestLog()
    .filter((r) => r.path.split("?")[0] === path)
    .map((r) => `${r.verb} ${r.code} ${new URLSearchParams(r.path.split("?")[1] ?? "").toString()}`);
}

describe("the watch-list protocol in the simulator", () => {
  let sim: Simulator;
  afterEach(async () => sim?.stop());

  test("sendInitialEvents streams every object as ADDED, then the initial-events-end BOOKMARK at the list's resourceVersion", async () => {
    sim = await startSimulator({ port: 0, nodes: 6, seed: 2, churn: 0, clockSpeed: 0 });
    const rv = sim.cluster.store.resourceVersion;
    const names = sim.cluster.nodeNames();
    const events = await readWatch(`${sim.url}/api/v1/nodes?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=5`, names.length + 1);
    assert.deepEqual(
      events.slice(0, -1).map((e) => [e.type, e.object.metadata.name]),
      [...names].sort().map((n) => ["ADDED", n]),
    );
    assert.deepEqual(events.at(-1), {
      type: "BOOKMARK",
      object: { kind: "Node", apiVersion: "v1", metadata: { resourceVersion: String(rv), creationTimestamp: null, annotations: { [INITIAL_EVENTS_END]: "true" } } },
    });
  });

  test("an initial state larger than the socket's buffers is written at the reader's pace from a snapshot, and a change made meanwhile follows its BOOKMARK", async () => {
    // 300 nodes x 30 pods: ~9,000 pods, some 25 MB of initial events, far past what the kernel buffers.
    sim = await startSimulator({ port: 0, nodes: 300, podsPerNode: 30, seed: 4, churn: 0, clockSpeed: 0 });
    const snapshot = [...sim.cluster.store.list(R.pods)].map((e) => `${e.obj.metadata.namespace}/${e.obj.metadata.name}`);
    const rv = sim.cluster.store.resourceVersion;
    const res = await fetch(`${sim.url}/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=30`);
    const reader = res.body!.getReader();
    const first = await reader.read();
    let received = first.value!.length;
    // The reader has taken one chunk and stopped: the server is still writing the initial state when the pod goes.
    const [namespace, name] = snapshot[0]!.split("/");
    const deleted = await fetch(`${sim.url}/api/v1/namespaces/${namespace}/pods/${name}?gracePeriodSeconds=0`, { method: "DELETE" });
    assert.equal(deleted.status, 200);
    assert.ok(sim.cluster.store.resourceVersion > rv, "the deletion is a change after the snapshot");

    const events: any[] = [];
    const decoder = new TextDecoder();
    let text = decoder.decode(first.value!, { stream: true });
    while (!events.some((e) => e.type === "DELETED")) {
      let newline;
      while ((newline = text.indexOf("\n")) >= 0) {
        events.push(JSON.parse(text.slice(0, newline)));
        text = text.slice(newline + 1);
      }
      if (events.some((e) => e.type === "DELETED")) break;
      const next = await reader.read();
      assert.equal(next.done, false, "the stream ended before the deletion arrived");
      received += next.value!.length;
      text += decoder.decode(next.value!, { stream: true });
    }
    await reader.cancel();
    assert.ok(received > 20e6, `the initial state was large (${received} bytes)`);
    const end = events.findIndex((e) => e.type === "BOOKMARK");
    assert.deepEqual(
      events.slice(0, end).map((e) => [e.type, `${e.object.metadata.namespace}/${e.object.metadata.name}`]),
      snapshot.map((key) => ["ADDED", key]),
      "the initial state is the snapshot, the deleted pod included",
    );
    assert.deepEqual(events[end].object.metadata, { resourceVersion: String(rv), creationTimestamp: null, annotations: { [INITIAL_EVENTS_END]: "true" } });
    // Then the changes since, in order (its ReplicaSet may already have made a replacement).
    const after = events.slice(end + 1);
    assert.deepEqual([after[0].type, `${after[0].object.metadata.namespace}/${after[0].object.metadata.name}`], ["DELETED", snapshot[0]]);
    for (const e of after) assert.ok(Number(e.object.metadata.resourceVersion) > rv, `${e.type} ${e.object.metadata.name} is newer than the snapshot`);
  });

  test("sendInitialEvents without resourceVersionMatch=NotOlderThan or without bookmarks, resourceVersionMatch on a plain watch, and sendInitialEvents on a LIST are 422 Invalid ListOptions", async () => {
    sim = await startSimulator({ port: 0, nodes: 2, seed: 2, churn: 0, clockSpeed: 0 });
    const cases: [string, string][] = [
      ["watch=true&sendInitialEvents=true&allowWatchBookmarks=true", 'resourceVersionMatch: Invalid value: "": sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'],
      ["watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan", "allowWatchBookmarks: Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true"],
      ["watch=true&resourceVersionMatch=NotOlderThan", "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"],
      // Both of ValidateListOptions's errors, in its order, as the apiserver aggregates them.
      [
        "sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
        "[resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list]",
      ],
    ];
    for (const [query, cause] of cases) {
      const response = await fetch(`${sim.url}/api/v1/pods?${query}`);
      const status = (await response.json()) as { code: number; reason: string; message: string };
      assert.deepEqual([response.status, status.code, status.reason, status.message], [422, 422, "Invalid", `ListOptions.meta.k8s.io "" is invalid: ${cause}`], query);
    }
  });
});

describe("the reflector loads the initial state", () => {
  let sim: Simulator;
  let stop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await stop?.();
    await sim?.stop();
  });

  /** Starts a reflector on every pod and waits for its first full state: the simulator's, in one replace. */
  async function syncPods() {
    const { items, calls, sink } = recordingSink();
    const reflector = reflectorFor(sim, "/api/v1/pods", sink);
    stop = () => reflector.stop();
    reflector.start();
    await eventually(() => reflector.state.synced, "synced", 20_000);
    const pods = sim.cluster.list(R.pods);
    assert.equal(calls.replace, 1);
    assert.deepEqual([...items.values()].sort(), pods.map((p) => `${p.metadata.name}@${p.metadata.resourceVersion}`).sort());
    return { items, pods };
  }

  /** Changes a pod in the simulator and waits for the reflector to hand on its new version. */
  async function changeIsSeen(pod: { metadata: { name: string; namespace?: string } }, items: Map<string, string>) {
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    sim.cluster.update(R.pods, key, (copy: any) => void (copy.metadata.labels = { ...copy.metadata.labels, touched: "yes" }));
    const updated = sim.cluster.get(R.pods, pod.metadata.name, pod.metadata.namespace)!;
    await eventually(() => items.get(key) === `${pod.metadata.name}@${updated.metadata.resourceVersion}`, "the change", 10_000);
  }

  test("by watch-list where the server supports it: one watch, no LIST, then changes on the same stream", async () => {
    sim = await startSimulator({ port: 0, nodes: 5, seed: 4, churn: 0, clockSpeed: 0 });
    const { items, pods } = await syncPods();
    await changeIsSeen(pods.at(-1)!, items);
    const requests = await eventually(() => requestsFor(sim, "/api/v1/pods").length >= 2 && requestsFor(sim, "/api/v1/pods"), "the watch-list and the watch after it", 10_000);
    assert.equal(requests[0], "watch 200 watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1");
    // When the stream ends, the next watch resumes from the initial-events-end bookmark's resourceVersion: never a LIST.
    assert.match(requests[1]!, /^watch 200 watch=true&resourceVersion=\d+&allowWatchBookmarks=true&timeoutSeconds=1$/);
    assert.ok(!requests.some((r) => r.startsWith("list")), requests.join("\n"));
  });

  test("by paged LIST where the server refuses watch-list (WatchList off: 422), then watches from the list's resourceVersion", async () => {
    sim = await startSimulator({ port: 0, nodes: 5, seed: 4, churn: 0, clockSpeed: 0, watchList: false });
    const { items, pods } = await syncPods();
    await changeIsSeen(pods[0]!, items);

    const pages = Math.ceil(pods.length / 50);
    const requests = await eventually(() => requestsFor(sim, "/api/v1/pods").length >= pages + 2 && requestsFor(sim, "/api/v1/pods"), "the refused watch-list, the pages and a watch", 10_000);
    assert.ok(pages > 1, `${pods.length} pods make several pages`);
    assert.equal(requests[0], "watch 422 watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1");
    assert.deepEqual(
      requests.slice(1, 1 + pages).map((r) => r.split(" ").slice(0, 2).join(" ")),
      Array(pages).fill("list 200"),
    );
    assert.equal(requests[1], "list 200 limit=50");
    assert.match(requests[1 + pages]!, /^watch 200 watch=true&resourceVersion=\d+&allowWatchBookmarks=true&timeoutSeconds=1$/);
    // Refused once, never asked again.
    assert.equal(requests.filter((r) => r.includes("sendInitialEvents")).length, 1, requests.join("\n"));
  });

  test("a stop during a LIST page that never answers ends the reflector at once", async () => {
    // A server that takes requests and never answers them.
    const held: ServerResponse[] = [];
    const server = createServer((_req, res) => void held.push(res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const kubeConfig = kubeConfigForServer(server, "silent");
    const reflector = new Reflector<string>({
      resource: "pods",
      path: "/api/v1/pods",
      client: new KubeClient(kubeConfig),
      transform: () => "",
      sink: recordingSink().sink,
      logger: quiet,
      watchList: false,
    });
    try {
      reflector.start();
      await eventually(() => held.length === 1, "the LIST request", 10_000);
      const began = Date.now();
      await reflector.stop();
      // Without the abort, stop() waited for the page's 60 s timeout.
      assert.ok(Date.now() - began < 10_000, `stopped in ${Date.now() - began} ms`);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
