import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createServer as createTcpServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { graphql } from "../support/app.js";
import { startProgram } from "../support/program.js";
import { eventually, startSimWithKubeconfig } from "../support/sim-cluster.js";

/** A kubeconfig file naming one plain-HTTP server as cluster (and context) `name`. */
function kubeconfigFor(dir: string, name: string, port: number): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
clusters: [{ name: ${name}, cluster: { server: "http://127.0.0.1:${port}" } }]
users: [{ name: ${name}, user: { token: t } }]
contexts: [{ name: ${name}, context: { cluster: ${name}, user: ${name} } }]
current-context: ${name}
`,
  );
  return path;
}

const listen = (server: Server | ReturnType<typeof createTcpServer>) =>
  new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));

/** Resident memory of a process, in MiB. */
function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"))!;
  return Number(line.replace(/\D/g, "")) / 1024;
}

describe("one misbehaving cluster beside a good one", () => {
  test("a server streaming an endless line and one that never answers are marked failed; the good cluster is served, /readyz is ready and memory stays bounded", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ni-bad-clusters-"));
    // Answers every request 200 and then one line that never ends, as fast as the reader takes it.
    let sent = 0;
    let cut = 0;
    const chunk = Buffer.alloc(64 * 1024, "x");
    const endless = createServer((_req, res) => {
      res.on("close", () => cut++);
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"type":"ADDED","object":{"kind":"Node","metadata":{"name":"');
      const pump = () => {
        let more = true;
        while (more && !res.destroyed) {
          more = res.write(chunk);
          sent += chunk.length;
        }
        if (!res.destroyed) res.once("drain", pump);
      };
      pump();
      res.on("error", () => {});
    });
    // Accepts connections and never answers.
    const held: Socket[] = [];
    const silent = createTcpServer((socket) => {
      held.push(socket);
      socket.on("error", () => {});
    });
    const cluster = await startSimWithKubeconfig({ nodes: 3, seed: 61, clockSpeed: 0 });
    const kubeconfig = [cluster.kubeconfigPath, kubeconfigFor(dir, "endless", await listen(endless)), kubeconfigFor(dir, "silent", await listen(silent))].join(":");
    const startedAt = Date.now();
    const program = await startProgram(["--port", "0", "--kubeconfig", kubeconfig, "--data-dir", "memory"]);
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(program.child.pid!))), 100);
    try {
      await eventually(async () => (await fetch(`${program.url}/readyz`)).status === 200, "/readyz ready", 30_000);
      const readyAfterMs = Date.now() - startedAt;
      const { body } = await graphql(program.url, "{ clusters { name synced lastError } nodes(first: 10) { totalCount } }");
      const byName = Object.fromEntries(body.data.clusters.map((c: { name: string }) => [c.name, c]));
      assert.equal(byName.sim.synced, true);
      assert.equal(body.data.nodes.totalCount, 3);
      assert.equal(byName.endless.synced, false);
      assert.match(byName.endless.lastError, /over \d+ MiB/);
      assert.equal(byName.silent.synced, false);
      assert.match(byName.silent.lastError, /no answer within/);
      // The endless cluster is cut and retried (with backoff) while the service answers; a reader
      // that gathers the line instead holds all that was sent.
      await eventually(async () => {
        assert.equal((await graphql(program.url, "{ __typename }")).body.data.__typename, "Query");
        return cut >= 8 || sent > 1024 * 1024 * 1024;
      }, "eight answers of the endless server cut, or a GiB sent", 60_000);
      assert.equal((await fetch(`${program.url}/healthz`)).status, 200);
      const figures = `ready after ${readyAfterMs} ms; peak RSS ${Math.round(peak)} MiB; ${Math.round(sent / 1024 / 1024)} MiB sent in ${cut} answers cut`;
      console.log(`# ${figures}`);
      assert.ok(cut >= 8 && peak < 600, figures);
    } finally {
      clearInterval(sampler);
      await program.terminate();
      for (const socket of held) socket.destroy();
      endless.closeAllConnections();
      await Promise.all([new Promise((r) => endless.close(r)), new Promise((r) => silent.close(r))]);
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
