import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import WebSocket from "ws";
import type { App } from "../../src/app/create-app.js";
import type { AppProbes } from "../../src/app/app-probes.js";
import { startTestApp, subscribers } from "../support/app.js";
import { eventually } from "../support/sim-cluster.js";
import { bearer, init, TOKENS, tokensFile } from "../auth/support.js";
import { servedMeanwhile } from "./support.js";

const SUBSCRIBE = (id: string) => JSON.stringify({ id, type: "subscribe", payload: { query: "subscription { nodeStatusChanged { unschedulable } }" } });

/** An acknowledged raw graphql-transport-ws connection and the messages it has received. */
async function connection(url: string, token: string): Promise<{ socket: WebSocket; received: any[] }> {
  const outcome = await init(url, { token });
  assert.ok(outcome.acked, "acknowledged");
  const received: any[] = [];
  outcome.socket.on("message", (data) => received.push(JSON.parse(String(data))));
  return { socket: outcome.socket, received };
}

const refusals = (received: any[]) =>
  received.filter((m) => m.type === "error").map((m) => ({ id: m.id, reason: m.payload[0].extensions.reason, code: m.payload[0].extensions.code, message: m.payload[0].message }));

describe("subscriptions and WebSocket connections are bounded per connection and per caller (issue 13, finding 3)", () => {
  describe("with small limits", () => {
    let app: App;
    let url: string;
    let probes: AppProbes;
    const file = tokensFile();
    before(
      async () =>
        ({ app, url, probes } = await startTestApp({ auth: { tokensFile: file.path }, limits: { maxSubscriptionsPerConnection: 5, maxSubscriptionsPerCaller: 8, maxWebSocketsPerCaller: 3 } })),
    );
    after(async () => (await app.stop(), file.remove()));

    test("the sixth subscription on a connection and the ninth of a caller are FORBIDDEN TOO_MANY_SUBSCRIPTIONS; completing one frees its place", async () => {
      const first = await connection(url, TOKENS.viewer);
      const second = await connection(url, TOKENS.viewer);
      try {
        for (let i = 1; i <= 6; i++) first.socket.send(SUBSCRIBE(`a${i}`));
        await eventually(() => refusals(first.received).length === 1, "the sixth refused");
        assert.deepEqual(refusals(first.received), [
          { id: "a6", code: "FORBIDDEN", reason: "TOO_MANY_SUBSCRIPTIONS", message: "Too many subscriptions on this connection: at most 5; complete one first" },
        ]);
        await subscribers(probes, 5);
        for (let i = 1; i <= 4; i++) second.socket.send(SUBSCRIBE(`b${i}`));
        await eventually(() => refusals(second.received).length === 1, "the caller's ninth refused");
        assert.deepEqual(refusals(second.received), [
          { id: "b4", code: "FORBIDDEN", reason: "TOO_MANY_SUBSCRIPTIONS", message: "Too many subscriptions for this caller: at most 8 across its connections; complete one first" },
        ]);
        await subscribers(probes, 8);
        first.socket.send(JSON.stringify({ id: "a1", type: "complete" }));
        await eventually(() => probes.subscriberCount() === 7, "a1 completed");
        second.socket.send(SUBSCRIBE("b5"));
        await subscribers(probes, 8);
        assert.equal(refusals(second.received).length, 1, "b5 took a1's place");
      } finally {
        first.socket.close();
        second.socket.close();
      }
      await eventually(() => probes.subscriberCount() === 0, "closing a connection ends its subscriptions");
    });

    test("a caller's fourth WebSocket connection is closed with 4429; another caller connects and subscribes meanwhile", async () => {
      const held = await Promise.all([1, 2, 3].map(() => init(url, { token: TOKENS.viewer })));
      try {
        assert.ok(held.every((h) => h.acked));
        const fourth = await init(url, { token: TOKENS.viewer });
        assert.deepEqual(fourth, { acked: false, code: 4429, reason: "Too many WebSocket connections for this caller: at most 3" });
        const other = await connection(url, TOKENS.operator);
        other.socket.send(SUBSCRIBE("o1"));
        await subscribers(probes, 1);
        other.socket.close();
        await servedMeanwhile(url, bearer(TOKENS.admin));
      } finally {
        for (const h of held) if (h.acked) h.socket.close();
      }
      // Once closed, the places are free again.
      await eventually(async () => {
        const again = await init(url, { token: TOKENS.viewer });
        if (again.acked) again.socket.close();
        return again.acked;
      }, "a connection once the others closed");
    });
  });

  describe("with the defaults", () => {
    let app: App;
    let url: string;
    let probes: AppProbes;
    const file = tokensFile();
    before(async () => ({ app, url, probes } = await startTestApp({ auth: { tokensFile: file.path } })));
    after(async () => (await app.stop(), file.remove()));

    test("20,000 subscribe frames on one viewer connection hold at most 100 subscriptions; the rest are refused at once and others are served", async () => {
      const attacker = await connection(url, TOKENS.viewer);
      try {
        for (let i = 0; i < 20_000; i++) attacker.socket.send(SUBSCRIBE(`s${i}`));
        await servedMeanwhile(url, bearer(TOKENS.admin));
        // Each frame is answered: refused for the operations the caller already has running
        // (TOO_MANY_IN_FLIGHT, before any parsing) or for the subscriptions it holds.
        await eventually(() => refusals(attacker.received).length + probes.subscriberCount() === 20_000, "every frame answered", 60_000);
        assert.ok(probes.subscriberCount() <= 100, `what the connection holds is bounded (${probes.subscriberCount()})`);
        const reasons = new Set(refusals(attacker.received).map((r) => r.reason));
        assert.ok(
          [...reasons].every((r) => r === "TOO_MANY_IN_FLIGHT" || r === "TOO_MANY_SUBSCRIPTIONS"),
          [...reasons].join(),
        );
        await servedMeanwhile(url, bearer(TOKENS.admin));
      } finally {
        attacker.socket.close();
      }
    });
  });
});
