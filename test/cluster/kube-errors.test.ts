import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { KubeConfig } from "@kubernetes/client-node";
import { hasStatusCause, isConflict, isForbidden, isNotFound, isTooManyRequests, KubeApiError, KubeClient, kubeErrorDetail, KubeRequestError } from "../../src/cluster/kube-client.js";
import { startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const PREDICATES = { isNotFound, isConflict, isTooManyRequests, isForbidden } as const;
type Predicate = keyof typeof PREDICATES;

/** Which predicates hold for `error`. */
const holding = (error: unknown) => (Object.keys(PREDICATES) as Predicate[]).filter((name) => PREDICATES[name](error));

describe("Kubernetes API errors", () => {
  let sim: SimWithKubeconfig;
  let client: KubeClient;

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 2, seed: 1 });
    const config = new KubeConfig();
    config.loadFromFile(sim.kubeconfigPath);
    client = new KubeClient(config);
  });
  after(() => sim.stop());

  test("a 404 from the apiserver keeps its own message apart from the request, and is NotFound only", async () => {
    const error = await client.getJson("/api/v1/namespaces/default/pods/nope").then(
      () => assert.fail("expected a 404"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof KubeApiError);
    assert.deepEqual(
      { statusCode: error.statusCode, reason: error.reason, statusMessage: error.statusMessage, message: error.message },
      { statusCode: 404, reason: "NotFound", statusMessage: 'pods "nope" not found', message: 'GET /api/v1/namespaces/default/pods/nope: pods "nope" not found' },
    );
    assert.deepEqual(holding(error), ["isNotFound"]);
    assert.equal(kubeErrorDetail(error), 'pods "nope" not found');
  });

  test("a 409 from a stale update is Conflict only", async () => {
    const lease = { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name: "kube-errors", namespace: "kube-system" }, spec: {} };
    const created = await client.request<any>("POST", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", {}, lease);
    const path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-errors";
    await client.request("PUT", path, {}, { ...created, spec: { holderIdentity: "first" } });
    const error = await client.request("PUT", path, {}, { ...created, spec: { holderIdentity: "second" } }).then(
      () => assert.fail("expected a 409"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof KubeApiError);
    assert.equal(error.statusCode, 409);
    assert.deepEqual(holding(error), ["isConflict"]);
  });

  // kubectl's apierrors: the Status's reason decides; the code only when the reason is missing or unknown.
  const cases: [string, KubeApiError, Predicate[]][] = [
    ["reason NotFound", new KubeApiError(404, "x", { reason: "NotFound" }), ["isNotFound"]],
    ["a bare 404 (no Status)", new KubeApiError(404, "HTTP 404"), ["isNotFound"]],
    ["a 404 with a reason we do not know", new KubeApiError(404, "x", { reason: "SomethingNew" }), ["isNotFound"]],
    ["a 404 whose reason says otherwise", new KubeApiError(404, "x", { reason: "Forbidden" }), ["isForbidden"]],
    ["reason Conflict", new KubeApiError(409, "x", { reason: "Conflict" }), ["isConflict"]],
    ["AlreadyExists is not a conflict", new KubeApiError(409, "x", { reason: "AlreadyExists" }), []],
    ["reason TooManyRequests", new KubeApiError(429, "x", { reason: "TooManyRequests" }), ["isTooManyRequests"]],
    ["a bare 429", new KubeApiError(429, "HTTP 429"), ["isTooManyRequests"]],
    ["reason Forbidden", new KubeApiError(403, "x", { reason: "Forbidden" }), ["isForbidden"]],
    ["a 500", new KubeApiError(500, "x", { reason: "InternalError" }), []],
  ];
  for (const [name, error, expected] of cases) test(`predicates: ${name}`, () => assert.deepEqual(holding(error), expected));

  test("predicates hold for nothing but a KubeApiError", () => {
    for (const error of [new Error("boom"), new KubeRequestError("GET /api", "no answer within 5 ms"), { statusCode: 404 }, undefined]) {
      assert.deepEqual(holding(error), []);
    }
  });

  test("hasStatusCause reads the causes' types (JSON `reason`)", () => {
    const terminating = new KubeApiError(403, "x", { reason: "Forbidden", causes: [{ reason: "NamespaceTerminating", message: "namespace a is being terminated", field: "metadata.namespace" }] });
    assert.equal(hasStatusCause(terminating, "NamespaceTerminating"), true);
    assert.equal(hasStatusCause(terminating, "DisruptionBudget"), false);
    assert.equal(hasStatusCause(new KubeApiError(403, "x", { reason: "Forbidden" }), "NamespaceTerminating"), false);
  });

  test("a request that gets no answer in time says so without the request line", async () => {
    const error = await client.request("GET", "/api/v1/nodes", { watch: true }, undefined, { timeoutMs: 50 }).then(
      () => assert.fail("expected a timeout"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof KubeRequestError);
    assert.equal(error.message, "GET /api/v1/nodes: no answer within 50 ms");
    assert.equal(kubeErrorDetail(error), "no answer within 50 ms");
  });
});
