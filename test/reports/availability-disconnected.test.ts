import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, connect, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import type { Database } from "../../src/db/database.js";
import { graphql, startTestApp } from "../support/app.js";
import { BACKENDS, type TestDatabase } from "../support/databases.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

/** A TCP proxy in front of the simulator that can be cut (every connection dropped, new ones refused) and restored on the same port. */
class CuttableProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: number) {}

  async open(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.target, "127.0.0.1");
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s)).on("error", () => {});
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Closes it for good (after() calls it whether or not it is open). */
  async close(): Promise<void> {
    if (this.server) await this.cut();
  }

  async cut(): Promise<void> {
    const server = this.server!;
    this.server = undefined;
    const closed = new Promise((resolve) => server.close(resolve));
    for (const s of this.sockets) s.destroy();
    await closed;
  }
}

const REPORT = `query ($from: DateTime!, $to: DateTime!) {
  availabilityReport(cluster: "sim", from: $from, to: $to) { nodes { node observedSeconds unobservedSeconds readySeconds outages } }
}`;

// The cluster's API cut off for longer than a watch reconnect explains: the recorder ends its
// stretch when the watch lost the connection and starts another after it came back, and the
// report counts the time between as unobserved for every node, neither available nor an outage.
for (const backend of BACKENDS) {
  describe(`availability across a cluster unreachable for a while, on ${backend.name}`, () => {
    let cluster: SimWithKubeconfig;
    let proxy: CuttableProxy;
    let dir: string;
    let fresh: TestDatabase;
    let db: Database;
    let app: App;
    let url: string;

    before(async () => {
      cluster = await startSimWithKubeconfig({ nodes: 2, seed: 5, clockSpeed: 0 });
      proxy = new CuttableProxy(Number(new URL(cluster.sim.url).port));
      await proxy.open();
      dir = mkdtempSync(join(tmpdir(), "ni-proxy-"));
      const kubeconfig = join(dir, "config");
      writeFileSync(kubeconfig, readFileSync(cluster.kubeconfigPath, "utf8").replace(new URL(cluster.sim.url).host, `127.0.0.1:${proxy.port}`));
      fresh = await backend.create();
      db = await fresh.open();
      ({ app, url } = await startTestApp(
        { clusters: { kubeconfigs: [kubeconfig], contexts: [] }, database: fresh.config },
        {
          ...(backend.name === "pglite" ? { database: db } : {}),
          recorderTuning: { leaseDurationMs: 1_500, retryPeriodMs: 200, coverageIntervalMs: 100, reconnectGraceMs: 1_000 },
        },
      ));
    });
    after(async () => {
      await app?.stop();
      await db?.close();
      await fresh?.drop();
      await proxy?.close();
      await cluster?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    const stretches = () => db.prisma.recordingCoverage.findMany({ where: { cluster: "sim" }, orderBy: { startedAt: "asc" } });

    test("the time it was unreachable is unobserved", async () => {
      await eventually(async () => ((await stretches())[0]?.endedAt.getTime() ?? 0) > ((await stretches())[0]?.startedAt.getTime() ?? 0), "recording", 15_000);
      const cutAt = Date.now();
      await proxy.cut();
      const [first] = await eventually(async () => {
        const rows = await stretches();
        // Closed: no longer extended, as of when the watch lost the connection.
        return rows.length === 1 && rows[0]!.endedAt.getTime() < Date.now() - 1_500 ? rows : undefined;
      }, "the stretch closed", 20_000);
      assert.ok(first!.endedAt.getTime() >= cutAt - 200 && first!.endedAt.getTime() <= cutAt + 1_000, `closed at ${first!.endedAt.toISOString()}, cut at ${new Date(cutAt).toISOString()}`);
      await proxy.open();
      const [, second] = await eventually(async () => {
        const rows = await stretches();
        return rows.length === 2 && rows[1]!.endedAt.getTime() > rows[1]!.startedAt.getTime() ? rows : undefined;
      }, "a second stretch after the connection came back", 30_000);

      const from = first!.startedAt.getTime();
      const to = second!.endedAt.getTime();
      const gapMs = second!.startedAt.getTime() - first!.endedAt.getTime();
      assert.ok(gapMs >= 1_500, `a gap of ${gapMs} ms`);
      const { body } = await graphql(url, REPORT, { from: new Date(from).toISOString(), to: new Date(to).toISOString() });
      assert.equal(body.errors, undefined, JSON.stringify(body.errors));
      const watchedMs = to - from - gapMs;
      assert.deepEqual(
        body.data.availabilityReport.nodes.map((n: { node: string }) => n.node),
        cluster.sim.cluster.nodeNames().sort(),
      );
      for (const node of body.data.availabilityReport.nodes) {
        assert.deepEqual(node, { node: node.node, observedSeconds: watchedMs / 1000, unobservedSeconds: gapMs / 1000, readySeconds: watchedMs / 1000, outages: 0 });
      }
    });
  });
}
