/**
 * The deployment as it ships, against a cluster that enforces RBAC: the rendered manifests are
 * applied to `sim --rbac --tls` with the real kubectl, the ServiceAccount's token is minted with
 * `kubectl create token`, and the real program runs in-cluster with only that token. It syncs,
 * records history, holds its Lease, samples metrics, cordons and drains. Then each rule of the
 * rendered RBAC is taken away in turn, and what fails is shown, worded as the cluster words it;
 * the table is written to test-artifacts/rbac-rule-removal.md. With --impersonate the cluster
 * judges the caller, and a drain asks it first (SelfSubjectAccessReview).
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { PACKAGE_ROOT } from "../../src/package-info.js";
import { runKubectl, spawnSimulator, type Run, type SimProcess } from "../sim/support.js";
import { startProgram, type RunningProgram } from "../support/program.js";
import { eventually } from "../support/sim-cluster.js";
import { bearer, tokensFile, TOKENS } from "../auth/support.js";
import { find, MANIFESTS, renderOverlay, renderWithComponents, type KubeObject } from "./render.js";

const SA = "system:serviceaccount:node-inventory:node-inventory";
const NODE_FIELDS = "clusters { name synced lastError metricsAvailable }";

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };
/** The program's JSON log lines with this message. */
const logLines = (program: RunningProgram, msg: string): { err: string; resource?: string }[] =>
  program
    .stdout()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l))
    .filter((l) => l.msg === msg);
/** The first JSON log line of the program with this message. */
const logLine = (program: RunningProgram, msg: string): { err: string } | undefined =>
  program
    .stdout()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l))
    .find((l) => l.msg === msg);
const describeRule = (rule: Rule) => `${rule.resources.join(",")}${rule.apiGroups[0] ? `.${rule.apiGroups[0]}` : ""}: ${rule.verbs.join(", ")}`;

describe("in-cluster with the rendered RBAC, against sim --rbac --tls", () => {
  let sim: SimProcess;
  let dir: string;
  let tokens: ReturnType<typeof tokensFile>;
  let objects: KubeObject[];
  let clusterRole: KubeObject;
  let leaseRole: KubeObject;
  let nodeLeaseRole: KubeObject;
  let worker: string;
  const kubectl = (...args: string[]): Promise<Run> => runKubectl(sim.kubeconfig, args);
  const apply = async (...docs: unknown[]) => {
    const r = await runKubectl(sim.kubeconfig, ["apply", "-f", "-"], { input: docs.map((d) => stringify(d)).join("---\n") });
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  };

  /** The real program, in-cluster: the environment a pod has, the minted token, nothing else. */
  const serve = (env: Record<string, string> = {}): Promise<RunningProgram> =>
    startProgram(["--port", "0", "--data-dir", "memory", "--service-account-dir", dir, "--auth-tokens-file", tokens.path, "--lease-duration", "2", "--simulator-fallback", "false"], {
      KUBERNETES_SERVICE_HOST: "127.0.0.1",
      KUBERNETES_SERVICE_PORT: new URL(sim.url).port,
      LEASE_NAMESPACE: "node-inventory",
      MUTATION_RATE_LIMIT: "0",
      ...env,
    });
  const gql = async (program: RunningProgram, query: string, variables: Record<string, unknown> = {}, token = TOKENS.viewer) => {
    const res = await fetch(`${program.url}/graphql`, { method: "POST", headers: { "content-type": "application/json", ...bearer(token) }, body: JSON.stringify({ query, variables }) });
    return (await res.json()) as { data?: any; errors?: { message: string; locations?: unknown; path?: unknown; extensions: { code: string } }[] };
  };
  const drain = (program: RunningProgram, node: string) =>
    gql(program, `mutation($n: String!) { drainNode(name: $n, options: { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true }) { id status message } }`, { n: node }, TOKENS.operator);
  const drainEnded = (program: RunningProgram, id: string) =>
    eventually(
      async () => {
        const op = (await gql(program, `query($id: ID!) { drainOperation(id: $id) { status message pods { name status reason } } }`, { id })).data?.drainOperation;
        return op && op.status !== "PENDING" && op.status !== "RUNNING" ? op : undefined;
      },
      "the drain to end",
      60_000,
    );
  const unschedulable = async (node: string) => (await kubectl("get", "node", node, "-o", "jsonpath={.spec.unschedulable}")).stdout;

  before(async () => {
    sim = await spawnSimulator(["--nodes", "6", "--seed", "7", "--rbac", "--tls", "--clock-speed", "30"]);
    objects = await renderOverlay("single");
    clusterRole = find(objects, "ClusterRole", "node-inventory");
    leaseRole = find(objects, "Role", "node-inventory-lease");
    nodeLeaseRole = find(objects, "Role", "node-inventory-node-leases");
    dir = await mkdtemp(join(tmpdir(), "ni-sa-rbac-"));
    tokens = tokensFile();
    const nodes = JSON.parse((await kubectl("get", "nodes", "-o", "json")).stdout).items as any[];
    // A worker without a pod of the payments ledger, whose PodDisruptionBudget allows no eviction.
    const ledger = JSON.parse((await kubectl("get", "pods", "-n", "payments", "-l", "app=ledger", "-o", "json")).stdout).items as any[];
    const ledgerNodes = new Set(ledger.map((p) => p.spec.nodeName));
    worker = nodes.map((n) => n.metadata.name).find((n: string) => !n.startsWith("control-plane") && !ledgerNodes.has(n))!;
    assert.ok(worker, "a worker to drain");
  });
  after(async () => {
    await sim?.stop();
    await rm(dir, { recursive: true, force: true });
    tokens?.remove();
  });

  test("kubectl apply -k of the single overlay creates every object; the ServiceAccount's token is minted", async () => {
    const applied = await kubectl("apply", "-k", join(MANIFESTS, "overlays", "single"));
    assert.equal(applied.code, 0, applied.stderr);
    const out = applied.stdout;
    assert.deepEqual(out.trim().split("\n").sort(), [
      "clusterrole.rbac.authorization.k8s.io/node-inventory created",
      "clusterrolebinding.rbac.authorization.k8s.io/node-inventory created",
      "deployment.apps/node-inventory created",
      "namespace/node-inventory created",
      "persistentvolumeclaim/node-inventory-data created",
      "poddisruptionbudget.policy/node-inventory created",
      "role.rbac.authorization.k8s.io/node-inventory-lease created",
      "role.rbac.authorization.k8s.io/node-inventory-node-leases created",
      "rolebinding.rbac.authorization.k8s.io/node-inventory-lease created",
      "rolebinding.rbac.authorization.k8s.io/node-inventory-node-leases created",
      "service/node-inventory created",
      "serviceaccount/node-inventory created",
    ]);
    const token = await kubectl("create", "token", "node-inventory", "-n", "node-inventory", "--duration=1h");
    assert.equal(token.code, 0, token.stderr);
    const ca = /^\s+certificate-authority-data: (\S+)$/m.exec(sim.kubeconfigText)![1]!;
    await writeFile(join(dir, "token"), token.stdout.trim());
    await writeFile(join(dir, "ca.crt"), Buffer.from(ca, "base64"));
    await writeFile(join(dir, "namespace"), "node-inventory");
  });

  test("the ServiceAccount can neither read secrets nor create pods (kubectl auth can-i)", async () => {
    const can = async (...args: string[]) => (await kubectl("auth", "can-i", ...args, "--as", SA)).stdout.trim();
    assert.equal(await can("get", "secrets", "-A"), "no");
    assert.equal(await can("list", "secrets", "-n", "node-inventory"), "no");
    assert.equal(await can("create", "pods", "-A"), "no");
    assert.equal(await can("create", "pods", "-n", "node-inventory"), "no");
    assert.equal(await can("impersonate", "users"), "no");
    assert.equal(await can("list", "nodes"), "yes");
    assert.equal(await can("create", "pods", "--subresource=eviction", "-A"), "yes");
    assert.equal(await can("update", "leases.coordination.k8s.io", "-n", "node-inventory"), "yes");
    assert.equal(await can("update", "leases.coordination.k8s.io", "-n", "kube-system"), "no");
  });

  test("with only that token it syncs, records history, holds its Lease, samples metrics, cordons and drains", async () => {
    const program = await serve();
    try {
      const ready = await eventually(
        async () => {
          const res = await fetch(`${program.url}/readyz`, { headers: { authorization: `Bearer ${TOKENS.viewer}` } });
          return res.status === 200 ? res.json() : undefined;
        },
        "ready",
        60_000,
      );
      assert.deepEqual((ready as any).checks["cluster:in-cluster"], { ok: true });
      const status = await eventually(
        async () => {
          const c = (await gql(program, `{ ${NODE_FIELDS} }`)).data?.clusters[0];
          return c?.synced && c.metricsAvailable ? c : undefined;
        },
        "synced with metrics",
        30_000,
      );
      assert.deepEqual(status, { name: "in-cluster", synced: true, lastError: null, metricsAvailable: true });
      const usage = (await gql(program, "{ nodes { totalCount edges { node { usage { cpuMillicores } } } } }")).data.nodes;
      assert.equal(usage.totalCount, 6);
      assert.ok(
        usage.edges.every((e: any) => e.node.usage?.cpuMillicores > 0),
        "every node's usage sampled",
      );
      const history = await eventually(
        async () => {
          const h = (await gql(program, "{ service { history { leaderOf recordedChanges leases { lease held holder } } } }")).data?.service.history;
          return h?.leaderOf.length && h.recordedChanges >= 6 ? h : undefined;
        },
        "history recorded",
        30_000,
      );
      assert.deepEqual(history.leaderOf, ["in-cluster"]);
      assert.match(history.leases[0].lease, /^node-inventory\/node-inventory-history-[0-9a-f]{12}$/);
      const lease = JSON.parse((await kubectl("get", "lease", history.leases[0].lease.split("/")[1], "-n", "node-inventory", "-o", "json")).stdout);
      assert.equal(lease.spec.holderIdentity, history.leases[0].holder);

      const cordoned = await gql(program, `mutation($n: String!) { cordonNode(name: $n, reason: "rbac test") { unschedulable } }`, { n: worker }, TOKENS.operator);
      assert.deepEqual(cordoned.data, { cordonNode: { unschedulable: true } });
      assert.equal(await unschedulable(worker), "true");
      await gql(program, `mutation($n: String!) { uncordonNode(name: $n) { name } }`, { n: worker }, TOKENS.operator);
      const started = await drain(program, worker);
      const done = await drainEnded(program, started.data.drainNode.id);
      assert.equal(done.status, "SUCCEEDED", done.message);
      assert.ok(done.pods.some((p: any) => p.status === "EVICTED"));
      assert.equal(await unschedulable(worker), "true");
    } finally {
      assert.equal((await program.terminate()).code, 0);
      await kubectl("uncordon", worker);
    }
  });

  test("each rule taken away in turn: what fails, and how clearly", async () => {
    const rules = clusterRole.rules as Rule[];
    const table: string[] = ["| rule taken away | what fails, as the service says it |", "|---|---|"];
    const roles = { cluster: clusterRole, lease: leaseRole, "node-leases": nodeLeaseRole };
    const cases: { name: string; role: keyof typeof roles; rules: Rule[] }[] = [
      ...rules.map((rule, i) => ({ name: describeRule(rule), role: "cluster" as const, rules: rules.filter((_, j) => j !== i) })),
      { name: `${describeRule((leaseRole.rules as Rule[])[0]!)} (Role in node-inventory)`, role: "lease", rules: [] },
      { name: `${describeRule((nodeLeaseRole.rules as Rule[])[0]!)} (Role in kube-node-lease)`, role: "node-leases", rules: [] },
    ];
    for (const c of cases) {
      await apply({ ...roles[c.role], rules: c.rules });
      const program = await serve();
      const seen: string[] = [];
      try {
        const key = c.name.split(":")[0];
        if (key === "nodes" || key === "pods") {
          const status = await eventually(
            async () => (await gql(program, `{ ${NODE_FIELDS} }`)).data?.clusters[0]?.lastError && (await gql(program, `{ ${NODE_FIELDS} }`)).data.clusters[0],
            "the cluster's error",
            30_000,
          );
          const resource = key;
          const expected = `${resource} is forbidden: User "${SA}" cannot list resource "${resource}" in API group "" at the cluster scope`;
          assert.equal(status.lastError, expected);
          assert.equal(status.synced, false);
          const readiness = (await (await fetch(`${program.url}/readyz`, { headers: { authorization: `Bearer ${TOKENS.viewer}` } })).json()) as any;
          assert.deepEqual(readiness.checks["cluster:in-cluster"], { ok: true, detail: `forbidden: ${expected}` });
          seen.push(
            `not synced; \`clusters { lastError }\`: ${expected}; \`/readyz\` check \`cluster:in-cluster\`: \`forbidden: ${resource} is forbidden: …\` (ready: a failed cluster never holds the others back)`,
          );
        } else {
          await eventually(async () => (await gql(program, `{ ${NODE_FIELDS} }`)).data?.clusters[0]?.synced, "synced", 30_000);
        }
        if (key === "nodes.metrics.k8s.io") {
          const line = await eventually(() => logLine(program, "metrics poll failed"), "the metrics poll refused", 30_000);
          const expected = `nodes.metrics.k8s.io is forbidden: User "${SA}" cannot list resource "nodes" in API group "metrics.k8s.io" at the cluster scope`;
          assert.equal(line.err, `GET /apis/metrics.k8s.io/v1beta1/nodes: ${expected}`);
          const c = (await gql(program, `{ ${NODE_FIELDS} nodes(first: 1) { edges { node { usage { cpuMillicores } } } } }`)).data;
          assert.equal(c.clusters[0].metricsAvailable, false);
          assert.equal(c.nodes.edges[0].node.usage, null);
          seen.push(`usage is null, \`clusters { metricsAvailable }\` false; logged at each poll: "metrics poll failed" ${expected}`);
        }
        if (c.role === "lease") {
          const line = await eventually(() => logLine(program, "lease check failed"), "the lease check refused", 30_000);
          assert.match(
            line.err,
            new RegExp(
              `^GET /apis/coordination.k8s.io/v1/namespaces/node-inventory/leases/node-inventory-history-[0-9a-f]{12}: leases.coordination.k8s.io "node-inventory-history-[0-9a-f]{12}" is forbidden: User "${SA}" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "node-inventory"$`,
            ),
          );
          const history = (await gql(program, "{ service { history { leaderOf leases { held holder } } } }")).data.service.history;
          assert.deepEqual(history, { leaderOf: [], leases: [{ held: false, holder: null }] });
          seen.push(
            `no history is recorded (\`service { history { leaderOf } }\` is empty, no Lease holder); logged with backoff: "lease check failed" leases.coordination.k8s.io "node-inventory-history-…" is forbidden: … cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "node-inventory"`,
          );
        }
        if (key === "events" || c.role === "node-leases") {
          const resource = key === "events" ? "events" : "node leases";
          const line = await eventually(() => logLines(program, "list/watch failed: retrying").find((l) => l.resource === resource), `the ${resource} watch refused`, 30_000);
          const expected =
            key === "events"
              ? `events is forbidden: User "${SA}" cannot list resource "events" in API group "" at the cluster scope`
              : `leases.coordination.k8s.io is forbidden: User "${SA}" cannot list resource "leases" in API group "coordination.k8s.io" in the namespace "kube-node-lease"`;
          assert.equal(line.err, expected);
          if (key !== "events") assert.equal((await gql(program, `query($n: String!) { node(name: $n) { heartbeatTime } }`, { n: worker })).data.node.heartbeatTime, null);
          seen.push(
            `${key === "events" ? "no events about nodes are cached or recorded" : "`Node.heartbeatTime` is null"} (the inventory itself is synced and ready); logged with backoff: "list/watch failed: retrying" (resource ${resource}) ${expected}`,
          );
        }
        // A drain of a worker, as an operator would start it.
        const started = await drain(program, worker);
        if (started.errors) {
          seen.push(`drainNode: ${started.errors[0]!.extensions.code} ${started.errors[0]!.message}`);
          if (key === "nodes" || key === "pods") {
            assert.deepEqual(started.errors[0], {
              message: `cluster "in-cluster" refuses the service's own account: ${key} is forbidden: User "${SA}" cannot list resource "${key}" in API group "" at the cluster scope`,
              locations: started.errors[0]!.locations,
              path: ["drainNode"],
              extensions: { code: "UNAVAILABLE" },
            });
          }
        } else {
          const done = await drainEnded(program, started.data.drainNode.id);
          if (key === "pods/eviction") {
            assert.equal(done.status, "FAILED");
            assert.match(done.message, new RegExp(`pod\\(s\\) not removed: .*pods "[^"]+" is forbidden: User "${SA}" cannot create resource "pods/eviction" in API group "" in the namespace`));
          } else if (key === "daemonsets.apps") {
            assert.equal(done.status, "FAILED");
            assert.match(done.message, new RegExp(`^drain failed: daemonsets.apps "[^"]+" is forbidden: User "${SA}" cannot get resource "daemonsets" in API group "apps" in the namespace "[^"]+"$`));
          } else if (key === "pods") {
            assert.equal(done.status, "FAILED");
            assert.match(done.message, new RegExp(`pods is forbidden: User "${SA}" cannot list resource "pods"`));
          } else {
            assert.equal(done.status, "SUCCEEDED", done.message);
          }
          seen.push(`drain ${done.status}${done.status === "SUCCEEDED" ? "" : `: ${done.message.replace(/ in the namespace "[^"]+"/, ' in the namespace "…"')}`}`);
        }
      } finally {
        assert.equal((await program.terminate()).code, 0);
        await kubectl("uncordon", worker);
        await apply(roles[c.role]);
      }
      table.push(`| ${c.name} | ${seen.join("; ").replaceAll("|", "\\|")} |`);
    }
    await mkdir(join(PACKAGE_ROOT, "test-artifacts"), { recursive: true });
    await writeFile(join(PACKAGE_ROOT, "test-artifacts", "rbac-rule-removal.md"), table.join("\n") + "\n");
    console.log(table.join("\n"));
  });

  test("with --impersonate the cluster judges the caller, and a drain asks it before it cordons anything", async () => {
    const withComponent = await renderWithComponents("single", ["impersonate"]);
    await apply(find(withComponent, "ClusterRole", "node-inventory-impersonate"), find(withComponent, "ClusterRoleBinding", "node-inventory-impersonate"));
    assert.equal((await kubectl("auth", "can-i", "impersonate", "users", "--as", SA)).stdout.trim(), "yes");
    const program = await serve({ IMPERSONATE_CALLERS: "true" });
    try {
      await eventually(async () => (await gql(program, `{ ${NODE_FIELDS} }`)).data?.clusters[0]?.synced, "synced", 30_000);
      // otto (the operator of the tokens file) has no permission of his own in the cluster.
      const refused = await gql(program, `mutation($n: String!) { cordonNode(name: $n) { unschedulable } }`, { n: worker }, TOKENS.operator);
      assert.equal(refused.errors?.[0]?.extensions.code, "FORBIDDEN");
      assert.equal(refused.errors?.[0]?.message, `cluster "in-cluster" refused: nodes "${worker}" is forbidden: User "otto" cannot get resource "nodes" in API group "" at the cluster scope`);
      // Now otto may read and cordon nodes, list pods and read DaemonSets, but evict nothing.
      await apply(
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRole",
          metadata: { name: "cordoner" },
          rules: [
            { apiGroups: [""], resources: ["nodes"], verbs: ["get", "patch"] },
            { apiGroups: [""], resources: ["pods"], verbs: ["list", "get"] },
            { apiGroups: ["apps"], resources: ["daemonsets"], verbs: ["get"] },
          ],
        },
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRoleBinding",
          metadata: { name: "otto-cordoner" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cordoner" },
          subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "otto" }],
        },
      );
      const drained = await drain(program, worker);
      assert.equal(drained.errors?.[0]?.extensions.code, "FORBIDDEN");
      assert.match(
        drained.errors![0]!.message,
        new RegExp(
          `^cluster "in-cluster" refused: otto may not drain node "${worker}": cannot create pods/eviction in namespace "[^"]+"(, create pods/eviction in namespace "[^"]+")*.*; nothing was changed$`,
        ),
      );
      assert.equal(await unschedulable(worker), "", "the node was not cordoned");
      const cordoned = await gql(program, `mutation($n: String!) { cordonNode(name: $n) { unschedulable } }`, { n: worker }, TOKENS.operator);
      assert.deepEqual(cordoned.data, { cordonNode: { unschedulable: true } });
      const annotations = JSON.parse((await kubectl("get", "node", worker, "-o", "json")).stdout).metadata.annotations as Record<string, string>;
      assert.ok(
        Object.values(annotations).some((v) => v.includes('"actor":"otto"')),
        "the cordon is the caller's",
      );
      // Without the component's binding the service may not act as anyone: the cluster says so.
      assert.equal((await kubectl("delete", "clusterrolebinding", "node-inventory-impersonate")).code, 0);
      const unimpersonated = await gql(program, `mutation($n: String!) { uncordonNode(name: $n) { unschedulable } }`, { n: worker }, TOKENS.operator);
      assert.equal(unimpersonated.errors?.[0]?.extensions.code, "FORBIDDEN");
      assert.equal(
        unimpersonated.errors?.[0]?.message,
        `cluster "in-cluster" refused: users "otto" is forbidden: User "${SA}" cannot impersonate resource "users" in API group "" at the cluster scope`,
      );
    } finally {
      assert.equal((await program.terminate()).code, 0);
      await kubectl("uncordon", worker);
    }
  });
});
