import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { startSimulator } from "../../src/sim/index.js";
import { parseGroundTruth } from "../../src/proof/history-checker.js";

describe("the simulator's ground-truth log", () => {
  test("what the simulator and its API clients did, appended across restarts, with an eviction and a watch ahead of a store gone back", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ground-truth-"));
    const file = join(dir, "truth.jsonl");
    const sim = await startSimulator({ nodes: 4, podsPerNode: 6, seed: 5, clockSpeed: 0, groundTruthFile: file });
    try {
      const evictable = (n: string) => sim.cluster.podsOnNode(n).find((p) => !(p.metadata.ownerReferences ?? []).some((r) => r.kind === "DaemonSet" || r.kind === "Node"));
      const node = sim.cluster.nodeNames().find((n) => evictable(n));
      sim.cluster.advance(10_000);
      sim.cluster.setNodeCondition(node!, "MemoryPressure", "True");
      // A client's write through the API: a label.
      const res = await fetch(`${sim.url}/api/v1/nodes/${node}`, {
        method: "PATCH",
        headers: { "content-type": "application/merge-patch+json" },
        body: JSON.stringify({ metadata: { labels: { team: "a" } } }),
      });
      assert.equal(res.status, 200);
      const pod = evictable(node!)!;
      const eviction = await fetch(`${sim.url}/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/eviction`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ apiVersion: "policy/v1", kind: "Eviction", metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace } }),
      });
      assert.equal(eviction.status, 201);
      const ahead = sim.cluster.store.resourceVersion;
      await sim.restart({ resourceVersionsBack: true });
      assert.ok(sim.cluster.store.resourceVersion < ahead);
      // A watch resumed from before the store went back: the server has not reached it.
      // Asked twice at most: fetch's pool may hand out its idle socket to the server before the restart.
      const url = `${sim.url}/api/v1/nodes?watch=true&resourceVersion=${ahead}`;
      const watch = await fetch(url).catch(() => fetch(url));
      assert.equal(watch.status, 504);
      assert.equal((await watch.json()).details.causes[0].reason, "ResourceVersionTooLarge");

      const facts = parseGroundTruth(await readFile(file, "utf8"));
      const mine = facts.filter((f) => f.kind === "restart" || ("node" in f && f.node === node));
      assert.deepEqual(
        mine.map((f) =>
          f.kind === "transition" ? `${f.type} ${f.from}->${f.to}` : f.kind === "change" ? `${f.field} ${f.item}` : f.kind === "eviction" ? `evicted ${f.pod}` : `restart rvReset=${f.rvReset}`,
        ),
        [
          "CREATED ",
          "NetworkUnavailable null->False",
          "MemoryPressure null->False",
          "DiskPressure null->False",
          "PIDPressure null->False",
          "Ready null->True",
          "MemoryPressure False->True",
          "TAINTS node.kubernetes.io/memory-pressure:NoSchedule",
          "LABELS team",
          `evicted ${pod.metadata.namespace}/${pod.metadata.name}`,
          "restart rvReset=true",
        ],
      );
    } finally {
      await sim.stop();
    }
    // A simulator started again appends to the same file.
    const before = (await readFile(file, "utf8")).split("\n").length;
    const again = await startSimulator({ nodes: 2, seed: 5, clockSpeed: 0, groundTruthFile: file });
    await again.stop();
    assert.ok((await readFile(file, "utf8")).split("\n").length > before);
    await rm(dir, { recursive: true, force: true });
  });
});
