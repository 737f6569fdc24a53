import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Kind, parse, print, type OperationDefinitionNode } from "graphql";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { PACKAGE_ROOT } from "../../src/package-info.js";
import { runCli } from "../support/cli.js";
import { BACKENDS, type TestDatabase } from "../support/databases.js";
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

/** A README command line: `node-inventory`'s arguments, and the output it shows after `$ `, if any. */
interface CliExample {
  line: number;
  argv: string[];
  shown?: string[];
}

/** A README line's words as a POSIX shell splits them, without its `# comment` and `> file` redirect. */
function shellWords(text: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= "";
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if ((c === "#" || c === ">") && word === undefined) break;
    else word = (word ?? "") + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** The CLI commands of README.md that talk to a service or a database: report and the fleet commands. */
function readmeCliExamples(): CliExample[] {
  const readme = readFileSync(join(PACKAGE_ROOT, "README.md"), "utf8");
  const examples: CliExample[] = [];
  const talks = /^npx node-inventory (report|nodes|cordon|uncordon|label|taint|drain)\b/;
  // Every block, whatever its language, so that a closing fence is never read as an opening one.
  for (const block of readme.matchAll(/^```(\w*)\n([\s\S]*?)^```/gm)) {
    const line = readme.slice(0, block.index).split("\n").length + 1;
    const body = block[2]!.replace(/\\\n\s*/g, " ");
    if (block[1] === "sh") {
      for (const [i, text] of body.split("\n").entries()) if (talks.test(text)) examples.push({ line: line + i, argv: shellWords(text).slice(2) });
    } else if (block[1] === "" && body.startsWith("$ ") && talks.test(body.slice(2))) {
      const [command, ...shown] = body.trimEnd().split("\n");
      examples.push({ line, argv: shellWords(command!.slice(2)).slice(2), shown });
    }
  }
  return examples;
}

/**
 * A printed line with what changes from run to run (times, durations, percentages, counts)
 * made alike, so that the names and columns a README shows are compared exactly.
 */
function shape(line: string): string[] {
  return line
    .trim()
    .split(/\s{2,}/)
    .map((cell) =>
      cell
        .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, "TIME")
        .replace(/^(\d+[smhd]|\d+[smhd]\d\d[smh]|<1s|-)$/, "DURATION")
        .replace(/^[\d.]+%$/, "PERCENT")
        .replace(/^\d+$/, "N"),
    );
}

const DRAIN_ID = "…";

/**
 * The README's examples run against what `npm start` serves: the default embedded cluster
 * (seed 1, so its node names are fixed), through the real program. Each must answer without
 * an error. Subscriptions without a drain id are opened first, and the cordon example then
 * gives each an event; `…` is the id of the drain the drainNode example started, and the
 * examples that use it run after it, as the README says.
 */
describe("README.md's GraphQL and CLI examples, against the default embedded cluster", () => {
  const examples = readmeExamples();
  let program: RunningProgram;
  let client: Client;
  let database: TestDatabase;
  before(async () => {
    // The demo recording into PostgreSQL, so that the README's --database-url line has one.
    database = await BACKENDS.find((b) => b.name === "postgres")!.create();
    program = await startProgram(["--port", "0", "--database-url", (database.config as { url: string }).url]);
    client = createClient({ url: `${program.url.replace(/^http/, "ws")}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
  });
  after(async () => {
    await client?.dispose();
    await program?.terminate();
    await database?.drop();
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
      if (example.text.includes("drainNode") && drainId) {
        // The drain before this one is the one that completes on the demo, as the README says.
        const id = drainId;
        await eventually(async () => (await overHttp(`{ drainOperation(id: "${id}") { status } }`)).data?.drainOperation.status === "SUCCEEDED", `the drain README.md says completes`, 120_000);
      }
      const { data, errors } = await overHttp(text);
      assert.equal(errors, undefined, `README.md:${example.line}: ${JSON.stringify(errors)}\n${text}`);
      if (data.drainNode) drainId = data.drainNode.id;
      if (data.cancelDrain) assert.equal(data.cancelDrain.status, "CANCELLED", `README.md:${example.line}`);
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
  test("each CLI line runs as written (the service and database at the demo's addresses), and shows what it prints", async () => {
    const examples = readmeCliExamples();
    assert.ok(examples.length >= 10 && examples.filter((e) => e.shown).length >= 2, JSON.stringify(examples));
    // The shown report is of every node observed: wait until the recording has covered them all.
    const all = (await overHttp("{ nodes(first: 100) { totalCount } }")).data.nodes.totalCount;
    const observed = async () => {
      const to = new Date().toISOString();
      const from = new Date(Date.now() - 3_600_000).toISOString();
      return (await overHttp(`{ availabilityReport(from: "${from}", to: "${to}") { total { nodeCount } } }`)).data?.availabilityReport.total.nodeCount === all;
    };
    await eventually(observed, "every node observed", 60_000);
    const at = (argv: string[]) =>
      argv.map((word) => word.replace("http://inventory:4000", program.url).replace("postgresql://app@db:5432/inventory", (database.config as { url: string }).url));
    for (const example of examples) {
      const { code, stdout, stderr } = await runCli(at(example.argv), { NODE_INVENTORY_URL: program.url }, 120_000);
      assert.equal(code, 0, `README.md:${example.line}: node-inventory ${example.argv.join(" ")}\n${stderr}`);
      if (!example.shown) continue;
      const printed = stdout.trimEnd().split("\n");
      example.shown.forEach((line, i) => {
        if (line === "…") return;
        assert.deepEqual(shape(printed[i] ?? ""), shape(line), `README.md:${example.line + 1 + i}: printed ${JSON.stringify(printed[i])}`);
      });
      if (!example.shown.includes("…")) assert.equal(printed.length, example.shown.length, `README.md:${example.line}: every line printed is shown\n${stdout}`);
    }
  });
});
