import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { makeExecutableSchema } from "@graphql-tools/schema";
import { parse, type ExecutionResult } from "graphql";
import { sharedEventSubscribe, type ResultsStream } from "../../src/graphql/shared-event-execution.js";
import { BoundedQueue } from "../../src/subscriptions/bounded-queue.js";

/** A schema whose subscription streams one queue per subscriber from `publish`, counting how often `label` is resolved. */
function world() {
  const listeners = new Set<(event: { name: string }) => void>();
  const counts = { label: 0, closed: 0 };
  const schema = makeExecutableSchema({
    typeDefs: "type Query { ok: Boolean } type Event { name: String! label: String! } type Subscription { changed(name: String): Event! }",
    resolvers: {
      Event: { label: (event: { name: string }, _args: unknown, context: { caller: string }) => (counts.label++, `${event.name} for ${context.caller}`) },
      Subscription: {
        changed: {
          subscribe: (_root: unknown, args: { name?: string }) => {
            if (args.name === "") throw new Error("name must not be empty");
            const queue = new BoundedQueue<{ name: string }>(
              10,
              () => {},
              () => (listeners.delete(listener), counts.closed++),
            );
            const listener = (event: { name: string }) => queue.push(event);
            listeners.add(listener);
            return queue;
          },
          resolve: (event: unknown) => event,
        },
      },
    },
  });
  const publish = (event: { name: string }) => listeners.forEach((listener) => listener(event));
  return { schema, publish, counts };
}

const DOCUMENT = "subscription { changed { name label } }";

describe("an event shared by subscriptions", () => {
  test("is executed once for subscriptions with one key, and each gets the result", async () => {
    const { schema, publish, counts } = world();
    const subscribe = sharedEventSubscribe((args) => (args.contextValue as { key: string }).key);
    const streams = (await Promise.all(
      ["alice", "alice", "bob"].map((caller) => subscribe({ schema, document: parse(DOCUMENT), contextValue: { caller, key: caller } })),
    )) as AsyncGenerator<ExecutionResult>[];
    publish({ name: "n1" });
    const results = await Promise.all(streams.map((stream) => stream.next()));
    // As serialised for the wire (graphql's result objects have null prototypes).
    assert.deepEqual(JSON.parse(JSON.stringify(results.map((r) => r.value))), [
      { data: { changed: { name: "n1", label: "n1 for alice" } } },
      { data: { changed: { name: "n1", label: "n1 for alice" } } },
      { data: { changed: { name: "n1", label: "n1 for bob" } } },
    ]);
    assert.equal(counts.label, 2, "once for alice's two subscriptions, once for bob's");
    await Promise.all(streams.map((stream) => stream.return(undefined)));
    assert.equal(counts.closed, 3, "each subscription's source ends with it");
  });

  test("without a key, each subscription executes the event itself", async () => {
    const { schema, publish, counts } = world();
    const subscribe = sharedEventSubscribe(() => undefined);
    const streams = (await Promise.all([1, 2].map(() => subscribe({ schema, document: parse(DOCUMENT), contextValue: { caller: "alice" } })))) as AsyncGenerator<ExecutionResult>[];
    publish({ name: "n1" });
    await Promise.all(streams.map((stream) => stream.next()));
    assert.equal(counts.label, 2);
  });

  test("reaching an idle subscription, it goes to the transport's deliverNow; refused there, through the iterator, in order", async () => {
    const { schema, publish, counts } = world();
    const subscribe = sharedEventSubscribe(() => "same");
    const stream = (await subscribe({ schema, document: parse(DOCUMENT), contextValue: { caller: "alice" } })) as ResultsStream;
    const delivered: string[] = [];
    let accept = true;
    stream.deliverNow = (result) => accept && (delivered.push(JSON.stringify(result)), true);
    const waiting = stream.next();
    publish({ name: "n1" });
    publish({ name: "n2" });
    assert.deepEqual(delivered, ['{"data":{"changed":{"name":"n1","label":"n1 for alice"}}}', '{"data":{"changed":{"name":"n2","label":"n2 for alice"}}}']);
    accept = false;
    publish({ name: "n3" });
    publish({ name: "n4" });
    assert.deepEqual(JSON.parse(JSON.stringify((await waiting).value)), { data: { changed: { name: "n3", label: "n3 for alice" } } });
    // n4 came while the consumer was busy with n3: queued, not offered, so it cannot overtake n3.
    accept = true;
    assert.deepEqual(JSON.parse(JSON.stringify((await stream.next()).value)), { data: { changed: { name: "n4", label: "n4 for alice" } } });
    assert.equal(delivered.length, 2);
    assert.equal(counts.label, 4, "each event executed once, offered or not");
    await stream.return(undefined);
    assert.equal(counts.closed, 1);
  });

  test("a subscription refused at subscribe time gets its errors, not a stream", async () => {
    const { schema } = world();
    const subscribe = sharedEventSubscribe(() => "same");
    const result = (await subscribe({ schema, document: parse('subscription { changed(name: "") { name } }'), contextValue: { caller: "alice" } })) as ExecutionResult;
    assert.deepEqual(
      result.errors?.map((e) => e.message),
      ["name must not be empty"],
    );
  });
});
