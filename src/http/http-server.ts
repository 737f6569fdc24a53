import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Logger } from "../log/logger.js";

export type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

/** What /readyz reports: each dependency up or down, and ready only when all are up. */
export interface Readiness {
  ready: boolean;
  checks: Record<string, { ok: boolean; detail?: string }>;
}

export interface HttpRoutes {
  graphql: Handler;
  readiness(): Promise<Readiness>;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The request id: the caller's X-Request-Id when it is sane, else a new one. Echoed back. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers["x-request-id"];
  return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * The one HTTP server: /graphql (HTTP; WebSocket upgrades are attached separately),
 * /healthz (the process is up), /readyz (its dependencies answer) and a local landing page.
 */
export function createHttpServer(routes: HttpRoutes, logger: Logger): Server {
  return createServer(async (req, res) => {
    const started = process.hrtime.bigint();
    const requestId = requestIdOf(req);
    req.headers["x-request-id"] = requestId;
    res.setHeader("x-request-id", requestId);
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    try {
      if (path === "/graphql") await routes.graphql(req, res);
      else if (path === "/healthz") sendJson(res, 200, { status: "ok" });
      else if (path === "/readyz") {
        const readiness = await routes.readiness();
        sendJson(res, readiness.ready ? 200 : 503, { status: readiness.ready ? "ready" : "not ready", checks: readiness.checks });
      } else if (path === "/" && req.method === "GET") sendLandingPage(res);
      else sendJson(res, 404, { error: `no route for ${path}` });
    } catch (error) {
      logger.error({ err: error, requestId }, "request failed");
      if (!res.headersSent) sendJson(res, 500, { error: "Internal server error" });
      else res.destroy();
    } finally {
      if (path !== "/healthz" && path !== "/readyz") {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        logger.info({ requestId, method: req.method, path, status: res.statusCode, ms: Math.round(ms * 10) / 10 }, "request");
      }
    }
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader("content-type", "application/json; charset=utf-8");
  res.setHeader("cache-control", "no-store");
  res.end(JSON.stringify(body));
}

// Served from here, never from a CDN: the service must work where the internet is not.
const LANDING_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>node-inventory</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:3rem auto;padding:0 1rem}code{background:#f3f3f3;padding:0 .25rem}</style>
</head><body>
<h1>node-inventory</h1>
<p>A live, queryable GraphQL picture of your Kubernetes nodes.</p>
<ul>
<li>GraphQL over HTTP: <code>POST /graphql</code> (JSON) or <code>GET /graphql?query=…</code></li>
<li>GraphQL over WebSocket (graphql-ws): <code>ws://…/graphql</code></li>
<li>Health: <a href="/healthz"><code>/healthz</code></a>, readiness: <a href="/readyz"><code>/readyz</code></a></li>
</ul>
<pre>curl -s localhost:4000/graphql -H 'content-type: application/json' -d '{"query":"{ service { version } }"}'</pre>
</body></html>`;

function sendLandingPage(res: ServerResponse): void {
  res.statusCode = 200;
  res.setHeader("content-type", "text/html; charset=utf-8");
  res.end(LANDING_PAGE);
}
