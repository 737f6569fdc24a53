import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { graphql, startTestApp } from "../support/app.js";
import { BACKENDS } from "../support/databases.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";
import { servedMeanwhile } from "./support.js";

const STRICT = { accept: "application/graphql-response+json" };
const EVENTS = `query($n: String) { maintenanceEvents(filter: { node: $n }) { edges { node { kind actor reason } } } }`;
const READY_FLIPS = `query($n: String) { conditionTransitions(filter: { node: $n, type: "Ready" }) { edges { node { from to } } } }`;
const HISTORY = "{ service { history { leaderOf pendingWrites refusedWrites stalledSince } } }";

/** A merge patch kubectl sends: cordons `node` and writes our maintenance annotation as given (JSON text, NUL escapes and all). */
function cordonPatch(annotation: string): string {
  return JSON.stringify({ metadata: { annotations: { "node-inventory.io/maintenance": annotation } }, spec: { unschedulable: true } });
}

/** Flips every node's Ready condition once, so each has a new transition to record. */
function flipAll(cluster: SimWithKubeconfig, to: "True" | "False"): void {
  cluster.sim.cluster.advance(10_000);
  for (const node of cluster.sim.cluster.nodeNames()) cluster.sim.cluster.setNodeCondition(node, "Ready", to);
}

async function readyFlips(url: string, node: string): Promise<string[]> {
  const { body } = await graphql(url, READY_FLIPS, { n: node });
  return body.data.conditionTransitions.edges.map((e: any) => `${e.node.from}->${e.node.to}`).filter((flip: string) => !flip.startsWith("null"));
}

/** A simulated cluster and a service recording it into a database of its own. */
async function recording(backend: (typeof BACKENDS)[number], nodes: number, seed: number) {
  const cluster = await startSimWithKubeconfig({ nodes, seed, clockSpeed: 0 });
  const fresh = await backend.create();
  const { app, url } = await startTestApp(
    { clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] }, database: fresh.config },
    { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200, identity: "replica-a" } },
  );
  return { cluster, fresh, app, url };
}

for (const backend of BACKENDS) {
  describe(`a NUL from a caller or the cluster never stops history, on ${backend.name} (issue 13, finding 2)`, () => {
    test("a cordon with a NUL reason is refused; kubectl patches with a NUL in the maintenance annotation are recorded with ␀; every later flip is recorded", async () => {
      const { cluster, fresh, app, url } = await recording(backend, 3, 13);
      const [a, b, c] = cluster.sim.cluster.nodeNames() as [string, string, string];
      try {
        await eventually(async () => (await graphql(url, HISTORY)).body.data.service.history.leaderOf.length === 1, "recording", 20_000);

        const refused = await graphql(url, `mutation($n: String!, $r: String) { cordonNode(name: $n, reason: $r) { name } }`, { n: a, r: "nul\u0000here" }, STRICT);
        assert.equal(refused.status, 400);
        assert.equal(refused.body.errors![0].extensions.code, "BAD_USER_INPUT");

        // A NUL in the annotation's text itself, and one escaped inside its JSON (NUL once parsed).
        await cluster.kubectl("patch", "node", a, "--type", "merge", "-p", cordonPatch('{"actor":"mallory\u0000","reason":"r\u0000","unschedulable":true}'));
        await cluster.kubectl("patch", "node", b, "--type", "merge", "-p", cordonPatch('{"actor":"eve\\u0000","reason":"why\\u0000not","unschedulable":true}'));
        assert.ok((await cluster.kubectl("get", "node", a, "-o", "json")).includes("mallory\\u0000"), "the NUL is really on the node");

        const cordoned = async (node: string) =>
          eventually(async () => (await graphql(url, EVENTS, { n: node })).body.data.maintenanceEvents.edges.map((e: any) => e.node)[0], `${node}'s cordon recorded`, 15_000);
        assert.deepEqual(await cordoned(a), { kind: "CORDONED", actor: "mallory\u2400", reason: "r\u2400" });
        assert.deepEqual(await cordoned(b), { kind: "CORDONED", actor: "eve\u2400", reason: "why\u2400not" });

        flipAll(cluster, "False");
        await servedMeanwhile(url);
        flipAll(cluster, "True");
        for (const node of [a, b, c]) {
          await eventually(async () => (await readyFlips(url, node)).length === 2, `both flips of ${node}`, 15_000);
        }
        const history = (await graphql(url, HISTORY)).body.data.service.history;
        assert.deepEqual({ refused: history.refusedWrites, stalled: history.stalledSince }, { refused: 0, stalled: null });
        assert.equal((await fetch(`${url}/readyz`)).status, 200);

        if (backend.name === "postgres") {
          // A standby sharing the database takes over and reconciles nodes still carrying the NUL.
          const standby = await startTestApp(
            { clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] }, database: fresh.config },
            { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200, identity: "replica-b" } },
          );
          try {
            await app.stop();
            await eventually(async () => (await graphql(standby.url, HISTORY)).body.data.service.history.leaderOf.length === 1, "the standby leads", 20_000);
            flipAll(cluster, "False");
            for (const node of [a, b, c]) {
              await eventually(async () => (await readyFlips(standby.url, node)).length === 3, `the standby records ${node}'s flip`, 15_000);
            }
            // The flips are read back once written; the rest of the queue (the reconcile's node changes) follows them.
            const after = await eventually(
              async () => {
                const history = (await graphql(standby.url, HISTORY)).body.data.service.history;
                return history.pendingWrites === 0 && history;
              },
              "the standby's queue written",
              15_000,
            );
            assert.deepEqual({ pending: after.pendingWrites, refused: after.refusedWrites, stalled: after.stalledSince }, { pending: 0, refused: 0, stalled: null });
          } finally {
            await standby.app.stop();
          }
        }
      } finally {
        await app.stop();
        await cluster.stop();
        await fresh.drop();
      }
    });

    test("a lone surrogate escaped in the maintenance annotation is recorded as U+FFFD, nothing refused", async () => {
      const { cluster, fresh, app, url } = await recording(backend, 2, 14);
      const [a] = cluster.sim.cluster.nodeNames() as [string];
      try {
        await eventually(async () => (await graphql(url, HISTORY)).body.data.service.history.leaderOf.length === 1, "recording", 20_000);
        // JSON.parse turns the escapes into surrogates without their other half, which no UTF-8 (and no PostgreSQL JSON) holds.
        await cluster.kubectl("patch", "node", a, "--type", "merge", "-p", cordonPatch('{"actor":"eve\\ud800","reason":"half \\udc00 pair","unschedulable":true}'));
        const event = await eventually(async () => (await graphql(url, EVENTS, { n: a })).body.data.maintenanceEvents.edges.map((e: any) => e.node)[0], "the cordon recorded", 15_000);
        assert.deepEqual(event, { kind: "CORDONED", actor: "eve\uFFFD", reason: "half \uFFFD pair" });
        assert.equal((await graphql(url, HISTORY)).body.data.service.history.refusedWrites, 0);
      } finally {
        await app.stop();
        await cluster.stop();
        await fresh.drop();
      }
    });

    test("a row the database refuses for its content is logged, counted and skipped; one it cannot write at all shows as no progress in /readyz and service { history }", async () => {
      const cluster = await startSimWithKubeconfig({ nodes: 2, seed: 14, clockSpeed: 0 });
      const fresh = await backend.create();
      const database = await fresh.open();
      const { app, url, logs } = await startTestApp(
        { clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] } },
        { database, recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200, stallAfterMs: 500 } },
      );
      const [a, b] = cluster.sim.cluster.nodeNames() as [string, string];
      try {
        await eventually(async () => (await graphql(url, HISTORY)).body.data.service.history.leaderOf.length === 1, "recording", 20_000);
        await eventually(async () => (await graphql(url, HISTORY)).body.data.service.history.pendingWrites === 0, "initial history written", 20_000);
        // A value the database will not take, whatever the recorder does to it.
        await database.prisma.$executeRawUnsafe("ALTER TABLE maintenance_event ADD CONSTRAINT no_poison CHECK (reason IS DISTINCT FROM 'poison')");
        await cluster.kubectl("patch", "node", a, "--type", "merge", "-p", cordonPatch('{"actor":"mallory","reason":"poison","unschedulable":true}'));
        await cluster.kubectl("cordon", b);
        flipAll(cluster, "False");
        for (const node of [a, b]) await eventually(async () => (await readyFlips(url, node)).length === 1, `${node}'s flip behind the refused row`, 15_000);
        assert.deepEqual(
          (await graphql(url, EVENTS, { n: b })).body.data.maintenanceEvents.edges.map((e: any) => e.node.actor),
          ["external"],
        );
        const counted = await eventually(
          async () => {
            const history = (await graphql(url, HISTORY)).body.data.service.history;
            return history.pendingWrites === 0 && history;
          },
          "the queue written",
          15_000,
        );
        assert.deepEqual({ refused: counted.refusedWrites, pending: counted.pendingWrites, stalled: counted.stalledSince }, { refused: 1, pending: 0, stalled: null });
        const line = logs.lines.find((l) => l.msg === "history: the database refused a row for its content; left out, recording carries on");
        assert.equal(line?.["node"], a);
        assert.match(JSON.stringify(line?.["err"]), /no_poison/);

        // Not a value but the table: every write fails, nothing is skipped, and readiness says so.
        await database.prisma.$executeRawUnsafe("ALTER TABLE condition_transition RENAME TO condition_transition_away");
        flipAll(cluster, "True");
        const stalled = await eventually(async () => (await graphql(url, HISTORY)).body.data.service.history.stalledSince, "stalledSince", 15_000);
        const readiness = await eventually(
          async () => {
            const response = await fetch(`${url}/readyz`);
            return response.status === 503 ? ((await response.json()) as any) : undefined;
          },
          "/readyz 503",
          15_000,
        );
        assert.match(JSON.stringify(readiness), /no progress since/);
        assert.ok(Date.parse(stalled) <= Date.now());
        await servedMeanwhile(url);
        await database.prisma.$executeRawUnsafe("ALTER TABLE condition_transition_away RENAME TO condition_transition");
        for (const node of [a, b]) await eventually(async () => (await readyFlips(url, node)).length === 2, `${node}'s flip once the table is back`, 15_000);
        await eventually(async () => (await fetch(`${url}/readyz`)).status === 200, "ready again", 15_000);
        assert.equal((await graphql(url, HISTORY)).body.data.service.history.refusedWrites, 1, "nothing was skipped while the table was missing");
      } finally {
        await app.stop();
        await database.close();
        await cluster.stop();
        await fresh.drop();
      }
    });
  });
}
