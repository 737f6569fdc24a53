import assert from "node:assert/strict";
import { test } from "node:test";
import { formatAvailability as cli } from "../../src/cli/report-format.js";
import { formatAvailability } from "../../src/reports/availability-percent.js";

// The web UI imports the same module (web/ui/format.ts); the CLI re-exports it.
const TABLE: [number | null, string][] = [
  [null, "-"],
  [1, "100%"],
  [0.999, "99.90%"],
  [0.99995, "99.9950%"],
  [0.9999999, "99.9999%"],
  [0.5, "50.00%"],
  [0.00001, "0.01%"],
  [0, "0%"],
];

for (const [ratio, text] of TABLE)
  test(`availability ${ratio} reads ${text} in the CLI and the web UI alike`, () => {
    assert.equal(formatAvailability(ratio), text);
    assert.equal(cli(ratio), text);
  });
