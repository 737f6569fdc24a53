import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import { effectiveTotal } from "../../src/http/connection-limits.js";
import { startTestApp } from "../support/app.js";
import { eventually } from "../support/sim-cluster.js";
import { servedMeanwhile } from "./support.js";

/** Opens a TCP connection to the app and sends nothing: an idle, anonymous connection. */
function idle(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once("error", reject);
  });
}

describe("connections are bounded per client address and in total", () => {
  let app: App;
  let url: string;
  before(async () => ({ app, url } = await startTestApp({ limits: { maxConnections: 400, maxConnectionsPerAddress: 200 } })));
  after(() => app.stop());

  test("2,000 idle connections from one address: the oldest are closed, at most 200 stay, /healthz and GraphQL answer", async () => {
    const sockets: Socket[] = [];
    let closed = 0;
    try {
      for (let i = 0; i < 2_000; i += 100) {
        const batch = await Promise.all(Array.from({ length: 100 }, () => idle(url)));
        for (const socket of batch) {
          socket.on("error", () => {});
          socket.once("close", () => closed++);
          sockets.push(socket);
        }
      }
      // The server closes what it does not keep; the test sees those closes arrive.
      await eventually(() => sockets.length - closed <= 200 || undefined, `at most 200 open (have ${sockets.length - closed})`);
      const healthz = await fetch(`${url}/healthz`);
      assert.equal(healthz.status, 200);
      await servedMeanwhile(url);
      // The first connections were the oldest idle ones: they were closed to make room.
      assert.ok(sockets[0]!.destroyed || sockets[0]!.readableEnded, "the oldest idle connection was closed");
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  test("the total is kept under the process's open-files limit", () => {
    assert.equal(effectiveTotal(10_000, 20_000), 10_000);
    assert.equal(effectiveTotal(10_000, 4_096), 3_072);
    assert.equal(effectiveTotal(10_000, undefined), 10_000);
  });
});
