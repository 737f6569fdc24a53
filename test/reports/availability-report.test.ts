import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AppError } from "../../src/graphql/errors.js";
import type { QueryAvailabilityReportArgs } from "../../src/graphql/generated/resolvers-types.js";
import { availabilityRequest, buildAvailabilityReport, type NodeHistory } from "../../src/reports/availability-report.js";
import type { TimelineEvent } from "../../src/reports/availability-timeline.js";

// The period is [minute 0, minute 100).
const MINUTE = 60_000;
const FROM = Date.UTC(2026, 0, 1);
const t = (minute: number) => new Date(FROM + minute * MINUTE);
const NOW = t(10_000);

let seq = 0;
const ready = (minute: number, from: string | null, to: string): TimelineEvent => ({ kind: "READY", at: t(minute).getTime(), from, to, seq: ++seq });

function history(name: string, zone: string | null, events: TimelineEvent[], cluster = "prod", reboots = 0): NodeHistory {
  const labels: Record<string, string> = zone ? { "topology.kubernetes.io/zone": zone, team: "web" } : { team: "web" };
  return { node: { cluster, name, uid: `${name}-uid`, labels, ready: "True", unschedulable: false }, events, reboots };
}

// n1 (zone a): outages of 2 and 20 minutes. n2 (zone a): one of 8 minutes, cordoned 10.
// n3 (zone b): Ready throughout, rebooted twice (reboot counts come from the query layer). n4 (no zone): observed from minute 50. n5: only after the period.
const HISTORIES: NodeHistory[] = [
  history("n1", "a", [ready(-50, null, "True"), ready(10, "True", "False"), ready(12, "False", "True"), ready(40, "True", "Unknown"), ready(60, "Unknown", "True")]),
  history("n2", "a", [
    ready(-50, null, "True"),
    ready(70, "True", "False"),
    ready(78, "False", "True"),
    { kind: "CORDONED", at: t(80).getTime(), seq: ++seq },
    { kind: "UNCORDONED", at: t(90).getTime(), seq: ++seq },
  ]),
  history("n3", "b", [ready(-50, null, "True")], "prod", 2),
  // Not observed in the period: its reboots count nowhere.
  history("n6", "a", [ready(150, null, "True")], "prod", 5),
  history("n4", null, [ready(50, null, "True")]),
  history("n5", "b", [ready(150, null, "True")]),
];

const minutes = (m: number) => m * 60;
/** The cluster recorded all along. */
const WATCHED = new Map([["prod", [[-Infinity, Infinity]] as const]]);

function request(args: Partial<QueryAvailabilityReportArgs> = {}) {
  return availabilityRequest({ from: t(0), to: t(100), ...args });
}

describe("the availability report", () => {
  test("nodes observed in the period, in cluster and name order, each with its figures", () => {
    const report = buildAvailabilityReport(request(), [...HISTORIES].reverse(), NOW, WATCHED);
    assert.deepEqual(
      report.nodes.map((n) => n.node),
      ["n1", "n2", "n3", "n4"],
    );
    assert.deepEqual(report.nodes[0], {
      cluster: "prod",
      node: "n1",
      key: [],
      observedSeconds: minutes(100),
      unobservedSeconds: 0,
      readySeconds: minutes(78),
      notReadySeconds: minutes(2),
      unknownSeconds: minutes(20),
      availability: 0.78,
      outages: 2,
      longestOutageSeconds: minutes(20),
      mttrSeconds: minutes(11),
      flaps: 1,
      maintenanceSeconds: 0,
      reboots: 0,
      deleted: false,
    });
    assert.equal(report.nodes[3]!.observedSeconds, minutes(50));
    assert.equal(report.nodes[3]!.mttrSeconds, null);
  });

  test("groups sum their nodes; longest is the largest; MTTR is over all the group's ended outages", () => {
    const report = buildAvailabilityReport(request({ groupBy: [{ by: "ZONE" }] }), HISTORIES, NOW, WATCHED);
    assert.deepEqual(report.groupBy, ["ZONE"]);
    assert.deepEqual(
      report.groups.map((g) => [g.key, g.nodeCount]),
      [
        [[{ dimension: "ZONE", value: "a" }], 2],
        [[{ dimension: "ZONE", value: "b" }], 1],
        [[{ dimension: "ZONE", value: null }], 1],
      ],
    );
    assert.deepEqual(report.groups[0], {
      key: [{ dimension: "ZONE", value: "a" }],
      nodeCount: 2,
      observedSeconds: minutes(200),
      unobservedSeconds: 0,
      readySeconds: minutes(170),
      notReadySeconds: minutes(10),
      unknownSeconds: minutes(20),
      availability: 0.85,
      outages: 3,
      longestOutageSeconds: minutes(20),
      // (2 + 20 + 8) / 3, not the mean of the nodes' means (11 and 8).
      mttrSeconds: minutes(10),
      flaps: 1,
      maintenanceSeconds: minutes(10),
      reboots: 0,
    });
    assert.deepEqual(report.groups[1]!.reboots, 2);
    assert.deepEqual(report.total, {
      key: [],
      nodeCount: 4,
      observedSeconds: minutes(350),
      unobservedSeconds: 0,
      readySeconds: minutes(320),
      notReadySeconds: minutes(10),
      unknownSeconds: minutes(20),
      availability: 0.914286,
      outages: 3,
      longestOutageSeconds: minutes(20),
      mttrSeconds: minutes(10),
      flaps: 1,
      maintenanceSeconds: minutes(10),
      reboots: 2,
    });
  });

  test("several groupings make one key per node, in the order asked", () => {
    const report = buildAvailabilityReport(request({ groupBy: [{ by: "LABEL", labelKey: "team" }, { by: "CLUSTER" }, { by: "ZONE" }] }), HISTORIES, NOW, WATCHED);
    assert.deepEqual(report.groupBy, ["label:team", "CLUSTER", "ZONE"]);
    assert.deepEqual(report.nodes[2]!.key, [
      { dimension: "label:team", value: "web" },
      { dimension: "CLUSTER", value: "prod" },
      { dimension: "ZONE", value: "b" },
    ]);
    assert.equal(report.groups.length, 3);
  });

  test("a cluster recorded only from minute 60: each node's time before is unobserved, and the groups sum it", () => {
    const report = buildAvailabilityReport(request(), HISTORIES, NOW, new Map([["prod", [[t(60).getTime(), Infinity]] as const]]));
    assert.deepEqual(
      report.nodes.map((n) => [n.node, n.observedSeconds, n.unobservedSeconds, n.readySeconds]),
      [
        ["n1", minutes(40), minutes(60), minutes(40)],
        ["n2", minutes(40), minutes(60), minutes(32)],
        ["n3", minutes(40), minutes(60), minutes(40)],
        ["n4", minutes(40), minutes(60), minutes(40)],
      ],
    );
    assert.deepEqual([report.total.observedSeconds, report.total.unobservedSeconds], [minutes(160), minutes(240)]);
  });

  test("a cluster never recorded has no nodes observed", () => {
    const report = buildAvailabilityReport(request(), HISTORIES, NOW, new Map());
    assert.deepEqual([report.nodes, report.total.nodeCount], [[], 0]);
  });

  test("without groupBy there is one group, equal to the total", () => {
    const report = buildAvailabilityReport(request(), HISTORIES, NOW, WATCHED);
    assert.deepEqual(report.groups, [report.total]);
  });

  test("a `to` after now stops at now, and the report still says the `to` asked for", () => {
    const report = buildAvailabilityReport(request({ to: t(200) }), HISTORIES, t(100), WATCHED);
    assert.equal(report.to.getTime(), t(200).getTime());
    assert.equal(report.total.observedSeconds, minutes(350));
  });

  test("no nodes: empty groups, a total of zeros with null ratios", () => {
    const report = buildAvailabilityReport(request(), [], NOW, WATCHED);
    assert.deepEqual(report.groups, []);
    assert.deepEqual(report.total, {
      key: [],
      nodeCount: 0,
      observedSeconds: 0,
      unobservedSeconds: 0,
      readySeconds: 0,
      notReadySeconds: 0,
      unknownSeconds: 0,
      availability: null,
      outages: 0,
      longestOutageSeconds: 0,
      mttrSeconds: null,
      flaps: 0,
      maintenanceSeconds: 0,
      reboots: 0,
    });
  });

  const bad: [string, Partial<QueryAvailabilityReportArgs>, RegExp][] = [
    ["to before from", { to: t(-1) }, /^to must be after from$/],
    ["to equal to from", { to: t(0) }, /^to must be after from$/],
    ["a negative flap threshold", { flapThresholdSeconds: -1 }, /^flapThresholdSeconds must be a whole number of seconds, 0 or more, got -1$/],
    ["LABEL without a labelKey", { groupBy: [{ by: "LABEL" }] }, /^groupBy LABEL needs a labelKey$/],
    ["a labelKey on another dimension", { groupBy: [{ by: "ZONE", labelKey: "x" }] }, /^groupBy ZONE takes no labelKey$/],
    ["a dimension twice", { groupBy: [{ by: "ZONE" }, { by: "ZONE" }] }, /^groupBy names ZONE twice$/],
    ["an invalid label key", { groupBy: [{ by: "LABEL", labelKey: "-bad-" }] }, /^groupBy labelKey "-bad-": /],
  ];
  for (const [name, args, message] of bad) {
    test(`${name} is BAD_USER_INPUT`, () => {
      assert.throws(
        () => request(args),
        (error: unknown) => error instanceof AppError && error.extensions.code === "BAD_USER_INPUT" && message.test(error.message),
      );
    });
  }

  test("the flap threshold defaults to 300 seconds", () => {
    assert.equal(request().flapThresholdSeconds, 300);
    assert.equal(request({ flapThresholdSeconds: 0 }).flapThresholdSeconds, 0);
  });
});
