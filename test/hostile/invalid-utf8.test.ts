import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, test } from "node:test";
import WebSocket from "ws";
import type { App } from "../../src/app/create-app.js";
import { startTestApp } from "../support/app.js";
import { wsUrl } from "../auth/support.js";
import { servedMeanwhile } from "./support.js";

/** POSTs raw bytes as JSON and returns the status and parsed body. */
function postBytes(url: string, bytes: Buffer): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json", "content-length": bytes.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
    });
    req.on("error", reject);
    req.end(bytes);
  });
}

describe("invalid UTF-8 is refused, not replaced (issue 13, finding 10)", () => {
  let app: App;
  let url: string;
  before(async () => ({ app, url } = await startTestApp()));
  after(() => app.stop());

  test("a body with bytes that are not UTF-8 is 400 BAD_USER_INPUT and nothing runs", async () => {
    // A lone 0xFF and a truncated two-byte sequence inside the query's alias.
    for (const bad of [Buffer.from([0xff]), Buffer.from([0xc3])]) {
      const bytes = Buffer.concat([Buffer.from('{"query":"{ a'), bad, Buffer.from(': __typename }"}')]);
      const { status, body } = await postBytes(url, bytes);
      assert.equal(status, 400);
      assert.deepEqual(body, { errors: [{ message: "The request body is not valid UTF-8", extensions: { code: "BAD_USER_INPUT" } }] });
    }
    await servedMeanwhile(url);
    // Real UTF-8 with multi-byte characters runs.
    const fine = await postBytes(url, Buffer.from('{"query":"{ __type(name: \\"Jörg→\\") { name } }"}', "utf8"));
    assert.deepEqual(fine, { status: 200, body: { data: { __type: null } } });
  });

  test("a query string that percent-decodes to invalid UTF-8 is 400", async () => {
    const response = await fetch(`${url}/graphql?query=%7B%20a%FF%3A%20__typename%20%7D`, { headers: { "apollo-require-preflight": "1" } });
    assert.equal(response.status, 400);
    assert.deepEqual(await response.json(), { errors: [{ message: "The query string is not valid UTF-8 once percent-decoded", extensions: { code: "BAD_USER_INPUT" } }] });
  });

  test("over graphql-ws a text frame that is not UTF-8 closes the connection with 1007", async () => {
    const socket = new WebSocket(wsUrl(url), "graphql-transport-ws");
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
    socket.send(Buffer.concat([Buffer.from('{"type":"connection_init","payload":{"x":"'), Buffer.from([0xff]), Buffer.from('"}}')]), { binary: false });
    assert.equal(await closed, 1007);
  });
});
