import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { R } from "../../src/sim/index.js";
import { graphql } from "../support/app.js";
import { runCli } from "../support/cli.js";
import { startProgram } from "../support/program.js";
import { eventually, startSimWithKubeconfig } from "../support/sim-cluster.js";

/** A tmpfs of `size` at a new directory (the tests run as root), and how to take it away. */
function smallDisk(size: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "ni-disk-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir]);
  return {
    dir,
    remove() {
      execFileSync("umount", ["-l", dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Writes `path` until the disk has no room left. */
function fill(path: string): void {
  const fd = openSync(path, "w");
  const chunk = Buffer.alloc(1024 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  } finally {
    closeSync(fd);
  }
}

const readiness = async (url: string) => {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, body: (await res.json()) as { checks: Record<string, { ok: boolean; detail?: string }> } };
};

describe("PGlite on a disk that fills up", () => {
  test("keeps answering from its cache, says the database is unavailable and why, buffers history, and recovers once space is freed", async () => {
    const disk = smallDisk("64m");
    const cluster = await startSimWithKubeconfig({ nodes: 4, seed: 91, clockSpeed: 0 });
    let program: Awaited<ReturnType<typeof startProgram>> | undefined;
    try {
      program = await startProgram(["--port", "0", "--kubeconfig", cluster.kubeconfigPath, "--data-dir", join(disk.dir, "data"), "--lease-duration", "2"]);
      const url = program.url;
      const history = async () => (await graphql(url, "{ service { history { pendingWrites databaseWritable recordedChanges } } }")).body.data.service.history;
      await eventually(async () => (await readiness(url)).status === 200 && (await history()).pendingWrites === 0 && (await history()).recordedChanges > 0, "ready, first history written", 30_000);

      fill(join(disk.dir, "fill"));
      const node = cluster.sim.cluster.nodeNames().find((name) => !(cluster.sim.cluster.get("nodes", name) as any).spec.unschedulable)!;
      cluster.sim.cluster.update(R.nodes, node, (copy: any) => void (copy.spec.unschedulable = true));

      const full = await eventually(async () => {
        const r = await readiness(url);
        return r.status === 503 && /disk full/.test(r.body.checks.database?.detail ?? "") ? r : undefined;
      }, "/readyz says the disk is full", 30_000);
      assert.equal(full.body.checks.database!.ok, false);
      const buffered = await history();
      assert.equal(buffered.databaseWritable, false);
      assert.ok(buffered.pendingWrites >= 1, `history buffered: ${JSON.stringify(buffered)}`);
      // The cache answers: the cordon is seen, and so is every other client's question.
      assert.equal((await fetch(`${url}/healthz`)).status, 200);
      const { body } = await graphql(url, `query($n: String!) { node(name: $n) { unschedulable } }`, { n: node });
      assert.equal(body.data.node.unschedulable, true);
      assert.equal((await graphql(url, "{ __typename }")).body.data.__typename, "Query");

      rmSync(join(disk.dir, "fill"));
      await eventually(async () => (await readiness(url)).status === 200, "ready again once space is freed", 30_000);
      const events = await eventually(async () => {
        const { body } = await graphql(url, `query($n: String!) { node(name: $n) { maintenanceEvents(first: 5) { kind } } }`, { n: node });
        const kinds = body.data.node.maintenanceEvents.map((e: { kind: string }) => e.kind);
        return kinds.includes("CORDONED") ? kinds : undefined;
      }, "the cordon made while the disk was full is recorded", 30_000);
      assert.equal(events[0], "CORDONED");
    } finally {
      await program?.terminate();
      await cluster.stop();
      disk.remove();
    }
  });

  test("starting on a disk too small says so", async () => {
    const disk = smallDisk("4m");
    try {
      mkdirSync(join(disk.dir, "data"));
      const { code, stdout, stderr } = await runCli(["serve", "--port", "0", "--simulate", "2", "--data-dir", join(disk.dir, "data")], { HOME: "/nonexistent" }, 60_000);
      assert.notEqual(code, 0);
      const said = stdout + stderr;
      assert.match(said, /cannot open embedded PGlite at .*: the disk is full or too small: \d+\.\d MiB free there/);
      assert.doesNotMatch(said, /undefined/);
    } finally {
      disk.remove();
    }
  });
});
