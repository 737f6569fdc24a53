import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/app/create-app.js";
import type { AppProbes } from "../../src/app/app-probes.js";
import { ready, startTestApp, subscribers, type CapturedLogs } from "../support/app.js";
import { eventually, startSimWithKubeconfig } from "../support/sim-cluster.js";
import { init, runOverWs, TOKEN_ENTRIES, tokensFile, TOKENS, wsClient } from "./support.js";

const WHOAMI = "{ whoami { subject role via } }";

describe("graphql-ws callers", () => {
  let app: App;
  let url: string;
  let logs: CapturedLogs;
  let probes: AppProbes;
  const file = tokensFile();
  let cluster: Awaited<ReturnType<typeof startSimWithKubeconfig>>;
  before(async () => {
    cluster = await startSimWithKubeconfig({ nodes: 2, seed: 71, clockSpeed: 0 });
    ({ app, url, logs, probes } = await startTestApp(
      { auth: { tokensFile: file.path }, clusters: { kubeconfigs: [cluster.kubeconfigPath], contexts: [] } },
      { recorderTuning: { leaseDurationMs: 2_000, retryPeriodMs: 200 }, authTuning: { tokensFilePollMs: 50 } },
    ));
  });
  after(async () => (await app.stop(), await cluster.stop(), file.remove()));

  test("connection_init without credentials is closed with 4401", async () => {
    assert.deepEqual(await init(url), { acked: false, code: 4401, reason: "Authentication required: send a bearer token" });
    assert.deepEqual(await init(url, {}), { acked: false, code: 4401, reason: "Authentication required: send a bearer token" });
  });

  test("a bad token is closed with 4401, in either payload form", async () => {
    assert.deepEqual(await init(url, { token: "nope-nope-nope-nope-nope" }), { acked: false, code: 4401, reason: "The token is not valid" });
    assert.deepEqual(await init(url, { authorization: "Bearer nope-nope-nope-nope" }), { acked: false, code: 4401, reason: "The token is not valid" });
  });

  test("a good token is acknowledged in either payload form, or in the upgrade's Authorization header", async () => {
    for (const outcome of [
      await init(url, { token: TOKENS.viewer }),
      await init(url, { authorization: `Bearer ${TOKENS.operator}` }),
      await init(url, undefined, { authorization: `Bearer ${TOKENS.admin}` }),
    ]) {
      assert.equal(outcome.acked, true);
      if (outcome.acked) outcome.socket.close();
    }
  });

  test("a real graphql-ws client: operations carry the caller; an anonymous client sees the 4401 close", async () => {
    const viewer = wsClient(url, { authorization: `Bearer ${TOKENS.viewer}` });
    const anonymous = wsClient(url);
    try {
      assert.deepEqual((await runOverWs(viewer, WHOAMI)).result, { data: { whoami: { subject: "vera", role: "VIEWER", via: "TOKEN" } } });
      const refused = await runOverWs(anonymous, WHOAMI);
      assert.equal(refused.error?.code, 4401);
    } finally {
      await Promise.all([viewer.dispose(), anonymous.dispose()]);
    }
  });

  test("a viewer subscribes and receives events", async () => {
    const viewer = wsClient(url, { token: TOKENS.viewer });
    const received: any[] = [];
    try {
      await eventually(async () => {
        const { result } = await runOverWs(viewer, "{ service { history { recordedTransitions pendingWrites } } }");
        return result?.data.service.history.recordedTransitions > 0 && result.data.service.history.pendingWrites === 0;
      }, "the first records");
      const [name] = cluster.sim.cluster.nodeNames();
      const listening = probes.subscriberCount();
      viewer.subscribe(
        { query: `subscription { nodeStatusChanged(filter: { names: ["${name}"] }) { name transition { to } } }` },
        { next: (v) => received.push(v), error: (e) => received.push({ error: e }), complete: () => {} },
      );
      await subscribers(probes, listening + 1);
      cluster.sim.cluster.advance(10_000);
      cluster.sim.cluster.setNodeCondition(name!, "Ready", "False", "KubeletNotReady");
      const event = await eventually(() => received[0], "the event");
      assert.deepEqual(event, { data: { nodeStatusChanged: { name, transition: { to: "FALSE" } } } });
    } finally {
      await viewer.dispose();
    }
  });

  test("a viewer's mutation is FORBIDDEN; an operator's passes the role check and is audited as a WebSocket mutation", async () => {
    const viewer = wsClient(url, { token: TOKENS.viewer });
    const operator = wsClient(url, { token: TOKENS.operator });
    try {
      const refused = await runOverWs(viewer, `mutation { cordonNode(name: "x") { name } }`);
      assert.deepEqual(refused.error, [{ message: "Role viewer may not do this; it needs operator", extensions: { code: "FORBIDDEN" } }]);
      await ready(url);
      const allowed = await runOverWs(operator, `mutation OverWs { cordonNode(name: "x") { name } }`);
      const code = allowed.result?.errors?.[0]?.extensions.code ?? (allowed.error ? allowed.error[0].extensions.code : "ok");
      // Past the role check, the cordon itself answers: there is no node "x".
      assert.equal(code, "NOT_FOUND");
      const line = logs.lines.find((l) => l.audit === "mutation" && l.operationName === "OverWs");
      assert.ok(line);
      assert.deepEqual({ subject: line.subject, transport: line.transport, outcome: line.outcome }, { subject: "otto", transport: "websocket", outcome: code });
      assert.equal(logs.lines.filter((l) => l.audit === "mutation" && l.subject === "vera" && l.transport === "websocket").length, 1);
    } finally {
      await Promise.all([viewer.dispose(), operator.dispose()]);
    }
  });

  test("a token taken out of the tokens file ends its open connections when the file is re-read (4401), a streaming subscription too", async () => {
    const admin = wsClient(url, { token: TOKENS.admin });
    const viewer = wsClient(url, { token: TOKENS.viewer });
    try {
      assert.equal((await runOverWs(admin, WHOAMI)).result.data.whoami.subject, "ada");
      // A subscription that sends nothing more: only the server can end it.
      const listening = probes.subscriberCount();
      const streaming = runOverWs(admin, `subscription { maintenanceEvents { kind } }`);
      const other = runOverWs(viewer, `subscription { maintenanceEvents { kind } }`);
      let otherEnded = false;
      void other.then(() => (otherEnded = true));
      await subscribers(probes, listening + 2);
      file.write(TOKEN_ENTRIES.filter((e) => e.subject !== "ada"));
      const ended = await Promise.race([streaming, new Promise<undefined>((resolve) => setTimeout(resolve, 5_000, undefined))]);
      assert.equal(ended?.error?.code, 4401, "closed without any further operation");
      assert.equal(ended.error.reason, "The token is not valid");
      assert.equal((await init(url, { token: TOKENS.admin })).acked, false, "and the token opens no new connection");
      assert.equal((await runOverWs(viewer, WHOAMI)).result.data.whoami.subject, "vera", "a connection whose token stays is left alone");
      // Ada's subscription is gone from the hub; the viewer's is still registered and has not ended.
      await eventually(() => probes.subscriberCount() === listening + 1 || undefined, "only the viewer's subscription to remain");
      assert.equal(otherEnded, false);
    } finally {
      file.write(TOKEN_ENTRIES);
      await Promise.all([admin.dispose(), viewer.dispose()]);
    }
  });
});
