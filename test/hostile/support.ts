import assert from "node:assert/strict";
import { graphql } from "../support/app.js";

/**
 * How long another client's `{ __typename }` may take while an attack runs. Generous for a
 * busy CI machine, far below the seconds to minutes the attacks froze the service for.
 */
export const SERVED_WITHIN_MS = 5_000;

/** Asks `{ __typename }` as another client and asserts it is answered within {@link SERVED_WITHIN_MS}. */
export async function servedMeanwhile(url: string, headers: Record<string, string> = {}): Promise<number> {
  const began = performance.now();
  const { status, body } = await graphql(url, "{ __typename }", undefined, headers);
  const ms = performance.now() - began;
  assert.equal(status, 200);
  assert.deepEqual(body, { data: { __typename: "Query" } });
  assert.ok(ms < SERVED_WITHIN_MS, `{ __typename } took ${Math.round(ms)} ms while under attack`);
  return ms;
}

/** The issue's document: n fragments, each spreading the next twice (2^(n-1) selections in a few hundred bytes). */
export function fanOutDocument(n: number, type = "Query"): string {
  const fragments = Array.from({ length: n }, (_, i) => `fragment F${i} on ${type} { ${i < n - 1 ? `...F${i + 1} ...F${i + 1}` : "__typename"} }`);
  return `${type === "Mutation" ? "mutation" : "query"} { ...F0 }\n${fragments.join("\n")}`;
}
