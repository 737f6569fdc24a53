import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildClientSchema, getIntrospectionQuery, printSchema, type IntrospectionQuery } from "graphql";
import { serverAudits } from "graphql-http";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { ACCEPTED_AUDITS } from "../support/http-audits.js";
import { startProgram, type RunningProgram } from "../support/program.js";

// The program users run, `bin/node-inventory.js serve`, as a child process: not createApp.

async function introspectOverHttp(url: string) {
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/graphql-response+json" },
    body: JSON.stringify({ query: getIntrospectionQuery() }),
  });
  return { status: response.status, body: (await response.json()) as { data?: IntrospectionQuery; errors?: any[] } };
}

async function introspectOverWebSocket(url: string): Promise<{ data?: IntrospectionQuery | null; errors?: readonly any[] }> {
  const client = createClient({ url: `${url.replace(/^http/, "ws")}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
  try {
    return await new Promise((resolve, reject) => {
      let result: { data?: any; errors?: readonly any[] } = {};
      client.subscribe(
        { query: getIntrospectionQuery() },
        { next: (value) => (result = value as typeof result), error: (error) => (Array.isArray(error) ? resolve({ errors: error }) : reject(error)), complete: () => resolve(result) },
      );
    });
  } finally {
    await client.dispose();
  }
}

describe("bin/node-inventory.js serve, as users start it (NODE_ENV left to the program: production)", () => {
  let program: RunningProgram;
  before(async () => {
    program = await startProgram(["--port", "0", "--data-dir", "memory", "--simulate", "3"]);
  });
  after(async () => {
    if (program.child.exitCode === null) await program.terminate();
  });

  test("it logs that it is ready with its URL, and /readyz answers 200", async () => {
    assert.match(program.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const ready = await fetch(`${program.url}/readyz`);
    assert.equal(ready.status, 200);
    assert.equal(((await ready.json()) as { status: string }).status, "ready");
  });

  test("the standard introspection query is answered over HTTP, and describes the served schema", async () => {
    const { status, body } = await introspectOverHttp(program.url);
    assert.equal(status, 200);
    assert.equal(body.errors, undefined);
    const sdl = await (await fetch(`${program.url}/schema.graphql`)).text();
    // /schema.graphql is the same schema introspection describes.
    assert.equal(printSchema(buildClientSchema(body.data!)) + "\n", sdl);
  });

  test("the standard introspection query is answered over graphql-ws", async () => {
    const result = await introspectOverWebSocket(program.url);
    assert.equal(result.errors, undefined);
    assert.equal(result.data!.__schema.queryType.name, "Query");
    const cluster = result.data!.__schema.types.find((type) => type.name === "Cluster") as unknown as { fields: { name: string }[] };
    assert.ok(cluster.fields.some((field) => field.name === "simulated"));
  });

  describe("graphql-http's server audits: no error, no warning", () => {
    for (const audit of serverAudits({ url: () => `${program.url}/graphql` })) {
      test(`${audit.id} ${audit.name}`, async () => {
        const result = await audit.fn();
        if (result.status === "ok") return;
        assert.ok(ACCEPTED_AUDITS[audit.id]?.startsWith(result.status), `${result.status}: ${result.reason}`);
      });
    }
  });

  test("SIGTERM: exits 0 after an ordered shutdown", async () => {
    const { code } = await program.terminate();
    assert.equal(code, 0);
    const messages = program
      .stdout()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line).msg);
    const at = (message: string) => messages.lastIndexOf(message);
    assert.ok(at("signal received") >= 0 && at("signal received") < at("shutting down"), "the signal, then the shutdown");
    assert.equal(messages.at(-1), "stopped");
  });
});

describe("introspection turned off", () => {
  test("INTROSPECTION=false refuses it over HTTP and graphql-ws alike, whatever NODE_ENV (here development)", async () => {
    const program = await startProgram(["--port", "0", "--data-dir", "memory", "--simulate", "1"], { INTROSPECTION: "false", NODE_ENV: "development" });
    try {
      const http = await introspectOverHttp(program.url);
      assert.equal(http.status, 400);
      assert.equal(http.body.errors![0].extensions.code, "GRAPHQL_VALIDATION_FAILED");
      assert.match(http.body.errors![0].message, /introspection/i);
      const ws = await introspectOverWebSocket(program.url);
      assert.match(ws.errors![0].message, /introspection/i);
      assert.equal((await fetch(`${program.url}/schema.graphql`)).status, 404);
      // Everything else still answers.
      const plain = await fetch(`${program.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: "{ clusters { name simulated } }" }) });
      assert.deepEqual(await plain.json(), { data: { clusters: [{ name: "sim", simulated: true }] } });
    } finally {
      await program.terminate();
    }
  });
});

describe("logs for people", () => {
  test("--log-format pretty prints pino-pretty's lines, not JSON, and still says where it listens", async () => {
    const { spawnCli } = await import("../support/cli.js");
    const child = spawnCli(["serve", "--port", "0", "--data-dir", "memory", "--simulate", "1", "--log-format", "pretty"], { HOME: "/nonexistent" });
    let out = "";
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on("data", (chunk) => {
        out += chunk;
        if (/node-inventory ready/.test(out)) resolve();
      });
      child.once("exit", (code) => reject(new Error(`exited ${code}:\n${out}`)));
    });
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
    const lines = out.split("\n").filter(Boolean);
    assert.equal(lines.filter((line) => line.startsWith("{")).length, 0, out);
    // [time] LEVEL: message {fields}: a level word, never pino's numbers.
    assert.match(out, /^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: serving the embedded SIMULATED cluster "sim"/m);
    assert.match(out, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: node-inventory ready .*"url":"http:\/\/127\.0\.0\.1:\d+"/m);
  });
});
