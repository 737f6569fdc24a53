import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { request } from "node:http";
import type { App } from "../../src/app/create-app.js";
import { startTestApp } from "../support/app.js";

/** GET `path` with a Host header of our choosing (fetch does not let one be set). */
function getWithHost(url: string, path: string, host: string): Promise<string> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: target.hostname, port: target.port, path, headers: { host } }, (res) => {
      let text = "";
      res.on("data", (chunk) => (text += chunk)).on("end", () => resolve(text));
    });
    req.on("error", reject).end();
  });
}

describe("pages for people", () => {
  let app: App;
  let url: string;
  before(async () => ({ app, url } = await startTestApp()));
  after(() => app.stop());

  test("/ shows the address it was reached at, links the web UI, the explorer and the schema, and says the cluster is simulated", async () => {
    const port = new URL(url).port;
    // As a browser that reached it through another name for the same machine.
    const page = await getWithHost(url, "/", `localhost:${port}`);
    assert.match(page, new RegExp(`at <code>http://localhost:${port}</code>`));
    assert.match(page, /<a href="\/ui\/">Web UI<\/a>/);
    assert.match(page, /<a href="\/graphql">API explorer<\/a>/);
    assert.match(page, /<a href="\/schema.graphql">The schema<\/a>/);
    assert.match(page, /<strong>Simulated cluster:<\/strong> sim is the embedded simulator, not a real cluster/);
    assert.match(page, new RegExp(`curl -s http://localhost:${port}/graphql`));
  });

  test("a Host header that is not a host is not echoed into the page", async () => {
    const body = await getWithHost(url, "/", "<script>x</script>");
    assert.doesNotMatch(body, /<script>x/);
    assert.match(body, new RegExp(`at <code>${url}</code>`));
  });

  test("GET /graphql for a browser is GraphiQL with this service's settings; a GraphQL client still gets GraphQL", async () => {
    const page = await fetch(`${url}/graphql`, { headers: { accept: "text/html,application/xhtml+xml" } });
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-security-policy")!, /default-src 'self'/);
    const html = await page.text();
    assert.match(html, /<script id="node-inventory-settings" type="application\/json">\{"version":"[^"]+","simulatedClusters":\["sim"\],"authRequired":false,"introspection":true\}<\/script>/);
    const api = await fetch(`${url}/graphql?query=${encodeURIComponent("{ __typename }")}`, { headers: { "apollo-require-preflight": "true" } });
    assert.deepEqual(await api.json(), { data: { __typename: "Query" } });
  });

  test("/ui/ and every route under it is the web UI's page with this service's settings, under a policy that keeps it on this origin", async () => {
    for (const path of ["/ui/", "/ui/nodes/sim/general-b-ft985", "/ui/reports"]) {
      const page = await fetch(`${url}${path}`);
      assert.equal(page.status, 200, path);
      assert.equal(
        page.headers.get("content-security-policy"),
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      );
      const html = await page.text();
      assert.match(html, /<script type="module" crossorigin src="\/assets\/ui-[\w-]+\.js"><\/script>/);
      assert.match(html, /<script id="node-inventory-settings" type="application\/json">\{"version":"[^"]+","simulatedClusters":\["sim"\],"authRequired":false,"introspection":true\}<\/script>/);
    }
    const bare = await fetch(`${url}/ui`, { redirect: "manual" });
    assert.equal(bare.status, 308);
    assert.equal(bare.headers.get("location"), "/ui/");
    const script = /src="(\/assets\/ui-[\w-]+\.js)"/.exec(await (await fetch(`${url}/ui/`)).text())![1]!;
    const asset = await fetch(`${url}${script}`);
    assert.equal(asset.status, 200);
    assert.equal(asset.headers.get("content-type"), "text/javascript; charset=utf-8");
  });

  test("/schema.graphql is the SDL; an asset name that climbs out of the bundle is 404", async () => {
    const sdl = await fetch(`${url}/schema.graphql`);
    assert.equal(sdl.status, 200);
    assert.match(await sdl.text(), /type Cluster \{[^}]*simulated: Boolean!/);
    assert.equal((await fetch(`${url}/assets/..%2F..%2Fpackage.json`)).status, 404);
    assert.equal((await fetch(`${url}/assets/nothing.js`)).status, 404);
  });
});
