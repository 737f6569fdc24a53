import type { IncomingMessage, ServerResponse } from "node:http";
import { escapeHtml, type PageSettings } from "./page-settings.js";

/** A Host header worth showing back: a name or address and an optional port, nothing else. */
const HOST = /^[\w.-]+(:\d{1,5})?$|^\[[0-9a-fA-F:.]+\](:\d{1,5})?$/;

/**
 * GET /: where the service is (the address the browser reached it at), links to the web UI,
 * the explorer and the schema, and a warning when a cluster is only the simulator.
 */
export function sendLandingPage(req: IncomingMessage, res: ServerResponse, settings: PageSettings, fallbackAddress: string): void {
  const host = req.headers.host && HOST.test(req.headers.host) ? req.headers.host : fallbackAddress;
  const base = `http://${host}`;
  const simulated = settings.simulatedClusters.length
    ? `<p class="warn" role="status"><strong>Simulated cluster:</strong> ${escapeHtml(settings.simulatedClusters.join(", "))} is the embedded simulator, not a real cluster. Point node-inventory at a cluster with <code>--kubeconfig</code> (see the README).</p>`
    : "";
  const auth = settings.authRequired
    ? `<p>Authentication is on: send <code>Authorization: Bearer &lt;token&gt;</code> (the explorer has a field for it).</p>`
    : `<p>No authentication is configured: callers on this machine are the local admin.</p>`;
  const curl = `curl -s ${base}/graphql -H 'content-type: application/json'${settings.authRequired ? ` -H "authorization: Bearer $TOKEN"` : ""} -d '{"query":"{ nodes { totalCount } }"}'`;
  res.statusCode = 200;
  res.setHeader("content-type", "text/html; charset=utf-8");
  res.setHeader("cache-control", "no-store");
  res.setHeader("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'");
  res.end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>node-inventory</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:3rem auto;padding:0 1rem}code,pre{background:#f3f3f3;padding:0 .25rem}pre{padding:.5rem;overflow-x:auto}.warn{background:#fff3cd;border:1px solid #ffe69c;padding:.5rem .75rem;border-radius:4px}</style>
</head><body>
<h1>node-inventory</h1>
<p>A live, queryable GraphQL picture of your Kubernetes nodes (version ${escapeHtml(settings.version)}), at <code>${escapeHtml(base)}</code>.</p>
${simulated}
<ul>
<li><a href="/ui/">Web UI</a>: the fleet live, node pages, drains and reports</li>
<li><a href="/graphql">API explorer</a> (GraphiQL): <code>${escapeHtml(base)}/graphql</code></li>
<li><a href="/schema.graphql">The schema</a> (SDL): <code>${escapeHtml(base)}/schema.graphql</code></li>
<li>GraphQL over HTTP: <code>POST ${escapeHtml(base)}/graphql</code>; over WebSocket (graphql-ws): <code>${escapeHtml(base.replace(/^http/, "ws"))}/graphql</code></li>
<li>Health: <a href="/healthz"><code>/healthz</code></a>, readiness: <a href="/readyz"><code>/readyz</code></a></li>
</ul>
${auth}
<pre>${escapeHtml(curl)}</pre>
</body></html>`);
}
