import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { CachedNode, NodeUsageSample } from "../../src/cluster/model.js";
import { AppError } from "../../src/graphql/errors.js";
import type { NodeOrderBy } from "../../src/graphql/generated/resolvers-types.js";
import { nodeKeyOf, paginateNodes, resolveNodeOrder, sortNodes, type NodeOrderMetrics } from "../../src/inventory/node-order.js";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../../src/graphql/page-size.js";
import { decodeCursor, encodeCursor, paginate, type Page } from "../../src/inventory/pagination.js";
import { cachedNode } from "../support/cached-objects.js";

function node(cluster: string, name: string): CachedNode {
  return cachedNode(name, { cluster, uid: `${cluster}/${name}` });
}

const pad = (i: number) => String(i).padStart(4, "0");
// 5,000 nodes over two clusters; cpu usage repeats every 37 values (many ties) and one node in
// ten has no sample; pod counts repeat every 13.
function fleet(count = 5000): CachedNode[] {
  const nodes: CachedNode[] = [];
  for (let i = 0; i < count; i++) nodes.push(node(i % 2 ? "east" : "west", `node-${pad(i)}`));
  return nodes;
}
const indexOf = (n: CachedNode) => Number(n.name.slice(5));
const metrics: NodeOrderMetrics = {
  usage(n): NodeUsageSample | undefined {
    const i = indexOf(n);
    return i % 10 === 3 ? undefined : { cpuMillicores: (i * 7) % 37, memoryBytes: i * 1024, timestamp: "2026-01-01T00:00:00Z" };
  },
  podCount: (n) => indexOf(n) % 13,
};

function walk(nodes: CachedNode[], orderBy: NodeOrderBy | undefined, pageSize: number): { seen: CachedNode[]; pages: number } {
  const sorted = sortNodes(nodes, orderBy, metrics);
  const seen: CachedNode[] = [];
  let after: string | null = null;
  let pages = 0;
  for (;;) {
    const page: Page<CachedNode> = paginateNodes(sorted, orderBy, metrics, { first: pageSize, after: after });
    pages++;
    assert.equal(page.totalCount, nodes.length);
    seen.push(...page.edges.map((e) => e.node));
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor;
    assert.ok(after);
    assert.ok(pages < 100, "paging does not end");
  }
  return { seen, pages };
}

function assertBadInput(fn: () => unknown, message: string | RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof AppError, String(err));
    assert.equal(err.extensions.code, "BAD_USER_INPUT");
    if (typeof message === "string") assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  });
}

describe("paging through 5,000 nodes in pages of 700", () => {
  const nodes = fleet();
  const orders: (NodeOrderBy | undefined)[] = [
    undefined,
    { field: "NAME", direction: "DESC" },
    { field: "CREATED_AT" },
    { field: "CPU_USAGE" },
    { field: "CPU_USAGE", direction: "DESC" },
    { field: "MEMORY_USAGE", direction: "DESC" },
    { field: "POD_COUNT" },
    { field: "POD_COUNT", direction: "DESC" },
  ];
  for (const orderBy of orders) {
    test(`${orderBy ? `${orderBy.field} ${orderBy.direction ?? "ASC"}` : "default order"}: every node exactly once, in order, in 8 pages`, () => {
      const { seen, pages } = walk(nodes, orderBy, 700);
      assert.equal(pages, 8);
      assert.equal(seen.length, 5000);
      assert.equal(new Set(seen).size, 5000);
      assert.deepEqual(seen, sortNodes(nodes, orderBy, metrics));
    });
  }

  test("the last page holds the remaining 100 and has no next page", () => {
    const sorted = sortNodes(nodes, undefined, metrics);
    const keyOf = nodeKeyOf(undefined, metrics);
    const order = resolveNodeOrder(undefined);
    const cursorAt = (i: number) => encodeCursor(order, keyOf(sorted[i]!));
    const last = paginate(sorted, keyOf, { first: 700, after: cursorAt(4899) }, order);
    assert.equal(last.edges.length, 100);
    assert.deepEqual(last.pageInfo, { hasNextPage: false, hasPreviousPage: true, startCursor: last.edges[0]!.cursor, endCursor: last.edges[99]!.cursor });
    const beyond = paginate(sorted, keyOf, { first: 700, after: last.pageInfo.endCursor }, order);
    assert.deepEqual(beyond, { edges: [], pageInfo: { hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null }, totalCount: 5000 });
  });

  test("one page of all 5,000 is allowed", () => {
    const page = paginateNodes(sortNodes(nodes, undefined, metrics), undefined, metrics, { first: MAX_PAGE_SIZE, after: null });
    assert.equal(page.edges.length, 5000);
    assert.equal(page.pageInfo.hasNextPage, false);
  });
});

describe("cursors are stable while nodes come and go", () => {
  const orderBy: NodeOrderBy = { field: "NAME" };

  test("a node inserted mid-paging: after the cursor it appears, before it it does not, nothing repeats", () => {
    let nodes = fleet(2000);
    const first = paginateNodes(sortNodes(nodes, orderBy, metrics), orderBy, metrics, { first: 700, after: null });
    const seen = new Set(first.edges.map((e) => e.node.name));
    assert.equal(first.edges.at(-1)!.node.name, "node-0699");

    // Between pages: one node lands before the cursor, one after; one unseen node goes away.
    nodes = [...nodes.filter((n) => n.name !== "node-0800"), node("east", "node-0000a"), node("west", "node-0999a")];
    const second = paginateNodes(sortNodes(nodes, orderBy, metrics), orderBy, metrics, { first: 700, after: first.pageInfo.endCursor });
    const names = second.edges.map((e) => e.node.name);
    assert.equal(names[0], "node-0700");
    assert.ok(!names.includes("node-0000a"), "inserted before the cursor: not on later pages");
    assert.ok(names.includes("node-0999a"), "inserted after the cursor: seen");
    assert.ok(!names.includes("node-0800"), "removed: gone");
    assert.equal(second.totalCount, 2001);
    for (const name of names) assert.ok(!seen.has(name), `${name} repeated`);
    // 0700..1399 is 700 names; without 0800 and with 0999a it is still 700, ending at 1399.
    assert.equal(names.at(-1), "node-1399");
  });

  test("same-named nodes of two clusters: the cursor splits between them", () => {
    const nodes = [node("west", "n1"), node("east", "n1"), node("east", "n0"), node("west", "n2")];
    const sorted = sortNodes(nodes, orderBy, metrics);
    const page1 = paginateNodes(sorted, orderBy, metrics, { first: 2, after: null });
    assert.deepEqual(
      page1.edges.map((e) => `${e.node.cluster}/${e.node.name}`),
      ["east/n0", "east/n1"],
    );
    const page2 = paginateNodes(sorted, orderBy, metrics, { first: 2, after: page1.pageInfo.endCursor });
    assert.deepEqual(
      page2.edges.map((e) => `${e.node.cluster}/${e.node.name}`),
      ["west/n1", "west/n2"],
    );
  });

  test("the node a cursor points at may itself be deleted: the next page starts right after where it was", () => {
    const nodes = fleet(100);
    const page1 = paginateNodes(sortNodes(nodes, orderBy, metrics), orderBy, metrics, { first: 10, after: null });
    const lastSeen = page1.edges.at(-1)!.node;
    const without = nodes.filter((n) => n !== lastSeen);
    const sorted = sortNodes(without, orderBy, metrics);
    const page2 = paginateNodes(sorted, orderBy, metrics, { first: 10, after: page1.pageInfo.endCursor });
    const expectedStart = sortNodes(nodes, orderBy, metrics).indexOf(lastSeen) + 1;
    assert.deepEqual(
      page2.edges.map((e) => e.node),
      sortNodes(nodes, orderBy, metrics).slice(expectedStart, expectedStart + 10),
    );
  });

  test("ordered by usage, the next page holds exactly the keys after the cursor", () => {
    const nodes = fleet(50);
    const cpu: NodeOrderBy = { field: "CPU_USAGE" };
    const sorted = sortNodes(nodes, cpu, metrics);
    const page1 = paginateNodes(sorted, cpu, metrics, { first: 20, after: null });
    const key = decodeCursor(page1.pageInfo.endCursor!, resolveNodeOrder(cpu));
    const page2 = paginateNodes(sorted, cpu, metrics, { first: 100, after: page1.pageInfo.endCursor });
    const keyOf = nodeKeyOf(cpu, metrics);
    for (const e of page2.edges) {
      const k = keyOf(e.node);
      // strictly after: a larger value, or the same value and a later cluster/name, or no sample
      assert.ok(k[0] === null || (k[0] as number) > (key[0] as number) || (k[0] === key[0] && `${k[1]}/${k[2]}` > `${key[1]}/${key[2]}`));
    }
    assert.equal(page1.edges.length + page2.edges.length, 50);
  });

  test("paging across the nodes without a sample (null keys, last in both directions)", () => {
    for (const direction of ["ASC", "DESC"] as const) {
      const orderBy: NodeOrderBy = { field: "MEMORY_USAGE", direction };
      const nodes = fleet(40);
      const { seen } = walk(nodes, orderBy, 3);
      assert.deepEqual(seen, sortNodes(nodes, orderBy, metrics));
      assert.ok(seen.slice(-4).every((n) => metrics.usage(n) === undefined));
    }
  });
});

describe("paging backwards with last and before, as Relay clients do", () => {
  const nodes = fleet(50);
  for (const orderBy of [undefined, { field: "CPU_USAGE", direction: "DESC" }] as (NodeOrderBy | undefined)[]) {
    test(`${orderBy ? "CPU_USAGE DESC" : "default order"}: from the end to the start, every node once, in order`, () => {
      const sorted = sortNodes(nodes, orderBy, metrics);
      const seen: CachedNode[] = [];
      let before: string | null = null;
      for (let pages = 0; ; pages++) {
        const page: Page<CachedNode> = paginateNodes(sorted, orderBy, metrics, { last: 7, before });
        seen.unshift(...page.edges.map((e) => e.node));
        assert.equal(page.pageInfo.hasNextPage, before !== null);
        if (!page.pageInfo.hasPreviousPage) break;
        before = page.pageInfo.startCursor;
        assert.ok(pages < 20, "paging does not end");
      }
      assert.deepEqual(seen, sorted);
    });
  }

  test("a page back from a forward page's start cursor is the page before it", () => {
    const sorted = sortNodes(nodes, undefined, metrics);
    const second = paginateNodes(sorted, undefined, metrics, { first: 10, after: paginateNodes(sorted, undefined, metrics, { first: 10 }).pageInfo.endCursor });
    assert.deepEqual(
      second.edges.map((e) => e.node),
      sorted.slice(10, 20),
    );
    assert.equal(second.pageInfo.hasPreviousPage, true);
    const back = paginateNodes(sorted, undefined, metrics, { last: 10, before: second.pageInfo.startCursor });
    assert.deepEqual(
      back.edges.map((e) => e.node),
      sorted.slice(0, 10),
    );
    assert.deepEqual([back.pageInfo.hasPreviousPage, back.pageInfo.hasNextPage], [false, true]);
  });

  test("after and before together: the nodes between them", () => {
    const sorted = sortNodes(nodes, undefined, metrics);
    const cursors = paginateNodes(sorted, undefined, metrics, { first: 50 }).edges.map((e) => e.cursor);
    const between = paginateNodes(sorted, undefined, metrics, { first: 100, after: cursors[4], before: cursors[9] });
    assert.deepEqual(
      between.edges.map((e) => e.node),
      sorted.slice(5, 9),
    );
    assert.deepEqual(
      paginateNodes(sorted, undefined, metrics, { last: 2, after: cursors[4], before: cursors[9] }).edges.map((e) => e.node),
      sorted.slice(7, 9),
    );
  });

  test("first and last together are BAD_USER_INPUT", () => {
    assertBadInput(() => paginateNodes(nodes, undefined, metrics, { first: 1, last: 1 }), "first and last: give one of them, not both");
  });

  test("a bad before or last names its argument", () => {
    assertBadInput(() => paginateNodes(nodes, undefined, metrics, { last: 1, before: "!!" }), "before: not a cursor of this ordering");
    assertBadInput(() => paginateNodes(nodes, undefined, metrics, { last: -1 }), "last: must be zero or more, got -1");
  });
});

describe("page size", () => {
  const sorted = sortNodes(fleet(250), undefined, metrics);
  test(`omitted: ${DEFAULT_PAGE_SIZE}`, () => {
    const page = paginateNodes(sorted, undefined, metrics, { first: undefined, after: undefined });
    assert.equal(page.edges.length, DEFAULT_PAGE_SIZE);
    assert.equal(page.pageInfo.hasNextPage, true);
    assert.equal(page.totalCount, 250);
  });
  test("null: the default too", () => assert.equal(paginateNodes(sorted, undefined, metrics, { first: null, after: null }).edges.length, 100));
  test("0: no edges, but the count and whether there is more", () => {
    assert.deepEqual(paginateNodes(sorted, undefined, metrics, { first: 0, after: null }), {
      edges: [],
      pageInfo: { hasNextPage: true, hasPreviousPage: false, startCursor: null, endCursor: null },
      totalCount: 250,
    });
  });
  test("negative is BAD_USER_INPUT", () => assertBadInput(() => paginateNodes(sorted, undefined, metrics, { first: -1, after: null }), "first: must be zero or more, got -1"));
  test("above the maximum is BAD_USER_INPUT naming the maximum", () => {
    assert.equal(MAX_PAGE_SIZE, 5000);
    assertBadInput(() => paginateNodes(sorted, undefined, metrics, { first: 5001, after: null }), "first: must be at most 5000, got 5001");
  });
  test("an empty list", () => {
    assert.deepEqual(paginateNodes([], undefined, metrics, { first: 10, after: null }), {
      edges: [],
      pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
      totalCount: 0,
    });
  });
});

describe("bad cursors are BAD_USER_INPUT", () => {
  const nodes = fleet(30);
  const byName = sortNodes(nodes, { field: "NAME" }, metrics);
  const nameCursor = paginateNodes(byName, { field: "NAME" }, metrics, { first: 5, after: null }).pageInfo.endCursor!;
  const b64 = (s: string) => Buffer.from(s).toString("base64url");
  const NOT = "after: not a cursor of this ordering";

  const cases: [string, NodeOrderBy, string][] = [
    ["garbage", { field: "NAME" }, "!!not a cursor!!"],
    ["empty", { field: "NAME" }, ""],
    ["base64 of non-JSON", { field: "NAME" }, b64("hello")],
    ["JSON of the wrong shape", { field: "NAME" }, b64(JSON.stringify({ f: "NAME", d: "ASC" }))],
    ["a key of the wrong length", { field: "NAME" }, b64(JSON.stringify({ f: "NAME", d: "ASC", k: ["a", "b"] }))],
    ["a key with a non-string name", { field: "NAME" }, b64(JSON.stringify({ f: "NAME", d: "ASC", k: ["a", "b", 3] }))],
    ["JSON null", { field: "NAME" }, b64("null")],
    ["a cursor of another field", { field: "POD_COUNT" }, nameCursor],
    ["a NAME cursor whose name was replaced by a number", { field: "NAME" }, b64(JSON.stringify({ f: "NAME", d: "ASC", k: [5, "east", "x"] }))],
    ["a cursor with a non-finite number", { field: "POD_COUNT" }, b64('{"f":"POD_COUNT","d":"ASC","k":[1e999,"east","x"]}')],
    ["a cursor of the other direction", { field: "NAME", direction: "DESC" }, nameCursor],
  ];
  for (const [name, orderBy, cursor] of cases) {
    test(name, () => assertBadInput(() => paginateNodes(sortNodes(nodes, orderBy, metrics), orderBy, metrics, { first: 5, after: cursor }), NOT));
  }

  test("a cursor of another ordering is refused even when no node matches", () => {
    assertBadInput(() => paginateNodes([], { field: "POD_COUNT" }, metrics, { first: 5, after: nameCursor }), NOT);
  });

  test("cursors are opaque base64url and round-trip", () => {
    assert.match(nameCursor, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(decodeCursor(nameCursor, { field: "NAME", direction: "ASC" }), ["node-0004", "west", "node-0004"]);
    const key = ["node-0001", "east", "node-0001"] as const;
    assert.deepEqual(decodeCursor(encodeCursor({ field: "NAME", direction: "ASC" }, key), { field: "NAME", direction: "ASC" }), key);
    const nullKey = [null, "west", "node-0003"] as const;
    assert.deepEqual(decodeCursor(encodeCursor({ field: "CPU_USAGE", direction: "DESC" }, nullKey), { field: "CPU_USAGE", direction: "DESC" }), nullKey);
  });
});
