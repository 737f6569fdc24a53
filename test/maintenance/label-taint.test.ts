import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import type { App } from "../../src/app/create-app.js";
import { graphql, startTestApp } from "../support/app.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";
import { bearer, tokensFile, TOKENS } from "../auth/support.js";

const run = promisify(execFile);

const LABEL = `mutation($n: String!, $set: [KeyValueInput!], $remove: [String!], $overwrite: Boolean, $reason: String) {
  labelNode(name: $n, set: $set, remove: $remove, overwrite: $overwrite, reason: $reason) { name labels { key value } }
}`;
const TAINT = `mutation($n: String!, $add: [TaintInput!], $remove: [TaintRemovalInput!], $overwrite: Boolean, $reason: String) {
  taintNode(name: $n, add: $add, remove: $remove, overwrite: $overwrite, reason: $reason) { name taints { key value effect } }
}`;
const EVENTS = `query($n: String, $kinds: [MaintenanceEventKind!]) { maintenanceEvents(filter: { node: $n, kinds: $kinds }) { edges { node { kind actor reason detail } } } }`;
const CHANGES = `query($n: String) { nodeChanges(filter: { node: $n, kinds: [LABELS, TAINTS] }) { edges { node { kind key from to actor } } } }`;

interface Outcome {
  ok: boolean;
  /** The refusal, with the node's name as NODE (the two sides work on two nodes). */
  message?: string;
}

/**
 * Each case runs `kubectl label|taint` on one node and labelNode/taintNode with the same inputs
 * on another, both starting from `given`: the outcome (refusal and its message) and the
 * resulting labels or taints must agree. `code` is the API's code for a refusal; `exact`
 * false compares only the start of messages where kubectl prints a Go struct.
 */
interface Case<I> {
  name: string;
  given: string[];
  kubectl: string[];
  api: I;
  code?: "BAD_USER_INPUT" | "NOT_FOUND";
  exact?: boolean;
}

type LabelInput = { set?: { key: string; value: string }[]; remove?: string[]; overwrite?: boolean };
type TaintInput = { add?: { key: string; value?: string; effect: string }[]; remove?: { key: string; effect?: string }[]; overwrite?: boolean };

const LONG = "a".repeat(64);

// Keys are unique per case, so cases share the two nodes without resetting them.
const LABEL_CASES: Case<LabelInput>[] = [
  { name: "a new label", given: [], kubectl: ["l1=prod"], api: { set: [{ key: "l1", value: "prod" }] } },
  { name: "the same value again, without overwrite: nothing changes", given: ["l2=prod"], kubectl: ["l2=prod"], api: { set: [{ key: "l2", value: "prod" }] } },
  { name: "another value without overwrite is refused", given: ["l3=prod"], kubectl: ["l3=staging"], api: { set: [{ key: "l3", value: "staging" }] }, code: "BAD_USER_INPUT" },
  { name: "another value with overwrite", given: ["l4=prod"], kubectl: ["l4=staging", "--overwrite"], api: { set: [{ key: "l4", value: "staging" }], overwrite: true } },
  { name: "a removal", given: ["l5=prod"], kubectl: ["l5-"], api: { remove: ["l5"] } },
  { name: "removing a label the node lacks is no error", given: [], kubectl: ["l6-"], api: { remove: ["l6"] } },
  { name: "a prefixed key and an empty value", given: [], kubectl: ["example.com/l7="], api: { set: [{ key: "example.com/l7", value: "" }] } },
  { name: "a value too long", given: [], kubectl: [`l8=${LONG}`], api: { set: [{ key: "l8", value: LONG }] }, code: "BAD_USER_INPUT" },
  { name: "a key the apiserver refuses", given: [], kubectl: ["Bad_Key!=x"], api: { set: [{ key: "Bad_Key!", value: "x" }] }, code: "BAD_USER_INPUT" },
  { name: "a key with two slashes", given: [], kubectl: ["a/b/l10=x"], api: { set: [{ key: "a/b/l10", value: "x" }] }, code: "BAD_USER_INPUT" },
  { name: "set and remove one key", given: [], kubectl: ["l11=x", "l11-"], api: { set: [{ key: "l11", value: "x" }], remove: ["l11"] }, code: "BAD_USER_INPUT" },
  {
    name: "the last of two values wins",
    given: [],
    kubectl: ["l12=a", "l12=b"],
    api: {
      set: [
        { key: "l12", value: "a" },
        { key: "l12", value: "b" },
      ],
    },
  },
];

const TAINT_CASES: Case<TaintInput>[] = [
  { name: "a new taint", given: [], kubectl: ["t1=gpu:NoSchedule"], api: { add: [{ key: "t1", value: "gpu", effect: "NoSchedule" }] } },
  {
    name: "the same taint again without overwrite is refused",
    given: ["t2=gpu:NoSchedule"],
    kubectl: ["t2=gpu:NoSchedule"],
    api: { add: [{ key: "t2", value: "gpu", effect: "NoSchedule" }] },
    code: "BAD_USER_INPUT",
  },
  {
    name: "another value without overwrite is refused",
    given: ["t3=gpu:NoSchedule"],
    kubectl: ["t3=cpu:NoSchedule"],
    api: { add: [{ key: "t3", value: "cpu", effect: "NoSchedule" }] },
    code: "BAD_USER_INPUT",
  },
  {
    name: "another value with overwrite",
    given: ["t4=gpu:NoSchedule"],
    kubectl: ["t4=cpu:NoSchedule", "--overwrite"],
    api: { add: [{ key: "t4", value: "cpu", effect: "NoSchedule" }], overwrite: true },
  },
  { name: "the same key with another effect is another taint", given: ["t5=gpu:NoSchedule"], kubectl: ["t5:NoExecute"], api: { add: [{ key: "t5", effect: "NoExecute" }] } },
  { name: "removal by key and effect", given: ["t6=gpu:NoSchedule", "t6:NoExecute"], kubectl: ["t6:NoSchedule-"], api: { remove: [{ key: "t6", effect: "NoSchedule" }] } },
  { name: "removal by key takes every effect", given: ["t7=gpu:NoSchedule", "t7:NoExecute"], kubectl: ["t7-"], api: { remove: [{ key: "t7" }] } },
  { name: "removing a taint the node lacks is refused", given: [], kubectl: ["t8-"], api: { remove: [{ key: "t8" }] }, code: "NOT_FOUND" },
  { name: "removing a key and effect the node lacks is refused", given: ["t9:NoExecute"], kubectl: ["t9:NoSchedule-"], api: { remove: [{ key: "t9", effect: "NoSchedule" }] }, code: "NOT_FOUND" },
  { name: "an unknown effect", given: [], kubectl: ["t10:Bogus"], api: { add: [{ key: "t10", effect: "Bogus" }] }, code: "BAD_USER_INPUT" },
  { name: "a bad key", given: [], kubectl: ["Bad_Key!=v:NoSchedule"], api: { add: [{ key: "Bad_Key!", value: "v", effect: "NoSchedule" }] }, code: "BAD_USER_INPUT" },
  { name: "a bad value", given: [], kubectl: ["t12=bad!:NoSchedule"], api: { add: [{ key: "t12", value: "bad!", effect: "NoSchedule" }] }, code: "BAD_USER_INPUT" },
  {
    name: "one taint twice",
    given: [],
    kubectl: ["t13=a:NoSchedule", "t13=b:NoSchedule"],
    api: {
      add: [
        { key: "t13", value: "a", effect: "NoSchedule" },
        { key: "t13", value: "b", effect: "NoSchedule" },
      ],
    },
    code: "BAD_USER_INPUT",
    exact: false,
  },
  {
    name: "add and remove one taint",
    given: [],
    kubectl: ["t14=a:NoSchedule", "t14-"],
    api: { add: [{ key: "t14", value: "a", effect: "NoSchedule" }], remove: [{ key: "t14" }] },
    code: "BAD_USER_INPUT",
    exact: false,
  },
];

/** kubectl's error line without "error: " and its usage hint; the node's name as NODE. */
function kubectlMessage(stderr: string, node: string): string {
  const line = stderr.split("\n").find((l) => l.startsWith("error: ")) ?? stderr;
  return line
    .replace(/^error: /, "")
    .replace(/^The /, "")
    .split(node)
    .join("NODE")
    .trim();
}

describe("labelNode and taintNode do what kubectl label and kubectl taint do, refusals included", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;
  let ours: string;
  let theirs: string;

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 3, seed: 21, clockSpeed: 0 });
    ({ app, url } = await startTestApp(
      { clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] }, auth: { mutationRateLimit: 0 } },
      { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200 } },
    ));
    [ours, theirs] = sim.sim.cluster.nodeNames().filter((n) => !n.startsWith("control-plane")) as [string, string];
    await eventually(async () => (await graphql(url, `{ node(name: "${ours}") { name } }`)).body.data?.node?.name, "the node in the cache", 20_000);
  });
  after(async () => {
    await app.stop();
    await sim.stop();
  });

  async function kubectl(verb: "label" | "taint", node: string, args: string[]): Promise<Outcome> {
    try {
      await run("kubectl", ["--kubeconfig", sim.kubeconfigPath, verb, "node", node, ...args]);
      return { ok: true };
    } catch (error) {
      return { ok: false, message: kubectlMessage((error as { stderr: string }).stderr, node) };
    }
  }

  const labelsOf = (node: string, prefix: (k: string) => boolean) =>
    Object.entries(((sim.sim.cluster.get("nodes", node) as any).metadata.labels ?? {}) as Record<string, string>)
      .filter(([k]) => prefix(k))
      .sort();
  const taintsOf = (node: string, prefix: (k: string) => boolean) =>
    (((sim.sim.cluster.get("nodes", node) as any).spec.taints ?? []) as any[])
      .filter((t) => prefix(t.key))
      .map((t) => `${t.key}=${t.value ?? ""}:${t.effect}`)
      .sort();

  /** Runs one case on both sides and compares what a user sees of each; `state` is the node's labels or taints of the case's key. */
  async function compare<I>(verb: "label" | "taint", c: Case<I>, mutation: string, state: (node: string) => unknown) {
    for (const node of [ours, theirs]) if (c.given.length) await sim.kubectl(verb, "node", node, ...c.given);
    const expected = await kubectl(verb, theirs, c.kubectl);
    const r = await graphql(url, mutation, { n: ours, ...c.api, reason: "table" });
    const error = r.body.errors?.[0];
    const actual: Outcome = error ? { ok: false, message: String(error.message).split(ours).join("NODE") } : { ok: true };
    if (c.exact === false && !expected.ok) {
      assert.equal(actual.ok, false);
      assert.ok(actual.message!.startsWith(expected.message!.slice(0, 40)), `${actual.message} / ${expected.message}`);
    } else assert.deepEqual(actual, expected);
    if (!expected.ok) assert.equal(error?.extensions?.code, c.code);
    assert.deepEqual(state(ours), state(theirs));
  }

  for (const c of LABEL_CASES) {
    const mine = (k: string) => k === c.api.set?.[0]?.key || k === c.api.remove?.[0];
    test(`label: ${c.name}`, () => compare("label", c, LABEL, (node) => labelsOf(node, mine)));
  }

  for (const c of TAINT_CASES) {
    const key = c.api.add?.[0]?.key ?? c.api.remove?.[0]?.key;
    test(`taint: ${c.name}`, () => compare("taint", c, TAINT, (node) => taintsOf(node, (k) => k === key)));
  }

  test("recorded: ours as the caller with the reason, kubectl's as external, in kubectl's syntax", async () => {
    const r = await graphql(url, LABEL, { n: ours, set: [{ key: "audit", value: "yes" }], reason: "tagging for the audit" });
    assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
    await sim.kubectl("label", "node", ours, "audit=no", "--overwrite");
    const events = await eventually(
      async () => {
        const edges = (await graphql(url, EVENTS, { n: ours, kinds: ["LABELED"] })).body.data.maintenanceEvents.edges.map((e: any) => e.node);
        return edges[0]?.detail === "audit=no" ? edges : undefined;
      },
      "both audit label events",
      10_000,
    );
    assert.deepEqual(events.slice(0, 2), [
      { kind: "LABELED", actor: "external", reason: null, detail: "audit=no" },
      { kind: "LABELED", actor: "local-admin", reason: "tagging for the audit", detail: "audit=yes" },
    ]);
    const changes = (await graphql(url, CHANGES, { n: ours })).body.data.nodeChanges.edges.map((e: any) => e.node);
    assert.deepEqual(changes.slice(0, 2), [
      { kind: "LABELS", key: "audit", from: "yes", to: "no", actor: "external" },
      { kind: "LABELS", key: "audit", from: null, to: "yes", actor: "local-admin" },
    ]);

    await graphql(url, TAINT, { n: ours, add: [{ key: "audit", value: "x", effect: "NoSchedule" }], reason: "fence" });
    const [tainted] = await eventually(
      async () => {
        const edges = (await graphql(url, EVENTS, { n: ours, kinds: ["TAINTED"] })).body.data.maintenanceEvents.edges.map((e: any) => e.node);
        return edges[0]?.detail === "audit=x:NoSchedule" ? edges : undefined;
      },
      "the taint event",
      10_000,
    );
    assert.deepEqual(tainted, { kind: "TAINTED", actor: "local-admin", reason: "fence", detail: "audit=x:NoSchedule" });
  });

  test("a node that is not there is NOT_FOUND", async () => {
    const r = await graphql(url, LABEL, { n: "ghost", set: [{ key: "a", value: "b" }] });
    assert.equal(r.body.errors?.[0]?.extensions?.code, "NOT_FOUND");
  });
});

describe("labelNode and taintNode need the operator role", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;
  let tokens: ReturnType<typeof tokensFile>;
  let node: string;

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 2, seed: 22, clockSpeed: 0 });
    tokens = tokensFile();
    ({ app, url } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] }, auth: { tokensFile: tokens.path } }));
    node = sim.sim.cluster.nodeNames().find((n) => !n.startsWith("control-plane"))!;
    await eventually(async () => (await graphql(url, `{ node(name: "${node}") { name } }`, {}, bearer(TOKENS.viewer))).body.data?.node?.name, "the node in the cache", 20_000);
  });
  after(async () => {
    await app.stop();
    await sim.stop();
    tokens.remove();
  });

  test("a viewer is FORBIDDEN and the node is unchanged; an operator labels and taints", async () => {
    for (const [query, variables] of [
      [LABEL, { n: node, set: [{ key: "team", value: "web" }] }],
      [TAINT, { n: node, add: [{ key: "team", effect: "NoSchedule" }] }],
    ] as const) {
      const refused = await graphql(url, query, variables, bearer(TOKENS.viewer));
      assert.equal(refused.body.errors?.[0]?.extensions?.code, "FORBIDDEN");
      const anonymous = await graphql(url, query, variables);
      assert.equal(anonymous.body.errors?.[0]?.extensions?.code, "UNAUTHENTICATED");
    }
    assert.equal((sim.sim.cluster.get("nodes", node) as any).metadata.labels.team, undefined);
    const labelled = await graphql(url, LABEL, { n: node, set: [{ key: "team", value: "web" }] }, bearer(TOKENS.operator));
    assert.deepEqual(
      labelled.body.data.labelNode.labels.find((l: any) => l.key === "team"),
      { key: "team", value: "web" },
    );
    const tainted = await graphql(url, TAINT, { n: node, add: [{ key: "team", effect: "NoSchedule" }] }, bearer(TOKENS.operator));
    assert.deepEqual(
      tainted.body.data.taintNode.taints.filter((t: any) => t.key === "team"),
      [{ key: "team", value: null, effect: "NoSchedule" }],
    );
  });
});
