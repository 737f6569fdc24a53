import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { boundedText, stripNodeEvent } from "../../src/cluster/node-event.js";

describe("stripNodeEvent reads both event shapes as kubectl get events does", () => {
  test("a core/v1 event: count, firstTimestamp, lastTimestamp, source.component", () => {
    assert.deepEqual(
      stripNodeEvent("c1", {
        metadata: { name: "n1.17a", namespace: "default", uid: "u1", creationTimestamp: "2026-01-01T00:00:00Z" },
        involvedObject: { kind: "Node", name: "n1", uid: "n1" },
        type: "Normal",
        reason: "NodeReady",
        message: "Node n1 status is now: NodeReady",
        count: 3,
        firstTimestamp: "2026-01-01T00:00:00Z",
        lastTimestamp: "2026-01-01T00:05:00Z",
        source: { component: "kubelet", host: "n1" },
        reportingComponent: "kubelet",
      }),
      {
        cluster: "c1",
        id: "u1",
        node: "n1",
        key: "default/n1.17a",
        type: "Normal",
        reason: "NodeReady",
        message: "Node n1 status is now: NodeReady",
        count: 3,
        firstSeen: "2026-01-01T00:00:00Z",
        lastSeen: "2026-01-01T00:05:00Z",
        source: "kubelet",
      },
    );
  });

  test("an events.k8s.io/v1 event read through core/v1: series, eventTime, reportingComponent; count at least 1", () => {
    const series = stripNodeEvent("c1", {
      metadata: { name: "e", namespace: "default", uid: "u2" },
      involvedObject: { kind: "Node", name: "n1" },
      type: "Warning",
      reason: "Rebooted",
      eventTime: "2026-01-01T00:00:00.000000Z",
      series: { count: 7, lastObservedTime: "2026-01-01T00:30:00.000000Z" },
      reportingComponent: "kubelet",
      source: {},
    })!;
    assert.deepEqual([series.count, series.firstSeen, series.lastSeen, series.source], [7, "2026-01-01T00:00:00.000000Z", "2026-01-01T00:30:00.000000Z", "kubelet"]);
    const single = stripNodeEvent("c1", { metadata: { uid: "u3", name: "e", namespace: "default" }, involvedObject: { kind: "Node", name: "n1" }, reason: "X", eventTime: "2026-01-01T00:00:00Z" })!;
    assert.deepEqual([single.count, single.lastSeen, single.type, single.source], [1, "2026-01-01T00:00:00Z", "Normal", undefined]);
  });

  test("an event about something else, or without uid or node name, is not kept", () => {
    assert.equal(stripNodeEvent("c1", { metadata: { uid: "u" }, involvedObject: { kind: "Pod", name: "p" } }), undefined);
    assert.equal(stripNodeEvent("c1", { metadata: {}, involvedObject: { kind: "Node", name: "n" } }), undefined);
    assert.equal(stripNodeEvent("c1", { metadata: { uid: "u" }, involvedObject: { kind: "Node" } }), undefined);
  });

  const cases: [string, unknown, number, string | undefined][] = [
    ["NUL and bell removed, tab and newline kept", "a\u0000\u0007b\tc\nd", 100, "ab\tc\nd"],
    ["cut with an ellipsis", "abcdef", 4, "abc…"],
    ["a lone surrogate replaced", "x\ud800y", 10, "x\ufffdy"],
    ["not a string", 42, 10, undefined],
  ];
  for (const [name, input, limit, expected] of cases) test(`boundedText: ${name}`, () => assert.equal(boundedText(input, limit), expected));
});
