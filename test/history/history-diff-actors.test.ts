import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { CachedNode } from "../../src/cluster/model.js";
import { diffNode, snapshotOf } from "../../src/history/history-diff.js";
import { changeNoteAnnotations, type ChangeNote } from "../../src/history/history-model.js";
import { cachedNode } from "../support/cached-objects.js";

// Who changed a label, a taint or the boot: the diff of one observation against the recorded state.

const AT = new Date("2026-01-01T00:00:00Z");
const obs = { at: AT, key: "rv-2", reconciled: false };
const note = (id: string, fields: Partial<ChangeNote>): Record<string, string> => changeNoteAnnotations({ id, actor: "alice", reason: "why", ...fields });
const node = (o: Partial<CachedNode>) => cachedNode("n", { nodeInfo: { ...cachedNode("n").nodeInfo, bootID: "boot-1" }, ...o });
const changesOf = (before: CachedNode, after: CachedNode) => {
  const diff = diffNode("c1", "n", snapshotOf(before, AT), after, obs);
  return { changes: diff.changes.map((c) => [c.field, c.item, c.before, c.after, c.actor]), events: diff.maintenance.map((m) => [m.kind, m.actor, m.reason, m.detail]) };
};

describe("the actor of a node change", () => {
  test("a fresh note that says exactly the change credits its actor, with the reason", () => {
    const after = node({ labels: { team: "web" }, annotations: note("a", { labels: { team: "web" } }) });
    assert.deepEqual(changesOf(node({}), after), {
      changes: [["LABELS", "team", null, "web", "alice"]],
      events: [["LABELED", "alice", "why", "team=web"]],
    });
  });

  test("a note already recorded says nothing about a later change to the same value", () => {
    const noted = note("a", { labels: { team: "web" } });
    const before = node({ labels: {}, annotations: noted });
    const after = node({ labels: { team: "web" }, annotations: noted });
    assert.deepEqual(changesOf(before, after).changes, [["LABELS", "team", null, "web", "external"]]);
  });

  test("a fresh note about another value, or another key, is not this change's", () => {
    const after = node({ labels: { team: "db", env: "prod" }, annotations: note("b", { labels: { team: "web" } }) });
    assert.deepEqual(changesOf(node({}), after), {
      changes: [
        ["LABELS", "env", null, "prod", "external"],
        ["LABELS", "team", null, "db", "external"],
      ],
      events: [["LABELED", "external", null, "env=prod team=db"]],
    });
  });

  test("taints: one change per key and effect; ours and an external one in one observation are two events", () => {
    const before = node({ taints: [{ key: "gpu", effect: "NoSchedule" }] });
    const after = node({
      taints: [
        { key: "gpu", value: "a100", effect: "NoSchedule" },
        { key: "spot", effect: "NoExecute" },
      ],
      annotations: note("c", { taints: { "gpu:NoSchedule": "a100:NoSchedule" } }),
    });
    assert.deepEqual(changesOf(before, after), {
      changes: [
        ["TAINTS", "gpu:NoSchedule", "NoSchedule", "a100:NoSchedule", "alice"],
        ["TAINTS", "spot:NoExecute", null, "NoExecute", "external"],
      ],
      events: [
        ["TAINTED", "alice", "why", "gpu=a100:NoSchedule"],
        ["TAINTED", "external", null, "spot:NoExecute"],
      ],
    });
  });

  test("the taints Kubernetes keeps itself are node changes but no maintenance event", () => {
    const after = node({ taints: [{ key: "node.kubernetes.io/unschedulable", effect: "NoSchedule" }] });
    assert.deepEqual(changesOf(node({}), after), { changes: [["TAINTS", "node.kubernetes.io/unschedulable:NoSchedule", null, "NoSchedule", "external"]], events: [] });
  });

  test("a new bootID is REBOOTED; none recorded before (older history) is no reboot", () => {
    const rebooted = node({ nodeInfo: { ...node({}).nodeInfo, bootID: "boot-2" } });
    assert.deepEqual(changesOf(node({}), rebooted).changes, [["REBOOTED", "", "boot-1", "boot-2", "external"]]);
    const unknown = { ...snapshotOf(node({}), AT), bootId: "" };
    const diff = diffNode("c1", "n", unknown, rebooted, obs);
    assert.deepEqual(diff.changes, []);
    assert.equal(diff.next?.bootId, "boot-2", "the bootID is recorded for next time");
  });
});
