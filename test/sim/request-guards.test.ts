/**
 * The simulator refuses what a web page on the same machine could send it: a
 * request whose Host is not its own (DNS rebinding), a browser Origin that is
 * not its own, and a write whose body is not declared JSON (the body types a
 * page may send cross-site without a preflight). Issue 13, finding 11.
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import type { App } from "../../src/app/create-app.js";
import { startSimulator, R, type Simulator } from "../../src/sim/index.js";
import { isOwnHost, refusal, type ServerIdentity } from "../../src/sim/apiserver/request-guards.js";
import { startTestApp } from "../support/app.js";
import { tokensFile } from "../auth/support.js";

interface Reply {
  status: number;
  body: any;
}

/** A request with exactly these headers (fetch would set Host and Origin itself). */
function send(url: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, headers: { ...headers, ...(body !== undefined ? { "content-length": String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d)).on("end", () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const CORDON = JSON.stringify({ spec: { unschedulable: true } });
const SMP = "application/strategic-merge-patch+json";
const evictionOf = (name: string, namespace: string) => JSON.stringify({ apiVersion: "policy/v1", kind: "Eviction", metadata: { name, namespace } });

/** The 403 Status of a refusal before routing, as the apiserver writes Forbidden. */
const forbiddenStatus = (message: string) => ({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: `forbidden: ${message}`, reason: "Forbidden", details: {}, code: 403 });
const forbiddenHost = (host: string) => forbiddenStatus(`the simulated cluster answers only requests addressed to itself, and Host ${JSON.stringify(host)} is not its address`);
const forbiddenOrigin = (origin: string) => forbiddenStatus(`the simulated cluster answers no page of another origin, and Origin ${JSON.stringify(origin)} is not its own`);
const unsupported = (accepted: string) => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message: `the body of the request was in an unknown format - accepted media types include: ${accepted}`,
  reason: "UnsupportedMediaType",
  code: 415,
});

describe("the embedded simulator of a service with a tokens file", () => {
  let app: App;
  let simUrl: string;
  let own: string;
  let file: ReturnType<typeof tokensFile>;

  before(async () => {
    file = tokensFile();
    const started = await startTestApp({ auth: { tokensFile: file.path } });
    app = started.app;
    const line = started.logs.lines.find((l) => /serving the embedded simulated cluster/i.test(String(l.msg)));
    simUrl = String(line!.url);
    own = new URL(simUrl).host;
  });
  after(async () => {
    await app.stop();
    file.remove();
  });

  const api = async (path: string) => (await send(simUrl, "GET", path, { host: own })).body;

  test("a cordon with Host: evil.example is refused with 403 and the node stays schedulable", async () => {
    const node = (await api("/api/v1/nodes")).items.find((n: any) => !n.spec.unschedulable).metadata.name;
    const before = await api(`/api/v1/nodes/${node}`);
    const reply = await send(simUrl, "PATCH", `/api/v1/nodes/${node}`, { host: "evil.example", "content-type": SMP }, CORDON);
    assert.equal(reply.status, 403);
    assert.deepEqual(reply.body, forbiddenHost("evil.example"));
    const after = await api(`/api/v1/nodes/${node}`);
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion);
    assert.equal(after.spec.unschedulable, undefined);
  });

  test("a text/plain eviction POSTed with a foreign Origin is refused with 403 and the pod keeps running", async () => {
    const pod = (await api("/api/v1/namespaces/shop/pods")).items.find((p: any) => p.status.phase === "Running");
    const path = `/api/v1/namespaces/shop/pods/${pod.metadata.name}/eviction`;
    const reply = await send(simUrl, "POST", path, { host: own, origin: "https://evil.example", "content-type": "text/plain" }, evictionOf(pod.metadata.name, "shop"));
    assert.equal(reply.status, 403);
    assert.deepEqual(reply.body, forbiddenOrigin("https://evil.example"));
    const after = await api(`/api/v1/namespaces/shop/pods/${pod.metadata.name}`);
    assert.equal(after.metadata.resourceVersion, pod.metadata.resourceVersion);
    assert.equal(after.metadata.deletionTimestamp, undefined);
  });

  test("the same eviction as text/plain without an Origin is refused with 415; as JSON from the same origin it evicts", async () => {
    const pod = (await api("/api/v1/namespaces/shop/pods")).items.find((p: any) => p.status.phase === "Running" && !p.metadata.deletionTimestamp);
    const path = `/api/v1/namespaces/shop/pods/${pod.metadata.name}/eviction`;
    const plain = await send(simUrl, "POST", path, { host: own, "content-type": "text/plain" }, evictionOf(pod.metadata.name, "shop"));
    assert.equal(plain.status, 415);
    assert.deepEqual(plain.body, unsupported("application/json, application/vnd.kubernetes.protobuf"));
    const untyped = await send(simUrl, "POST", path, { host: own }, evictionOf(pod.metadata.name, "shop"));
    assert.equal(untyped.status, 415);
    assert.equal((await api(`/api/v1/namespaces/shop/pods/${pod.metadata.name}`)).metadata.deletionTimestamp, undefined);
    const json = await send(simUrl, "POST", path, { host: own, origin: `http://${own}`, "content-type": "application/json" }, evictionOf(pod.metadata.name, "shop"));
    assert.equal(json.status, 201);
    assert.ok((await api(`/api/v1/namespaces/shop/pods/${pod.metadata.name}`)).metadata.deletionTimestamp, "the pod is terminating");
  });
});

describe("the simulator's request guards", () => {
  let sim: Simulator;
  let own: string;
  let node: string;

  before(async () => {
    sim = await startSimulator({ nodes: 3, seed: 4, churn: 0, clockSpeed: 0 });
    own = new URL(sim.url).host;
    node = sim.cluster.nodeNames()[1]!;
  });
  after(() => sim.stop());

  test("loopback names reach it by any spelling; other names do not, for reads too", async () => {
    const port = new URL(sim.url).port;
    for (const host of [own, `localhost:${port}`, `127.0.0.2:${port}`, `[::1]:${port}`]) {
      assert.equal((await send(sim.url, "GET", "/api/v1/nodes?limit=1", { host })).status, 200, host);
    }
    const read = await send(sim.url, "GET", "/api/v1/nodes", { host: `evil.example:${port}` });
    assert.equal(read.status, 403);
    assert.deepEqual(read.body, forbiddenHost(`evil.example:${port}`));
  });

  test("a patch must be a patch type, a PUT JSON; nothing is written otherwise", async () => {
    const before = sim.cluster.get(R.nodes, node)!;
    const patch = await send(sim.url, "PATCH", `/api/v1/nodes/${node}`, { host: own, "content-type": "application/json" }, CORDON);
    assert.equal(patch.status, 415);
    assert.deepEqual(patch.body, unsupported("application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml"));
    const put = await send(sim.url, "PUT", `/api/v1/nodes/${node}`, { host: own, "content-type": "application/x-www-form-urlencoded" }, JSON.stringify(before));
    assert.equal(put.status, 415);
    assert.deepEqual(put.body, unsupported("application/json, application/vnd.kubernetes.protobuf"));
    assert.equal(sim.cluster.get(R.nodes, node), before);
    const ok = await send(sim.url, "PATCH", `/api/v1/nodes/${node}`, { host: own, "content-type": `${SMP}; charset=utf-8` }, JSON.stringify({ metadata: { labels: { guarded: "yes" } } }));
    assert.equal(ok.status, 200);
    assert.equal(sim.cluster.get(R.nodes, node)!.metadata.labels!["guarded"], "yes");
  });

  test("a DELETE without a body needs no content type; with one it must be JSON", async () => {
    const ns = JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: "guarded" } });
    assert.equal((await send(sim.url, "POST", "/api/v1/namespaces", { host: own, "content-type": "application/json" }, ns)).status, 201);
    const typed = await send(sim.url, "DELETE", "/api/v1/namespaces/guarded", { host: own, "content-type": "text/plain" }, "{}");
    assert.equal(typed.status, 415);
    assert.ok(sim.cluster.get(R.namespaces, "guarded"));
    assert.equal((await send(sim.url, "DELETE", "/api/v1/namespaces/guarded", { host: own })).status, 200);
    assert.equal(sim.cluster.get(R.namespaces, "guarded"), undefined);
  });

  test("which Host names the server: loopback always, the address it listens on, any address literal when it listens on all", () => {
    const on = (listenHost: string): ServerIdentity => ({ listenHost, scheme: "http" });
    const table: [string, string | undefined, boolean][] = [
      ["127.0.0.1", "127.0.0.1:6443", true],
      ["127.0.0.1", "LOCALHOST:6443", true],
      ["127.0.0.1", "[::1]:6443", true],
      ["127.0.0.1", "[::ffff:127.0.0.1]:6443", true],
      ["127.0.0.1", "10.1.2.3:6443", false],
      ["127.0.0.1", "evil.example", false],
      ["127.0.0.1", "127.0.0.1.evil.example:6443", false],
      ["127.0.0.1", undefined, false],
      ["10.1.2.3", "10.1.2.3:6443", true],
      ["10.1.2.3", "127.0.0.1:6443", true],
      ["10.1.2.3", "10.1.2.4:6443", false],
      ["sim.internal", "SIM.internal:6443", true],
      ["sim.internal", "evil.example:6443", false],
      ["fd00::5", "[fd00::5]:6443", true],
      ["0.0.0.0", "192.168.7.7:6443", true],
      ["0.0.0.0", "[fe80::1]:6443", true],
      ["0.0.0.0", "evil.example:6443", false],
      ["::", "10.0.0.9", true],
    ];
    for (const [listen, host, own] of table) assert.equal(isOwnHost(host, on(listen)), own, `${host} listening on ${listen}`);
  });

  test("an Origin must be the server's own, scheme included; reads and writes alike", () => {
    const server: ServerIdentity = { listenHost: "127.0.0.1", scheme: "https" };
    const get = (origin: string) => refusal({ method: "GET", headers: { host: "127.0.0.1:6443", origin }, bodyLength: 0 }, server)?.code;
    assert.equal(get("https://127.0.0.1:6443"), undefined);
    assert.equal(get("http://127.0.0.1:6443"), 403);
    assert.equal(get("https://127.0.0.1:6444"), 403);
    assert.equal(get("null"), 403);
  });
});
