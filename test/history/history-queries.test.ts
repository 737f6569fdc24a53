import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Database } from "../../src/db/database.js";
import { AppError } from "../../src/graphql/errors.js";
import type { MaintenanceEventFilter, TransitionFilter } from "../../src/graphql/generated/resolvers-types.js";
import type { HistoryPage } from "../../src/history/history-connection.js";
import { HistoryQueries, type ConditionTransitionView, type MaintenanceEventView } from "../../src/history/history-queries.js";

type ConditionTransitionConnection = HistoryPage<ConditionTransitionView>;
type MaintenanceEventConnection = HistoryPage<MaintenanceEventView>;
import { BACKENDS } from "../support/databases.js";
import { at, countingDatabase, migratedDatabase, seed, type StatementCounts } from "./history-fixtures.js";

const messages = (page: ConditionTransitionConnection) => page.edges.map((e) => e.node.message);
const details = (page: MaintenanceEventConnection) => page.edges.map((e) => e.node.detail);

/** Rejects with AppError of `code` whose message is exactly `message`. */
async function rejectsWith(promise: Promise<unknown>, code: string, message: string | RegExp) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof AppError, `expected AppError, got ${String(error)}`);
    assert.equal(error.extensions.code, code);
    if (typeof message === "string") assert.equal(error.message, message);
    else assert.match(error.message, message);
    return true;
  });
}

for (const backend of BACKENDS) {
  describe(`history queries on ${backend.name}`, () => {
    let db: Database;
    let dispose: () => Promise<void>;
    let queries: HistoryQueries;
    let counts: StatementCounts;

    before(async () => {
      ({ db, dispose } = await migratedDatabase(backend));
      await seed(db);
      const counting = countingDatabase(db);
      counts = counting.counts;
      queries = new HistoryQueries(counting.database);
    });
    after(() => dispose());

    test("conditionTransitions are newest first, a shared `at` ordered by the later record first", async () => {
      const page = await queries.conditionTransitions(null, { first: null, after: null });
      assert.deepEqual(messages(page), ["t8", "t7", "t6", "t5", "t4", "t3", "t2", "t1"]);
      assert.equal(page.pageInfo.hasNextPage, false);
      assert.equal(page.pageInfo.endCursor, page.edges[7]!.cursor);
    });

    test("a transition is served in the API's shape", async () => {
      const page = await queries.conditionTransitions({ cluster: "prod", node: "n1", type: "Ready" }, { first: 3, after: null });
      const ids = page.edges.map((e) => e.node.id);
      for (const id of ids) assert.match(Buffer.from(id, "base64url").toString(), /^ConditionTransition:[0-9]+$/);
      assert.deepEqual(
        page.edges.map((e) => e.node),
        [
          // A reconciled transition says when it was found.
          { id: ids[0], cluster: "prod", node: "n1", type: "Ready", from: "FALSE", to: "TRUE", reason: "KubeletReady", message: "t6", at: at(40), reconciled: true, recordedAt: at(45) },
          { id: ids[1], cluster: "prod", node: "n1", type: "Ready", from: "TRUE", to: "FALSE", reason: "KubeletNotReady", message: "t2", at: at(10), reconciled: false, recordedAt: at(10) },
          { id: ids[2], cluster: "prod", node: "n1", type: "Ready", from: null, to: "TRUE", reason: "KubeletReady", message: "t1", at: at(0), reconciled: false, recordedAt: at(0) },
        ],
      );
    });

    const transitionFilters: [string, TransitionFilter, string[]][] = [
      ["cluster", { cluster: "dev" }, ["t5"]],
      ["node across clusters", { node: "n1" }, ["t7", "t6", "t5", "t2", "t1"]],
      ["cluster and node", { cluster: "prod", node: "n2" }, ["t8", "t4", "t3"]],
      ["type", { type: "Ready" }, ["t8", "t6", "t5", "t3", "t2", "t1"]],
      ["to TRUE", { to: "TRUE" }, ["t6", "t3", "t1"]],
      ["to FALSE", { to: "FALSE" }, ["t7", "t4", "t2"]],
      ["to UNKNOWN", { to: "UNKNOWN" }, ["t8", "t5"]],
      ["since is inclusive", { since: at(20) }, ["t8", "t7", "t6", "t5", "t4", "t3"]],
      ["until is exclusive", { until: at(20) }, ["t2", "t1"]],
      ["[since, until)", { since: at(10), until: at(40) }, ["t5", "t4", "t3", "t2"]],
      ["everything at once", { cluster: "prod", node: "n1", type: "Ready", to: "TRUE", since: at(1), until: at(41) }, ["t6"]],
      ["an unknown cluster", { cluster: "nowhere" }, []],
    ];
    for (const [name, filter, expected] of transitionFilters) {
      test(`conditionTransitions filtered by ${name}`, async () => {
        assert.deepEqual(messages(await queries.conditionTransitions(filter, { first: null, after: null })), expected);
      });
    }

    test("conditionTransitions cursors walk every row exactly once", async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      const pages: boolean[] = [];
      for (;;) {
        const page: ConditionTransitionConnection = await queries.conditionTransitions(null, { first: 3, after: cursor });
        seen.push(...messages(page).map(String));
        pages.push(page.pageInfo.hasNextPage);
        if (!page.pageInfo.hasNextPage) break;
        cursor = page.pageInfo.endCursor;
      }
      assert.deepEqual(seen, ["t8", "t7", "t6", "t5", "t4", "t3", "t2", "t1"]);
      assert.deepEqual(pages, [true, true, false]);
    });

    test("a cursor splitting rows that share `at` continues with the earlier id", async () => {
      const first = await queries.conditionTransitions(null, { first: 5, after: null });
      assert.deepEqual(messages(first), ["t8", "t7", "t6", "t5", "t4"]);
      const next = await queries.conditionTransitions(null, { first: 5, after: first.pageInfo.endCursor });
      assert.deepEqual(messages(next), ["t3", "t2", "t1"]);
    });

    test("cursors combine with filters", async () => {
      const first = await queries.conditionTransitions({ type: "Ready" }, { first: 2, after: null });
      assert.deepEqual(messages(first), ["t8", "t6"]);
      const next = await queries.conditionTransitions({ type: "Ready" }, { first: 2, after: first.pageInfo.endCursor });
      assert.deepEqual(messages(next), ["t5", "t3"]);
    });

    test("first: 0 returns no edges and says whether there are any", async () => {
      const page = await queries.conditionTransitions(null, { first: 0, after: null });
      const empty = { hasPreviousPage: false, startCursor: null, endCursor: null };
      assert.deepEqual({ ...page, totalCount: await page.totalCount() }, { edges: [], pageInfo: { hasNextPage: true, ...empty }, totalCount: 8 });
      const none = await queries.conditionTransitions({ cluster: "nowhere" }, { first: 0, after: null });
      assert.deepEqual({ ...none, totalCount: await none.totalCount() }, { edges: [], pageInfo: { hasNextPage: false, ...empty }, totalCount: 0 });
    });

    test("paging back with last and before walks every row once, oldest page first", async () => {
      const seen: string[] = [];
      const flags: [boolean, boolean][] = [];
      let before: string | null = null;
      for (;;) {
        const page: ConditionTransitionConnection = await queries.conditionTransitions(null, { last: 3, before });
        seen.unshift(...messages(page).map(String));
        flags.push([page.pageInfo.hasPreviousPage, page.pageInfo.hasNextPage]);
        if (!page.pageInfo.hasPreviousPage) break;
        before = page.pageInfo.startCursor;
      }
      assert.deepEqual(seen, ["t8", "t7", "t6", "t5", "t4", "t3", "t2", "t1"]);
      assert.deepEqual(flags, [[true, false], [true, true], [false, true]]);
    });

    test("a forward page knows there is one before it; a page back from its start is that page", async () => {
      const first = await queries.conditionTransitions(null, { first: 3 });
      const second = await queries.conditionTransitions(null, { first: 3, after: first.pageInfo.endCursor });
      assert.deepEqual(messages(second), ["t5", "t4", "t3"]);
      assert.deepEqual([second.pageInfo.hasPreviousPage, second.pageInfo.hasNextPage], [true, true]);
      assert.equal(second.pageInfo.startCursor, second.edges[0]!.cursor);
      const back = await queries.conditionTransitions(null, { last: 3, before: second.pageInfo.startCursor });
      assert.deepEqual(back.edges, first.edges);
      assert.deepEqual([back.pageInfo.hasPreviousPage, back.pageInfo.hasNextPage], [false, true]);
      const between = await queries.conditionTransitions(null, { after: first.edges[0]!.cursor, before: second.edges[2]!.cursor });
      assert.deepEqual(messages(between), ["t7", "t6", "t5", "t4"]);
      assert.equal(await between.totalCount(), 8);
    });

    test("ids are unique across types: a transition and an event with the same row id differ", async () => {
      const transitions = (await queries.conditionTransitions(null, {})).edges.map((e) => e.node.id);
      const events = (await queries.maintenanceEvents(null, {})).edges.map((e) => e.node.id);
      const rowIds = (ids: string[]) => ids.map((id) => Buffer.from(id, "base64url").toString().split(":")[1]);
      assert.ok(rowIds(transitions).some((row) => rowIds(events).includes(row)), "the fixtures share a row id");
      assert.equal(new Set([...transitions, ...events]).size, transitions.length + events.length);
    });

    test("first and last together are BAD_USER_INPUT", async () => {
      await rejectsWith(queries.conditionTransitions(null, { first: 1, last: 1 }), "BAD_USER_INPUT", "first and last: give one of them, not both");
      await rejectsWith(queries.maintenanceEvents(null, { last: 1, before: "nope!" }), "BAD_USER_INPUT", "before: not a cursor of this list");
    });

    test("a transition recorded between two pages does not shift the next page", async () => {
      const filter = { cluster: "scratch" };
      for (const [i, minutes] of [100, 90, 80, 70].entries()) {
        await db.prisma.conditionTransition.create({
          data: { cluster: "scratch", node: "s1", type: "Ready", to: i % 2 ? "True" : "False", message: `s${minutes}`, at: at(minutes) },
        });
      }
      const first = await queries.conditionTransitions(filter, { first: 2, after: null });
      assert.deepEqual(messages(first), ["s100", "s90"]);
      // Newer than everything (would push a page with offsets along) and one between the pages.
      await db.prisma.conditionTransition.create({ data: { cluster: "scratch", node: "s1", type: "Ready", to: "True", message: "s200", at: at(200) } });
      await db.prisma.conditionTransition.create({ data: { cluster: "scratch", node: "s2", type: "Ready", to: "True", message: "s85", at: at(85) } });
      const next = await queries.conditionTransitions(filter, { first: 2, after: first.pageInfo.endCursor });
      assert.deepEqual(messages(next), ["s85", "s80"]);
      const last = await queries.conditionTransitions(filter, { first: 2, after: next.pageInfo.endCursor });
      assert.deepEqual(messages(last), ["s70"]);
      assert.equal(last.pageInfo.hasNextPage, false);
    });

    test("maintenanceEvents are newest first and served in the API's shape", async () => {
      const page = await queries.maintenanceEvents(null, { first: null, after: null });
      assert.deepEqual(details(page), ["e6", "e5", "e4", "e3", "e2", "e1"]);
      const e3 = page.edges[3]!.node;
      assert.match(Buffer.from(e3.id, "base64url").toString(), /^MaintenanceEvent:[0-9]+$/);
      assert.deepEqual(e3, {
        id: e3.id,
        cluster: "prod",
        node: "n1",
        kind: "POD_EVICTED",
        actor: "alice",
        reason: null,
        at: at(5),
        operationId: "6f1c1d4e-2a3b-4c5d-8e9f-0a1b2c3d4e5f",
        pod: "default/web-1",
        detail: "e3",
      });
    });

    const eventFilters: [string, MaintenanceEventFilter, string[]][] = [
      ["cluster", { cluster: "dev" }, ["e5"]],
      ["node", { cluster: "prod", node: "n1" }, ["e6", "e3", "e2", "e1"]],
      ["one kind", { kinds: ["CORDONED"] }, ["e4", "e1"]],
      ["several kinds", { kinds: ["UNCORDONED", "DRAIN_STARTED", "DRAIN_SUCCEEDED"] }, ["e6", "e5", "e2"]],
      ["no kinds at all", { kinds: [] }, []],
      ["[since, until)", { since: at(5), until: at(9) }, ["e4", "e3", "e2"]],
      ["everything at once", { cluster: "prod", node: "n1", kinds: ["POD_EVICTED", "CORDONED"], since: at(0), until: at(6) }, ["e3", "e1"]],
    ];
    for (const [name, filter, expected] of eventFilters) {
      test(`maintenanceEvents filtered by ${name}`, async () => {
        assert.deepEqual(details(await queries.maintenanceEvents(filter, { first: null, after: null })), expected);
      });
    }

    test("maintenanceEvents cursors walk every row exactly once", async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (;;) {
        const page: MaintenanceEventConnection = await queries.maintenanceEvents(null, { first: 4, after: cursor });
        seen.push(...details(page).map(String));
        if (!page.pageInfo.hasNextPage) break;
        cursor = page.pageInfo.endCursor;
      }
      assert.deepEqual(seen, ["e6", "e5", "e4", "e3", "e2", "e1"]);
    });

    test("bad arguments are BAD_USER_INPUT naming the argument, before any query", async () => {
      counts.reset();
      const transitionsCursor = (await queries.conditionTransitions(null, { first: 1, after: null })).pageInfo.endCursor!;
      const eventsCursor = (await queries.maintenanceEvents(null, { first: 1, after: null })).pageInfo.endCursor!;
      counts.reset();
      const notACursor = "after: not a cursor of this list";
      await rejectsWith(queries.conditionTransitions(null, { first: null, after: "garbage!" }), "BAD_USER_INPUT", notACursor);
      await rejectsWith(queries.conditionTransitions(null, { first: null, after: Buffer.from("{}").toString("base64url") }), "BAD_USER_INPUT", notACursor);
      await rejectsWith(
        queries.conditionTransitions(null, { first: null, after: Buffer.from('{"l":"transitions","a":1,"i":"1; DROP TABLE x"}').toString("base64url") }),
        "BAD_USER_INPUT",
        notACursor,
      );
      await rejectsWith(queries.conditionTransitions(null, { first: null, after: eventsCursor }), "BAD_USER_INPUT", notACursor);
      await rejectsWith(queries.maintenanceEvents(null, { first: null, after: transitionsCursor }), "BAD_USER_INPUT", notACursor);
      await rejectsWith(queries.conditionTransitions(null, { first: -1, after: null }), "BAD_USER_INPUT", "first: must be zero or more, got -1");
      await rejectsWith(queries.maintenanceEvents(null, { first: 5001, after: null }), "BAD_USER_INPUT", "first: must be at most 5000, got 5001");
      await rejectsWith(
        queries.conditionTransitions({ since: at(10), until: at(10) }, { first: null, after: null }),
        "BAD_USER_INPUT",
        "filter.since must be before filter.until",
      );
      await rejectsWith(
        queries.maintenanceEvents({ since: at(11), until: at(10) }, { first: null, after: null }),
        "BAD_USER_INPUT",
        "filter.since must be before filter.until",
      );
      await rejectsWith(queries.transitionsForNodes([{ cluster: "prod", node: "n1", first: 501 }]), "BAD_USER_INPUT", "first: must be at most 500, got 501");
      assert.equal(counts.total(), 0);
    });

    test("transitionsForNodes answers each key in key order, with its own `first`, in one statement", async () => {
      counts.reset();
      const result = await queries.transitionsForNodes([
        { cluster: "prod", node: "n2", first: 2 },
        { cluster: "nowhere", node: "n1", first: 2 },
        { cluster: "prod", node: "n1", first: 2 },
        { cluster: "dev", node: "n1", first: 2 },
        { cluster: "prod", node: "n2", first: 2 },
      ]);
      assert.deepEqual(
        result.map((list) => list.map((t) => t.message)),
        [["t8", "t4"], [], ["t7", "t6"], ["t5"], ["t8", "t4"]],
      );
      assert.equal(counts.raw, 1);
      assert.deepEqual(result[2]![1], {
        id: result[2]![1]!.id,
        cluster: "prod",
        node: "n1",
        type: "Ready",
        from: "FALSE",
        to: "TRUE",
        reason: "KubeletReady",
        message: "t6",
        at: at(40),
        reconciled: true,
        recordedAt: at(45),
      });
    });

    test("transitionsForNodes filters by type and since, one statement per distinct argument set", async () => {
      counts.reset();
      const result = await queries.transitionsForNodes([
        { cluster: "prod", node: "n1", type: "Ready", first: 20 },
        { cluster: "prod", node: "n2", type: "Ready", first: 20 },
        { cluster: "prod", node: "n1", since: at(40), first: 20 },
        { cluster: "prod", node: "n1", type: "Ready", since: at(10), first: 20 },
        { cluster: "prod", node: "n2", type: "Ready", first: 1 },
        { cluster: "prod", node: "n2", type: "Ready", first: 0 },
      ]);
      assert.deepEqual(
        result.map((list) => list.map((t) => t.message)),
        [["t6", "t2", "t1"], ["t8", "t3"], ["t7", "t6"], ["t6", "t2"], ["t8"], []],
      );
      // (Ready, -, 20), (-, 40, 20), (Ready, 10, 20), (Ready, -, 1); first 0 needs no query.
      assert.equal(counts.raw, 4);
    });

    test("eventsForNodes answers each key in key order in one statement per `first`", async () => {
      counts.reset();
      const result = await queries.eventsForNodes([
        { cluster: "prod", node: "n1", first: 3 },
        { cluster: "prod", node: "n2", first: 3 },
        { cluster: "prod", node: "n9", first: 3 },
        { cluster: "dev", node: "n1", first: 3 },
        { cluster: "prod", node: "n1", first: 1 },
      ]);
      assert.deepEqual(
        result.map((list) => list.map((e) => e.detail)),
        [["e6", "e3", "e2"], ["e4"], [], ["e5"], ["e6"]],
      );
      assert.equal(counts.raw, 2);
      const e3 = result[0]![1]!;
      assert.deepEqual(e3, {
        id: e3.id,
        cluster: "prod",
        node: "n1",
        kind: "POD_EVICTED",
        actor: "alice",
        reason: null,
        at: at(5),
        operationId: "6f1c1d4e-2a3b-4c5d-8e9f-0a1b2c3d4e5f",
        pod: "default/web-1",
        detail: "e3",
      });
      // Same id as the connection serves, so a client can match the two.
      const connection = await queries.maintenanceEvents({ kinds: ["POD_EVICTED"] }, { first: 1, after: null });
      assert.equal(connection.edges[0]!.node.id, e3.id);
    });

    test("a database that cannot be reached is UNAVAILABLE, with no SQL or connection detail", async () => {
      const broken = await migratedDatabase(backend);
      const brokenQueries = new HistoryQueries(broken.db);
      await broken.db.close();
      const unavailable = "the history database cannot be reached";
      try {
        await rejectsWith(brokenQueries.conditionTransitions(null, { first: null, after: null }), "UNAVAILABLE", unavailable);
        await rejectsWith(brokenQueries.maintenanceEvents({ kinds: ["CORDONED"] }, { first: null, after: null }), "UNAVAILABLE", unavailable);
        await rejectsWith(brokenQueries.transitionsForNodes([{ cluster: "prod", node: "n1", first: 5 }]), "UNAVAILABLE", unavailable);
        await rejectsWith(brokenQueries.eventsForNodes([{ cluster: "prod", node: "n1", first: 5 }]), "UNAVAILABLE", unavailable);
      } finally {
        await broken.dispose();
      }
    });
  });
}
