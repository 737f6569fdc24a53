import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { ObjectStore } from "../../src/sim/store.js";

const obj = (name: string, ns?: string) => ({ apiVersion: "v1", kind: "Pod", metadata: { name, ...(ns ? { namespace: ns } : {}) } });

describe("object store", () => {
  test("one cluster-wide resourceVersion increases on every write, across resources", () => {
    const s = new ObjectStore(100);
    const a = s.put("pods", obj("a", "x"));
    const b = s.put("nodes", obj("n1"));
    const c = s.put("pods", obj("a", "x"));
    assert.deepEqual([a.rv, b.rv, c.rv], [a.rv, a.rv + 1, a.rv + 2]);
    assert.equal(JSON.parse(c.json).metadata.resourceVersion, String(c.rv));
    const d = s.remove("pods", "x/a")!;
    assert.equal(d.rv, c.rv + 1, "a delete gets its own resourceVersion");
  });

  test("lists come back in key order, per namespace, and resume after a key", () => {
    const s = new ObjectStore(100);
    for (const [ns, n] of [
      ["b", "2"],
      ["a", "9"],
      ["b", "1"],
      ["a", "1"],
      ["c", "1"],
    ] as const)
      s.put("pods", obj(n, ns));
    assert.deepEqual(
      [...s.list("pods")].map((e) => e.key),
      ["a/1", "a/9", "b/1", "b/2", "c/1"],
    );
    assert.deepEqual(
      [...s.list("pods", "b")].map((e) => e.key),
      ["b/1", "b/2"],
    );
    assert.deepEqual(
      [...s.list("pods", undefined, "a/9")].map((e) => e.key),
      ["b/1", "b/2", "c/1"],
    );
    s.remove("pods", "b/1");
    assert.deepEqual(
      [...s.list("pods", "b")].map((e) => e.key),
      ["b/2"],
    );
  });

  test("history serves events after a version until it is compacted", () => {
    const s = new ObjectStore(3);
    const start = s.put("nodes", obj("n0")).rv;
    for (let i = 1; i <= 5; i++) s.put("nodes", obj(`n${i}`));
    assert.ok(s.compactedRv("nodes") > start, "old versions fall out of the window");
    const after = s.eventsAfter("nodes", s.compactedRv("nodes"));
    assert.deepEqual(
      after.map((e) => e.entry.key),
      ["n3", "n4", "n5"],
    );
    assert.ok(after.every((e) => e.type === "ADDED"));
  });

  test("indexes follow writes and deletes", () => {
    const s = new ObjectStore(10);
    s.addIndex("pods", "node", (o) => [String((o as any).spec?.nodeName ?? "")]);
    s.put("pods", { ...obj("p", "ns"), spec: { nodeName: "n1" } });
    assert.deepEqual([...s.byIndex("pods", "node", "n1")], ["ns/p"]);
    s.put("pods", { ...obj("p", "ns"), spec: { nodeName: "n2" } });
    assert.deepEqual([...s.byIndex("pods", "node", "n1")], []);
    s.remove("pods", "ns/p");
    assert.deepEqual([...s.byIndex("pods", "node", "n2")], []);
  });
});
