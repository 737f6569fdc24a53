import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { graphql, ready, startTestApp } from "../support/app.js";
import { init } from "../auth/support.js";
import { servedMeanwhile } from "./support.js";

const STRICT = { accept: "application/graphql-response+json" };
const first = (r: { body: { errors?: any[] } }) => ({ code: r.body.errors?.[0]?.extensions?.code, reason: r.body.errors?.[0]?.extensions?.reason, message: r.body.errors?.[0]?.message });

/** The selector: 40,000 "does not exist" requirements, 310 KB. */
const NOT_EXISTS = Array.from({ length: 40_000 }, (_, i) => `!k${i}`).join(",");
/** The issue's `in` list: 20,000 values. */
const IN_LIST = `k in (${Array.from({ length: 20_000 }, (_, i) => `v${i}`).join(",")})`;
const aliases = (n: number) => `query($s: String) { ${Array.from({ length: n }, (_, i) => `a${i}: nodes(filter: { labelSelector: $s }) { totalCount }`).join(" ")} }`;

/** Subscribes over a raw graphql-transport-ws connection and resolves with the first message for it. */
async function subscribeOnce(url: string, query: string, variables: Record<string, unknown>): Promise<any> {
  const outcome = await init(url);
  assert.ok(outcome.acked);
  const socket = outcome.socket;
  try {
    const reply = new Promise<any>((resolve) => socket.on("message", (data) => resolve(JSON.parse(String(data)))));
    socket.send(JSON.stringify({ id: "s", type: "subscribe", payload: { query, variables } }));
    return await reply;
  } finally {
    socket.close();
  }
}

describe("selectors and filters are bounded like the apiserver's, and charged for the nodes they scan", () => {
  let app: App;
  let url: string;
  before(async () => {
    ({ app, url } = await startTestApp({ clusters: { kubeconfigs: [], contexts: [], simulate: 50 } }));
    await ready(url);
  });
  after(() => app.stop());

  test("ten aliases of a 40,000-requirement selector are refused as too costly before anything runs", async () => {
    const answer = graphql(url, aliases(10), { s: NOT_EXISTS }, STRICT);
    await servedMeanwhile(url);
    const response = await answer;
    assert.equal(response.status, 400);
    assert.deepEqual({ code: first(response).code, reason: first(response).reason }, { code: "BAD_USER_INPUT", reason: "QUERY_TOO_COSTLY" });
    // 550 aliases of the 20,000-value list, likewise.
    const many = await graphql(url, aliases(550), { s: IN_LIST }, STRICT);
    assert.deepEqual({ status: many.status, reason: first(many).reason }, { status: 400, reason: "QUERY_TOO_COSTLY" });
    await servedMeanwhile(url);
  });

  test("one selector past the byte, requirement or value bounds is BAD_USER_INPUT with a short message", async () => {
    const query = "query($s: String) { nodes(filter: { labelSelector: $s }) { totalCount } }";
    const cases: [string, string][] = [
      [NOT_EXISTS, `filter.labelSelector: the selector is ${Buffer.byteLength(NOT_EXISTS)} bytes; at most 8192 are allowed`],
      [Array.from({ length: 65 }, (_, i) => `k${i}`).join(","), "filter.labelSelector: more than 64 requirements; at most 64 are allowed at position 246"],
      [
        `k in (${Array.from({ length: 257 }, (_, i) => `${i}`).join(",")})`,
        "filter.labelSelector: unable to parse requirement: more than 256 values in one list; at most 256 are allowed at position 920",
      ],
      [`${"k".repeat(64)}`, `filter.labelSelector: unable to parse requirement: <nil>: Invalid value: "${"k".repeat(64)}": name part must be no more than 63 characters at position 0`],
    ];
    for (const [selector, message] of cases) {
      const response = await graphql(url, query, { s: selector }, STRICT);
      assert.deepEqual({ code: first(response).code, message: first(response).message }, { code: "BAD_USER_INPUT", message }, message);
    }
    // A bad key of 8,000 characters is quoted cut, not whole.
    const longKey = await graphql(url, query, { s: `${"k".repeat(8_000)}=v` }, STRICT);
    assert.equal(first(longKey).code, "BAD_USER_INPUT");
    assert.ok(first(longKey).message.length < 1_000, `message of ${first(longKey).message.length} characters`);
    assert.match(first(longKey).message, /… \(8000 characters\): name part must be no more than 63 characters/);
    // names and roles lists are bounded too.
    const names = await graphql(url, "query($n: [String!]) { nodes(filter: { names: $n }) { totalCount } }", { n: Array.from({ length: 5_001 }, (_, i) => `n${i}`) }, STRICT);
    assert.deepEqual({ code: first(names).code, message: first(names).message }, { code: "BAD_USER_INPUT", message: "filter.names: 5001 entries; at most 5000 are allowed" });
    await servedMeanwhile(url);
  });

  test("a subscription parked on a huge selector is refused at subscribe time, as is one whose events cost too much", async () => {
    const huge = await subscribeOnce(url, "subscription($s: String) { nodeStatusChanged(filter: { labelSelector: $s }) { name } }", { s: NOT_EXISTS });
    // Refused by its resolver's subscribe: a result with the error, then complete.
    assert.equal(huge.type, "next");
    assert.equal(huge.payload.errors[0].extensions.code, "BAD_USER_INPUT");
    assert.match(huge.payload.errors[0].message, /^filter\.labelSelector: the selector is \d+ bytes; at most 8192 are allowed$/);
    const costly = await subscribeOnce(url, "subscription { nodeStatusChanged { node { events(first: 20000) { reason } } } }", {});
    assert.equal(costly.type, "error");
    assert.deepEqual({ code: costly.payload[0].extensions.code, reason: costly.payload[0].extensions.reason }, { code: "BAD_USER_INPUT", reason: "QUERY_TOO_COSTLY" });
    assert.match(costly.payload[0].message, /^Each event of the subscription may resolve \d+ objects; at most 10000 are allowed/);
    await servedMeanwhile(url);
  });

  test("a drain with a 300 KB podSelector is BAD_USER_INPUT, not an apiserver 431, and its message is short", async () => {
    const selector = Array.from({ length: 30_000 }, () => "a=b")
      .join(",")
      .slice(0, 300_000);
    const response = await graphql(url, 'mutation($o: DrainOptions) { drainNode(name: "general-a-0", options: $o) { id } }', { o: { podSelector: selector, dryRun: true } }, STRICT);
    assert.deepEqual(
      { code: first(response).code, message: first(response).message },
      { code: "BAD_USER_INPUT", message: `options.podSelector: the selector is ${Buffer.byteLength(selector)} bytes; at most 8192 are allowed` },
    );
    const badKey = await graphql(url, 'mutation($o: DrainOptions) { drainNode(name: "general-a-0", options: $o) { id } }', { o: { podSelector: `${"k".repeat(7_000)}=v`, dryRun: true } }, STRICT);
    assert.equal(first(badKey).code, "BAD_USER_INPUT");
    assert.ok(first(badKey).message.length < 1_000);
    await servedMeanwhile(url);
  });
});
