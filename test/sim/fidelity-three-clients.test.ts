/**
 * The same checks through three independent clients (kubectl, the Python
 * client, client-node) against one simulator with authentication and RBAC,
 * each asserting what the apiserver answers: the objects, and for a refusal
 * its exact status code, reason and message (kubectl: the line it prints).
 * The clients never skip: a missing kubectl or python3-kubernetes fails.
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSimulator, R, type Simulator } from "../../src/sim/index.js";
import { fidelityClients, kubectlMessage, type FidelityClient, type Outcome, type Refusal } from "./fidelity-clients.js";

interface Expected {
  code: number;
  reason: string;
  message: string;
  details?: { kind?: string; name?: string; causes?: { field?: string; message?: string; reason?: string }[] };
}

/** The refusal a client reports, against the apiserver's Status (kubectl: the line it prints for it). */
function assertRefused(client: FidelityClient, outcome: Outcome<unknown>, expected: Expected, kubectlLine = kubectlMessage(expected)): void {
  assert.ok(outcome.refused, `${client.name}: expected a refusal, got ${JSON.stringify(outcome.ok)?.slice(0, 200)}`);
  const r: Refusal = outcome.refused;
  if (client.name === "kubectl") {
    assert.equal(r.text!.split("\n")[0], kubectlLine);
    return;
  }
  assert.deepEqual({ code: r.code, reason: r.reason, message: r.message }, { code: expected.code, reason: expected.reason, message: expected.message });
  if (expected.details) for (const [k, v] of Object.entries(expected.details)) assert.deepEqual(r.details?.[k], v, `details.${k}`);
}

function ok<T>(outcome: Outcome<T>, what: string): T {
  assert.ok(!outcome.refused, `${what}: refused ${JSON.stringify(outcome.refused)}`);
  return outcome.ok as T;
}

const RFC1123_LABEL = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const RFC1123_SUBDOMAIN = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

describe("three clients, one apiserver's answers", () => {
  let sim: Simulator;
  let dir: string;
  let clients: FidelityClient[];

  before(async () => {
    // TLS: kubectl sends a bearer token only over TLS (clientcmd reads credentials for secure servers alone).
    sim = await startSimulator({ nodes: 12, seed: 21, churn: 0, clockSpeed: 0, rbac: true, tls: true, bookmarkIntervalMs: 300 });
    dir = await mkdtemp(join(tmpdir(), "fidelity-"));
    await sim.writeKubeconfig(join(dir, "kubeconfig"));
    clients = fidelityClients(join(dir, "kubeconfig"), sim.kubeconfig());
  });
  after(async () => {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const each = (title: string, check: (client: FidelityClient) => Promise<void>) =>
    test(title, async () => {
      for (const client of clients) await check(client);
    });

  each("a list with label and field selectors names the pods the store holds", async (client) => {
    const ledger = sim.cluster.list(R.pods, "payments").filter((p) => p.metadata.labels?.["app"] === "ledger").map((p) => p.metadata.name).sort();
    assert.equal(ledger.length, 2);
    const byLabel = ok(await client.listPods("payments", { labelSelector: "app=ledger" }), client.name);
    assert.deepEqual(byLabel.names, ledger, client.name);
    // kubectl -o json prints a List of its own, without the server's resourceVersion.
    if (client.name !== "kubectl") assert.equal(byLabel.resourceVersion, String(sim.cluster.store.resourceVersion), client.name);
    const running = sim.cluster.list(R.pods, "shop").filter((p) => (p.status as any).phase === "Running").map((p) => p.metadata.name).sort();
    assert.deepEqual(ok(await client.listPods("shop", { fieldSelector: "status.phase=Running" }), client.name).names, running, client.name);
  });

  each("paging with limit and continue returns every pod once, in pages", async (client) => {
    const all = sim.cluster.list(R.pods, "shop").map((p) => p.metadata.name).sort();
    const paged = ok(await client.pagedPods("shop", 4), client.name);
    assert.deepEqual(paged.names, all, client.name);
    assert.equal(paged.pages, Math.ceil(all.length / 4), `${client.name} pages`);
  });

  each("a watch from a resourceVersion replays what came after it, then bookmarks until timeoutSeconds", async (client) => {
    const from = String(sim.cluster.store.resourceVersion);
    const names = [`w1-${client.name}`, `w2-${client.name}`];
    for (const name of names) sim.cluster.create(R.configmaps, { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data: {} });
    const events = ok(await client.watchConfigMaps("default", from, 2), client.name);
    assert.deepEqual(events.filter((e) => e.type !== "BOOKMARK"), names.map((name) => ({ type: "ADDED", name })), client.name);
    assert.ok(events.some((e) => e.type === "BOOKMARK"), `${client.name} saw a BOOKMARK`);
  });

  each("query parameters are decoded as the apiserver decodes them, with its messages", async (client) => {
    assertRefused(client, await client.listPodsWith("shop", { limit: "abc" }), { code: 400, reason: "BadRequest", message: 'strconv.ParseInt: parsing "abc": invalid syntax' });
    const forbidden = "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided";
    assertRefused(client, await client.listPodsWith("shop", { resourceVersionMatch: "NotOlderThan" }), {
      code: 422,
      reason: "Invalid",
      message: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: ${forbidden}`,
      details: { kind: "ListOptions", name: "", causes: [{ reason: "FieldValueForbidden", message: forbidden, field: "resourceVersionMatch" }] },
    });
  });

  each("a list at a compacted resourceVersion with Exact is 410 Expired", async (client) => {
    assertRefused(client, await client.listPodsWith("shop", { resourceVersion: "1", resourceVersionMatch: "Exact" }), { code: 410, reason: "Expired", message: "The resourceVersion for the provided list is too old." });
  });

  test("a list at a resourceVersion far ahead waits, then answers 504 Too large resource version (the Python client and client-node)", async () => {
    for (const client of clients.filter((c) => c.name !== "kubectl")) {
      const outcome = await client.listPodsWith("shop", { resourceVersion: "999999999" });
      const current = sim.cluster.store.resourceVersion;
      assertRefused(client, outcome, { code: 504, reason: "Timeout", message: `Timeout: Too large resource version: 999999999, current: ${current}`, details: { causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }] } });
      assert.equal(outcome.refused!.details.retryAfterSeconds, 1);
    }
  });

  each("names are validated as the apiserver validates them, for every kind", async (client) => {
    const ns = `Bad_NS_${client.name.replace("-", "_")}`;
    const cause = { reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(ns)}: ${RFC1123_LABEL}`, field: "metadata.name" };
    assertRefused(client, await client.createNamespace(ns), { code: 422, reason: "Invalid", message: `Namespace ${JSON.stringify(ns)} is invalid: metadata.name: ${cause.message}`, details: { kind: "Namespace", name: ns, causes: [cause] } });
    const cm = "Bad_CM";
    const cmCause = { reason: "FieldValueInvalid", message: `Invalid value: "Bad_CM": ${RFC1123_SUBDOMAIN}`, field: "metadata.name" };
    const cmMessage = `ConfigMap "Bad_CM" is invalid: metadata.name: ${cmCause.message}`;
    // kubectl create configmap wraps the server's message in its own words.
    assertRefused(client, await client.createConfigMap("default", cm, { a: "1" }), { code: 422, reason: "Invalid", message: cmMessage, details: { kind: "ConfigMap", name: cm, causes: [cmCause] } }, `error: failed to create configmap: ${cmMessage}`);
    assert.equal(sim.cluster.get(R.namespaces, ns), undefined);
  });

  each("patches in four types: JSON, merge, strategic and apply, and an apply conflict between managers", async (client) => {
    const name = `patched-${client.name}`;
    ok(await client.createConfigMap("default", name, { a: "1" }), client.name);
    assert.deepEqual(ok(await client.patchConfigMap("default", name, "json", [{ op: "add", path: "/data/b", value: "2" }]), client.name).data, { a: "1", b: "2" });
    assert.deepEqual(ok(await client.patchConfigMap("default", name, "merge", { data: { a: null } }), client.name).data, { b: "2" });
    assert.deepEqual(ok(await client.patchConfigMap("default", name, "strategic", { metadata: { labels: { tier: "web" } } }), client.name).labels, { tier: "web" });
    const config = (value: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data: { c: value } });
    const owner = `fidelity-${client.name}`;
    assert.deepEqual(ok(await client.patchConfigMap("default", name, "apply", config("3"), { manager: owner }), client.name).data, { b: "2", c: "3" });
    const conflict = await client.patchConfigMap("default", name, "apply", config("4"), { manager: "other" });
    const message = `Apply failed with 1 conflict: conflict with ${JSON.stringify(owner)}: .data.c`;
    assertRefused(client, conflict, { code: 409, reason: "Conflict", message, details: { causes: [{ reason: "FieldManagerConflict", message: `conflict with ${JSON.stringify(owner)}`, field: ".data.c" }] } }, `error: ${message}`);
    assert.deepEqual(ok(await client.patchConfigMap("default", name, "apply", config("4"), { manager: "other", force: true }), client.name).data, { b: "2", c: "4" });
    const managers = ((sim.cluster.get(R.configmaps, name, "default")!.metadata as any).managedFields as any[]).map((e) => `${e.manager}/${e.operation}`);
    assert.ok(managers.includes("other/Apply"), `${client.name}: ${managers}`);
    assert.ok(!managers.includes(`${owner}/Apply`), `${client.name}: the forced apply took .data.c, the owner's only field: ${managers}`);
  });

  each("eviction: a free pod is evicted, one its PodDisruptionBudget protects is refused with 429", async (client) => {
    const free = sim.cluster.list(R.pods, "shop").find((p) => (p.status as any).phase === "Running" && !p.metadata.deletionTimestamp)!;
    ok(await client.evict("shop", free.metadata.name), client.name);
    assert.ok(sim.cluster.get(R.pods, free.metadata.name, "shop")!.metadata.deletionTimestamp, `${client.name}: the evicted pod is terminating`);
    const ledger = sim.cluster.list(R.pods, "payments").find((p) => p.metadata.labels?.["app"] === "ledger")!;
    const message = "Cannot evict pod as it would violate the pod's disruption budget.";
    // kubectl's drain prints the server's message in its retry line.
    assertRefused(client, await client.evict("payments", ledger.metadata.name), {
      code: 429,
      reason: "TooManyRequests",
      message,
      details: { causes: [{ reason: "DisruptionBudget", message: "The disruption budget ledger needs 2 healthy pods and has 2 currently" }] },
    }, `error when evicting pods/${JSON.stringify(ledger.metadata.name)} -n "payments" (will retry after 5s): ${message}`);
  });

  each("SelfSubjectAccessReview answers for the caller", async (client) => {
    assert.equal(ok(await client.canI("list", "pods", "shop"), client.name), true, client.name);
  });

  each("TokenRequest issues a ServiceAccount token for the asked duration", async (client) => {
    const token = ok(await client.token("shop", "default", 3600), client.name);
    const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8"));
    assert.equal(claims.sub, "system:serviceaccount:shop:default", client.name);
    assert.equal(claims.exp - claims.iat, 3600, client.name);
  });

  each("metrics.k8s.io lists a NodeMetrics for every node", async (client) => {
    assert.deepEqual(ok(await client.nodeMetricNames(), client.name).sort(), sim.cluster.nodeNames().sort(), client.name);
  });
});
