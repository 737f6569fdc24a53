import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { createLogger } from "../../src/log/logger.js";
import { startTestApp } from "../support/app.js";
import { servedMeanwhile } from "./support.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** The heap in use once garbage is collected. */
const heapInUse = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

describe("/assets/ keeps only the files the build wrote", () => {
  let app: App;
  let url: string;
  // Logs written and forgotten, as on a terminal: the test's own capture would keep every line.
  const discard = new Writable({ write: (_chunk, _encoding, done) => done() });
  before(async () => ({ app, url } = await startTestApp({}, { logger: createLogger("info", discard) })));
  after(() => app.stop());

  test("4,000 unknown 8 KB names are 404 and leave nothing behind; a built asset is still served", async () => {
    const names = Array.from({ length: 4_000 }, (_, i) => `${String(i).padStart(6, "0")}${"x".repeat(8_000)}.js`);
    const began = heapInUse();
    let next = 0;
    const statuses = new Map<number, number>();
    // Sixteen callers at a time, as a browser or a script would.
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < names.length) {
          const response = await fetch(`${url}/assets/${names[next++]}`);
          await response.arrayBuffer();
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        }
      }),
    );
    assert.deepEqual([...statuses], [[404, 4_000]]);
    const grown = heapInUse() - began;
    // The names alone are 32 MB; kept, they would stay.
    assert.ok(grown < 12 * 1024 * 1024, `the heap grew by ${Math.round(grown / 1024 / 1024)} MB`);
    const page = await (await fetch(`${url}/ui/`)).text();
    const asset = /\/assets\/[\w.-]+\.js/.exec(page)?.[0];
    assert.ok(asset, "the UI page names its script");
    const served = await fetch(`${url}${asset}`);
    assert.equal(served.status, 200);
    await servedMeanwhile(url);
  });
});
