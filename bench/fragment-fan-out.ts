// Measuring an operation as its fragments grow (issue 13, finding 1): the time measureOperation
// takes over documents of n fragments that each spread the next twice (2^(n-1) selections),
// beside a floor measured in the same run, graphql-js's own validate() of the same document.
// Linear: the ratio stays flat as n grows. Then the issue's 26-fragment document sent to the
// real program (bin/node-inventory.js serve --simulate 3): refused in milliseconds.
// Usage: npm run bench:fragment-fan-out [-- --rounds 50]
import { parseArgs } from "node:util";
import { buildSchema, getOperationAST, parse, validate } from "graphql";
import { measureOperation } from "../src/graphql/operation-limits.js";
import { SCHEMA_SDL } from "../src/graphql/schema.js";
import { spawnUntil, stop } from "./support.js";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "50" } } });
const rounds = Number(values.rounds);
const schema = buildSchema(SCHEMA_SDL);

const fanOut = (n: number) => "query { ...F0 }\n" + Array.from({ length: n }, (_, i) => `fragment F${i} on Query { ${i < n - 1 ? `...F${i + 1} ...F${i + 1}` : "__typename"} }`).join("\n");

/** Median µs of `fn` over `rounds` runs. */
function median(fn: () => void): number {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const began = performance.now();
    fn();
    times.push((performance.now() - began) * 1000);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

console.log("fragments  bytes  measure_us  validate_us  measure/validate  measure_us/fragment");
for (const n of [10, 25, 50, 100, 200, 400, 800]) {
  const text = fanOut(n);
  const document = parse(text, { maxTokens: 1_000_000 });
  const operation = getOperationAST(document)!;
  const measure = median(() => measureOperation(schema, document, operation));
  const floor = median(() => validate(schema, document));
  console.log(
    [
      String(n).padStart(9),
      String(text.length).padStart(6),
      measure.toFixed(1).padStart(11),
      floor.toFixed(1).padStart(12),
      (measure / floor).toFixed(3).padStart(17),
      (measure / n).toFixed(2).padStart(20),
    ].join(" "),
  );
}

const service = await spawnUntil(["serve", "--port", "0", "--simulate", "3", "--data-dir", "memory"], /"url":"([^"]+)","graphql"/);
try {
  const url = service.match[1]!;
  const began = performance.now();
  const response = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: fanOut(26) }) });
  const body = (await response.json()) as { errors?: { extensions?: { reason?: string } }[] };
  console.log(`26-fragment document via HTTP: ${(performance.now() - began).toFixed(1)} ms, ${response.status} ${body.errors?.[0]?.extensions?.reason ?? "ran"}`);
} finally {
  await stop(service.child);
}
