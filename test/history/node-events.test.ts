import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import type { App } from "../../src/app/create-app.js";
import { R } from "../../src/sim/index.js";
import { graphql, startTestApp } from "../support/app.js";
import { BACKENDS, setDatabaseDown } from "../support/databases.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const EVENT = "id cluster node type reason message count firstSeen lastSeen source";
const LIVE = `query($n: String!, $first: Int) { node(name: $n) { events(first: $first) { ${EVENT} } } }`;
const RECORDED = `query($f: NodeEventFilter, $first: Int, $after: String) { nodeEvents(filter: $f, first: $first, after: $after) { edges { cursor node { ${EVENT} } } pageInfo { hasNextPage endCursor } } }`;

async function ok(url: string, query: string, variables: Record<string, unknown>) {
  const { body } = await graphql(url, query, variables);
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data;
}

const live = async (url: string, node: string, first?: number) => (await ok(url, LIVE, { n: node, first })).node.events as any[];
const recorded = async (url: string, filter: object, first?: number) => (await ok(url, RECORDED, { f: filter, first })).nodeEvents.edges.map((e: any) => e.node) as any[];

describe("node events, live and kept", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;
  let dir: string;
  let node: string;

  /** `kubectl create -f` of a core/v1 Event about `node`, as another component would write it. */
  const createWithKubectl = async (name: string, fields: Record<string, unknown>) => {
    const now = sim.sim.cluster.clock.iso();
    const file = join(dir, `${name}.json`);
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Event",
        metadata: { name, namespace: "default" },
        involvedObject: { kind: "Node", name: node, uid: node, apiVersion: "v1" },
        type: "Warning",
        reason: "DiskReplaced",
        message: "disk /dev/nvme1n1 replaced by the ops team",
        source: { component: "ops-robot" },
        count: 1,
        firstTimestamp: now,
        lastTimestamp: now,
        ...fields,
      }),
    );
    // The simulator serves no OpenAPI documents for kubectl's client-side validation.
    await sim.kubectl("create", "-f", file, "--validate=false");
    return JSON.parse(await sim.kubectl("get", "event", name, "-n", "default", "-o", "json"));
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "ni-events-"));
    sim = await startSimWithKubeconfig({ nodes: 4, seed: 12, clockSpeed: 0 });
    node = sim.sim.cluster.nodeNames().find((n) => !n.startsWith("control-plane"))!;
    ({ app, url } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] } }, { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200 } }));
    await eventually(async () => (await graphql(url, "{ service { history { leaderOf } } }")).body.data?.service.history.leaderOf.includes("sim"), "the history lease", 20_000);
  });
  after(async () => {
    await app?.stop();
    await sim?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("an event created with kubectl appears in Node.events and stays in nodeEvents after the simulator expired it", async () => {
    const created = await createWithKubectl("disk-replaced.1", {});
    const expected = {
      id: created.metadata.uid,
      cluster: "sim",
      node,
      type: "Warning",
      reason: "DiskReplaced",
      message: "disk /dev/nvme1n1 replaced by the ops team",
      count: 1,
      firstSeen: new Date(created.firstTimestamp).toISOString(),
      lastSeen: new Date(created.lastTimestamp).toISOString(),
      source: "ops-robot",
    };
    await eventually(async () => (await live(url, node)).some((e) => e.id === expected.id), "Node.events shows it", 10_000);
    assert.deepEqual(
      (await live(url, node)).find((e) => e.id === expected.id),
      expected,
    );
    await eventually(async () => (await recorded(url, { node, reason: "DiskReplaced" })).length === 1, "nodeEvents has it", 10_000);
    assert.deepEqual(await recorded(url, { node, reason: "DiskReplaced" }), [expected]);

    // It happens four more times: Kubernetes bumps the count of the one Event.
    sim.sim.cluster.advance(60_000);
    const later = sim.sim.cluster.clock.iso();
    await sim.kubectl("patch", "event", "disk-replaced.1", "-n", "default", "--type", "merge", "-p", JSON.stringify({ count: 5, lastTimestamp: later }));
    const bumped = { ...expected, count: 5, lastSeen: new Date(later).toISOString() };
    await eventually(async () => (await recorded(url, { node, reason: "DiskReplaced" }))[0]?.count === 5, "the record follows the count", 10_000);
    assert.deepEqual(await recorded(url, { node, reason: "DiskReplaced" }), [bumped], "one record however often the count changes");
    assert.deepEqual(
      (await live(url, node)).find((e) => e.id === expected.id),
      bumped,
    );

    // An hour of simulated time later the apiserver's TTL has removed it.
    sim.sim.cluster.advance(61 * 60_000);
    await assert.rejects(sim.kubectl("get", "event", "disk-replaced.1", "-n", "default"), /NotFound|not found/);
    await eventually(async () => !(await live(url, node)).some((e) => e.id === expected.id), "Node.events no longer has it", 10_000);
    assert.deepEqual(await recorded(url, { node, reason: "DiskReplaced" }), [bumped], "nodeEvents keeps it");
  });

  test("the simulator's own events (NodeNotReady, NodeReady, pressure, Rebooted) are recorded once each, repeats counted", async () => {
    const cluster = sim.sim.cluster;
    for (let i = 0; i < 3; i++) {
      cluster.setNodeCondition(node, "Ready", "False");
      cluster.advance(5_000);
      cluster.setNodeCondition(node, "Ready", "True");
      cluster.advance(5_000);
    }
    cluster.setNodeCondition(node, "DiskPressure", "True");
    cluster.update(R.nodes, node, (n: any) => void (n.status.nodeInfo.bootID = "0b0e7f5a-0000-4000-8000-000000000001"));
    cluster.advance(1_000);
    const held = JSON.parse(await sim.kubectl("get", "events", "-n", "default", "--field-selector", `involvedObject.name=${node}`, "-o", "json")).items as any[];
    const byReason = (reason: string) => held.filter((e) => e.reason === reason);
    assert.equal(byReason("NodeNotReady").length, 1, "the simulator aggregates repeats into one Event");
    assert.equal(byReason("NodeNotReady")[0].count, 3);
    assert.equal(byReason("NodeHasDiskPressure").length, 1);
    assert.equal(byReason("Rebooted")[0].type, "Warning");
    assert.equal(byReason("Rebooted")[0].message, `Node ${node} has been rebooted, boot id: 0b0e7f5a-0000-4000-8000-000000000001`);
    await eventually(async () => (await recorded(url, { node, reason: "Rebooted" })).length === 1 && (await recorded(url, { node, reason: "NodeNotReady" }))[0]?.count === 3, "recorded", 10_000);
    const rows = await recorded(url, { node, since: new Date(Date.parse(held[0].lastTimestamp) - 3_600_000).toISOString() }, 100);
    for (const e of held) {
      const mine = rows.filter((r) => r.id === e.metadata.uid);
      assert.equal(mine.length, 1, `${e.reason} recorded once`);
      assert.equal(mine[0].count, e.count, `${e.reason} count`);
    }
    const warnings = await recorded(url, { node, type: "Warning" }, 100);
    assert.ok(warnings.every((e) => e.type === "Warning") && warnings.some((e) => e.reason === "Rebooted"));
    // Node.events is newest first, and `first` bounds it.
    const newest = await live(url, node, 2);
    assert.equal(newest.length, 2);
    assert.ok(Date.parse(newest[0].lastSeen) >= Date.parse(newest[1].lastSeen));
  });

  test("hostile text: NUL and control characters are removed and a 100 kB message is cut to 4,096 characters", async () => {
    const created = await createWithKubectl("hostile.1", { reason: "Hostile", message: `a\u0000b\u0007c\n${"x".repeat(100_000)}` });
    await eventually(async () => (await recorded(url, { reason: "Hostile" })).length === 1, "recorded", 10_000);
    const [row] = await recorded(url, { reason: "Hostile" });
    assert.equal(row.id, created.metadata.uid);
    assert.equal(row.message.length, 4096);
    assert.equal(row.message.slice(0, 6), "abc\nxx");
    assert.equal(row.message.at(-1), "…");
    assert.deepEqual((await live(url, node)).find((e) => e.id === row.id)?.message, row.message);
  });

  test("nodeEvents pages newest first with cursors; bad arguments are BAD_USER_INPUT, an unknown cluster NOT_FOUND", async () => {
    // Five events of its own, a simulated second apart, so the test runs alone too.
    for (let i = 0; i < 5; i++) {
      sim.sim.cluster.nodeEvent(node, `Paging${i}`, `paging test ${i}`);
      sim.sim.cluster.advance(1_000);
    }
    await eventually(async () => (await recorded(url, { node, reason: "Paging4" })).length === 1, "recorded", 10_000);
    const all = await recorded(url, { node }, 1000);
    assert.ok(all.length >= 5);
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const data: any = await ok(url, RECORDED, { f: { node }, first: 2, after });
      seen.push(...data.nodeEvents.edges.map((e: any) => e.node.id));
      after = data.nodeEvents.pageInfo.hasNextPage ? data.nodeEvents.pageInfo.endCursor : null;
    } while (after);
    assert.deepEqual(
      seen,
      all.map((e) => e.id),
    );
    for (let i = 1; i < all.length; i++) assert.ok(Date.parse(all[i - 1].lastSeen) >= Date.parse(all[i].lastSeen));
    const errorOf = async (variables: Record<string, unknown>) => (await graphql(url, RECORDED, variables)).body.errors?.[0];
    assert.equal((await errorOf({ first: -1 }))?.extensions.code, "BAD_USER_INPUT");
    assert.equal((await errorOf({ after: "bm90IGEgY3Vyc29y" }))?.extensions.code, "BAD_USER_INPUT");
    const cursor = (payload: object) => Buffer.from(JSON.stringify(payload)).toString("base64url");
    assert.equal((await errorOf({ after: cursor({ l: "nodeEvents", a: Date.now(), i: "9999999999999999999" }) }))?.extensions.code, "BAD_USER_INPUT", "an id past int64");
    assert.equal((await errorOf({ after: cursor({ l: "transitions", a: Date.now(), i: "1" }) }))?.extensions.code, "BAD_USER_INPUT", "another list's cursor");
    assert.equal((await errorOf({ f: { since: "2026-01-02T00:00:00Z", until: "2026-01-01T00:00:00Z" } }))?.extensions.code, "BAD_USER_INPUT");
    const unknown = await errorOf({ f: { cluster: "nope" } });
    assert.equal(unknown?.extensions.code, "NOT_FOUND");
  });
});

const postgres = BACKENDS.find((b) => b.name === "postgres")!;

describe("node events are stored exactly once across restarts and replicas", () => {
  test("two replicas on one PostgreSQL, the leader stopped and started again: one row per Event", async () => {
    const sim = await startSimWithKubeconfig({ nodes: 3, seed: 13, clockSpeed: 0 });
    const fresh = await postgres.create();
    const config = { clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] }, database: fresh.config };
    const tuning = (identity: string) => ({ recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200, identity } });
    const client = new pg.Client({ connectionString: (fresh.config as { url: string }).url });
    let a = await startTestApp(config, tuning("replica-a"));
    const b = await startTestApp(config, tuning("replica-b"));
    await client.connect();
    const rows = async () => (await client.query(`SELECT uid, count FROM node_event ORDER BY uid`)).rows as { uid: string; count: number }[];
    const held = () => (sim.sim.cluster.list(R.events) as any[]).map((e) => ({ uid: e.metadata.uid, count: e.count })).sort((x, y) => (x.uid < y.uid ? -1 : 1));
    const cluster = sim.sim.cluster;
    const node = cluster.nodeNames().at(-1)!;
    try {
      await eventually(async () => JSON.stringify(await rows()) === JSON.stringify(held()), "every event the simulator holds is recorded", 20_000);
      for (let i = 0; i < 3; i++) {
        cluster.setNodeCondition(node, "Ready", i % 2 === 0 ? "False" : "True");
        cluster.advance(2_000);
      }
      await eventually(async () => JSON.stringify(await rows()) === JSON.stringify(held()), "the flaps are recorded", 20_000);
      await a.app.stop();
      cluster.setNodeCondition(node, "Ready", "False");
      cluster.advance(2_000);
      a = await startTestApp(config, tuning("replica-a"));
      await eventually(async () => JSON.stringify(await rows()) === JSON.stringify(held()), "what happened while a replica was away is recorded", 20_000);
      const total = Number((await client.query(`SELECT count(*) AS n FROM node_event`)).rows[0].n);
      assert.equal(total, held().length, "no Event twice");
    } finally {
      await client.end();
      await a.app.stop();
      await b.app.stop();
      await sim.stop();
      await fresh.drop();
    }
  });
});

describe("node events across a database outage", () => {
  test("events seen while the database refuses connections are written once it is back, an event already deleted by then included", async () => {
    const sim = await startSimWithKubeconfig({ nodes: 2, seed: 14, clockSpeed: 0 });
    const fresh = await postgres.create();
    const database = new URL((fresh.config as { url: string }).url).pathname.slice(1);
    const { app, url } = await startTestApp(
      { clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] }, database: fresh.config },
      { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200 } },
    );
    const rows = async () => {
      const client = new pg.Client({ connectionString: (fresh.config as { url: string }).url });
      await client.connect();
      try {
        return (await client.query(`SELECT uid, reason, count FROM node_event ORDER BY uid`)).rows as { uid: string; reason: string; count: number }[];
      } finally {
        await client.end();
      }
    };
    const cluster = sim.sim.cluster;
    const node = cluster.nodeNames()[1]!;
    const held = () => (cluster.list(R.events) as any[]).map((e) => ({ uid: e.metadata.uid, reason: e.reason, count: e.count }));
    const byUid = (list: { uid: string }[]) => [...list].sort((x, y) => (x.uid < y.uid ? -1 : 1));
    try {
      await eventually(async () => (await graphql(url, "{ service { history { leaderOf pendingWrites } } }")).body.data?.service.history.leaderOf.includes("sim"), "leading", 20_000);
      await eventually(async () => (await graphql(url, "{ service { history { pendingWrites } } }")).body.data?.service.history.pendingWrites === 0, "initial history written", 20_000);
      await setDatabaseDown(database, true);
      for (let i = 0; i < 4; i++) {
        cluster.setNodeCondition(node, "Ready", i % 2 === 0 ? "False" : "True");
        cluster.advance(2_000);
      }
      cluster.setNodeCondition(node, "PIDPressure", "True");
      const pressure = (cluster.list(R.events) as any[]).find((e) => e.reason === "NodeHasInsufficientPID")!;
      const deleted = { uid: pressure.metadata.uid, reason: pressure.reason, count: pressure.count };
      // Seen by the watch (the cache hands each event to the recorder as it stores it), then
      // gone from Kubernetes before the database is back.
      await eventually(async () => (await live(url, node)).some((e) => e.id === deleted.uid), "the watch sees it", 10_000);
      await sim.kubectl("delete", "event", pressure.metadata.name, "-n", "default");
      await setDatabaseDown(database, false);
      await eventually(async () => JSON.stringify(await rows()) === JSON.stringify(byUid([...held(), deleted])), "everything seen during the outage is recorded, once", 30_000);
    } finally {
      await setDatabaseDown(database, false);
      await app.stop();
      await sim.stop();
      await fresh.drop();
    }
  });
});
