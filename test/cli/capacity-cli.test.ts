import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { graphql, startTestApp } from "../support/app.js";
import { runCli } from "../support/cli.js";
import { eventually } from "../support/sim-cluster.js";

const REPORT = `query($groupBy: [ReportGrouping!], $podShape: PodShapeInput) {
  capacityReport(groupBy: $groupBy, podShape: $podShape) {
    groupBy
    groups { key { dimension value } nodeCount cpu { allocatable requests } memory { headroom } fit { pods } }
    total { nodeCount cpu { allocatable requests } memory { headroom } fit { pods } }
  }
}`;

/** RFC 4180 as the CLI writes it: no field here holds a comma or a quote. */
const parseCsv = (text: string) =>
  text
    .trim()
    .split("\n")
    .map((line) => line.split(","));

describe("node-inventory report capacity, against a running service", () => {
  let app: App;
  let url: string;

  before(async () => {
    ({ app, url } = await startTestApp());
    await eventually(async () => (await graphql(url, "{ clusters { synced } }")).body.data?.clusters[0]?.synced, "the embedded cluster to sync", 20_000);
  });
  after(() => app.stop());

  test("CSV rows carry the service's figures, group by group and in total", async () => {
    const { code, stdout, stderr } = await runCli(["report", "capacity", "--url", url, "--group-by", "role", "--pod-shape", "cpu=500m,memory=1Gi", "--format", "csv"]);
    assert.equal(code, 0, stderr);
    const [header, ...rows] = parseCsv(stdout);
    const column = (name: string) => {
      const at = header!.indexOf(name);
      assert.ok(at >= 0, `column ${name} in ${header!.join(",")}`);
      return at;
    };
    const expected = (await graphql(url, REPORT, { groupBy: [{ by: "ROLE" }], podShape: { cpu: "500m", memory: "1Gi" } })).body.data.capacityReport;
    assert.equal(rows.length, expected.groups.length + 1, "one row per group and the total");
    const figures = (g: any) => [g.nodeCount, g.cpu.allocatable, g.cpu.requests, g.memory.headroom, g.fit.pods].map(String);
    const fromCsv = (row: string[]) => ["node_count", "cpu_allocatable", "cpu_requests", "memory_headroom", "fit_pods"].map((name) => row[column(name)]);
    for (const [i, group] of expected.groups.entries()) assert.deepEqual(fromCsv(rows[i]!), figures(group), `group ${JSON.stringify(group.key)}`);
    assert.deepEqual(fromCsv(rows.at(-1)!), figures(expected.total));
    assert.ok(Number(rows.at(-1)![column("fit_pods")]) > 0, "pods of the shape fit somewhere");
  });

  test("the table names the shape and has a row per role and a total", async () => {
    const { code, stdout, stderr } = await runCli(["report", "capacity", "--url", url, "--group-by", "role", "--pod-shape", "cpu=500m,memory=1Gi"]);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^Capacity at \S+ \(CPU in cores, memory in GiB\)$/m);
    assert.match(stdout, /^Pod shape: 0\.5 cores, 1(\.0+)? GiB$/m);
    assert.match(stdout, /^ROLE\s+NODES\s+READY\s+SCHEDULABLE\s+CPU ALLOC/m);
    assert.match(stdout, /^control-plane\s+\d+/m);
    assert.match(stdout, /^worker\s+\d+/m);
  });
});
