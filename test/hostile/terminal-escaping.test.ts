import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { graphql, startTestApp } from "../support/app.js";
import { runCli } from "../support/cli.js";
import { eventually, startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";
import { servedMeanwhile } from "./support.js";

/** What a kubelet may report: an OSC title, a screen clear, a C1 CSI and a bidi override, then formula text. */
const OS_IMAGE = "\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202eUbuntu";
const KERNEL = "@SUM(1+1)";
const CLUSTER = "=1+1";
/** Bytes that act on a terminal: C0 controls but the line feed (and CRLF of CSV), C1 controls, bidi overrides. */
const ACTING = /[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe("the CLI escapes node text for the terminal and CSV cells for spreadsheets", () => {
  let sim: SimWithKubeconfig;
  let app: App;
  let url: string;
  let node: string;

  before(async () => {
    sim = await startSimWithKubeconfig({ nodes: 3, seed: 7 });
    node = sim.sim.cluster.nodeNames()[1]!;
    await sim.kubectl("patch", "node", node, "--subresource=status", "--type=merge", "-p", JSON.stringify({ status: { nodeInfo: { osImage: OS_IMAGE, kernelVersion: KERNEL } } }));
    // A cluster is named by its kubeconfig context, which is anybody's text.
    execFileSync("kubectl", ["--kubeconfig", sim.kubeconfigPath, "config", "rename-context", "sim", CLUSTER]);
    ({ app, url } = await startTestApp({ clusters: { kubeconfigs: [sim.kubeconfigPath], contexts: [] } }));
    await eventually(async () => {
      const { body } = await graphql(url, `{ node(cluster: "${CLUSTER}", name: "${node}") { nodeInfo { osImage } } }`);
      return body.data?.node?.nodeInfo.osImage === OS_IMAGE || undefined;
    }, "the service to see the node's text");
  });
  after(async () => {
    await app.stop();
    await sim.stop();
  });

  test("nodes -o wide and -o json write the control characters out as \\uXXXX; json keeps the same data", async () => {
    const wide = await runCli(["nodes", "-o", "wide", "--url", url]);
    assert.equal(wide.code, 0, wide.stderr);
    assert.doesNotMatch(wide.stdout, ACTING);
    assert.ok(wide.stdout.includes("\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u202eUbuntu"), wide.stdout);
    const json = await runCli(["nodes", "-o", "json", "--url", url]);
    assert.doesNotMatch(json.stdout, ACTING);
    const parsed = JSON.parse(json.stdout) as { name: string; nodeInfo: { osImage: string } }[];
    assert.equal(parsed.find((n) => n.name === node)?.nodeInfo.osImage, OS_IMAGE);
    await servedMeanwhile(url);
  });

  test("nodes -o csv and report capacity --format csv prefix formula cells with a quote", async () => {
    const csv = await runCli(["nodes", "-o", "csv", "--url", url]);
    assert.equal(csv.code, 0, csv.stderr);
    const row = csv.stdout.split("\r\n").find((line) => line.includes(node))!;
    assert.ok(row.startsWith(`'${CLUSTER},${node},`), row);
    assert.ok(row.includes(`,'${KERNEL},`), row);
    assert.doesNotMatch(csv.stdout.replaceAll("\r\n", "\n"), ACTING);
    const report = await runCli(["report", "capacity", "--url", url, "--group-by", "cluster", "--format", "csv"]);
    assert.equal(report.code, 0, report.stderr);
    assert.match(report.stdout, new RegExp(`^group,'${CLUSTER.replace("+", "\\+")},`, "m"));
    await servedMeanwhile(url);
  });
});
