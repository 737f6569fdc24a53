import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Kind, parse, print, type OperationDefinitionNode } from "graphql";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { PACKAGE_ROOT } from "../../src/package-info.js";
import { startProgram, type RunningProgram } from "../support/program.js";
import { eventually } from "../support/sim-cluster.js";

interface Example {
  /** Where it is in README.md, for the failure message. */
  line: number;
  kind: OperationDefinitionNode["operation"];
  text: string;
}

/**
 * Every GraphQL example of README.md: each operation of each ```graphql block (a block may
 * hold several), and the queries the `curl` lines send.
 */
function readmeExamples(): Example[] {
  const readme = readFileSync(join(PACKAGE_ROOT, "README.md"), "utf8");
  const examples: Example[] = [];
  for (const block of readme.matchAll(/^```(graphql|sh)\n([\s\S]*?)^```/gm)) {
    const line = readme.slice(0, block.index).split("\n").length + 1;
    const sources =
      block[1] === "graphql"
        ? [block[2]!]
        : [...block[2]!.matchAll(/-d '(\{"query".*?\})'/g)].map((m) => JSON.parse(m[1]!).query as string).concat(
            [...block[2]!.matchAll(/graphql\?query=([^' ]+)/g)].map((m) => decodeURIComponent(m[1]!)),
          );
    for (const source of sources) {
      for (const definition of parse(source).definitions) {
        if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
        examples.push({ line, kind: definition.operation, text: print(definition) });
      }
    }
  }
  return examples;
}

const DRAIN_ID = "…";

/**
 * The README's examples run against what `npm start` serves: the default embedded cluster
 * (seed 1, so its node names are fixed), through the real program. Each must answer without
 * an error. Subscriptions without a drain id are opened first, and the cordon example then
 * gives each an event; `…` is the id of the drain the drainNode example started, and the
 * examples that use it run after it, as the README says.
 */
describe("README.md's GraphQL examples, against the default embedded cluster", () => {
  const examples = readmeExamples();
  let program: RunningProgram;
  let client: Client;
  before(async () => {
    program = await startProgram(["--port", "0", "--data-dir", "memory"]);
    client = createClient({ url: `${program.url.replace(/^http/, "ws")}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
  });
  after(async () => {
    await client?.dispose();
    await program?.terminate();
  });

  async function overHttp(text: string) {
    const response = await fetch(`${program.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: text }) });
    return (await response.json()) as { data?: any; errors?: any[] };
  }

  function subscribe(text: string) {
    const results: { data?: unknown; errors?: readonly unknown[] }[] = [];
    const failures: unknown[] = [];
    const stop = client.subscribe({ query: text }, { next: (value) => results.push(value), error: (error) => failures.push(error), complete: () => {} });
    return { results, failures, stop };
  }

  test("there are examples of every kind, and every node and cluster they name exists in the default cluster", async () => {
    const kinds = new Set(examples.map((e) => e.kind));
    assert.deepEqual([...kinds].sort(), ["mutation", "query", "subscription"]);
    const { data } = await overHttp("{ clusters { name } nodes(first: 100) { edges { node { name } } } }");
    const nodes = new Set(data.nodes.edges.map((e: { node: { name: string } }) => e.node.name));
    const clusters = new Set(data.clusters.map((c: { name: string }) => c.name));
    for (const example of examples) {
      // The `name:` of a pod shape's extended resources (nvidia.com/gpu) names no node.
      const text = example.text.replace(/extended: \[[^\]]*\]/g, "");
      for (const [, name] of text.matchAll(/\b(?:name|node): "([^"]+)"/g)) assert.ok(nodes.has(name), `README.md:${example.line} names node ${name}`);
      for (const [, name] of example.text.matchAll(/\bcluster: "([^"]+)"/g)) assert.ok(clusters.has(name), `README.md:${example.line} names cluster ${name}`);
    }
  });

  test("each runs without an error", async () => {
    const early = examples.filter((e) => e.kind === "subscription" && !e.text.includes(DRAIN_ID)).map((e) => ({ example: e, ...subscribe(e.text) }));
    let drainId: string | undefined;
    for (const example of examples.filter((e) => e.kind !== "subscription")) {
      const text = example.text.replaceAll(DRAIN_ID, drainId ?? DRAIN_ID);
      const { data, errors } = await overHttp(text);
      assert.equal(errors, undefined, `README.md:${example.line}: ${JSON.stringify(errors)}\n${text}`);
      if (data.drainNode) drainId = data.drainNode.id;
      // The subscriptions opened first each see the cordon (a worker's schedulability, a maintenance event).
      if (data.cordonNode) {
        for (const open of early) {
          const first = await eventually(() => open.results[0] ?? open.failures[0], `an event for README.md:${open.example.line}`, 20_000);
          assert.deepEqual(open.failures, [], `README.md:${open.example.line}`);
          assert.equal((first as { errors?: unknown }).errors, undefined, `README.md:${open.example.line}: ${JSON.stringify(first)}`);
          open.stop();
        }
      }
    }
    assert.ok(drainId, "the drainNode example started a drain");
    // Those that follow a drain: its current state comes at once.
    for (const example of examples.filter((e) => e.kind === "subscription" && e.text.includes(DRAIN_ID))) {
      const open = subscribe(example.text.replaceAll(DRAIN_ID, drainId));
      const first = await eventually(() => open.results[0] ?? open.failures[0], `README.md:${example.line}`, 20_000);
      assert.deepEqual(open.failures, [], `README.md:${example.line}`);
      assert.equal((first as { errors?: unknown }).errors, undefined, `README.md:${example.line}: ${JSON.stringify(first)}`);
      open.stop();
    }
  });
});
