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
  /** GET /metrics, Prometheus text format. */
  metrics?: Handler;
  /** Pages for people (landing page, explorer, schema): true when it answered the request. */
  pages?(req: IncomingMessage, res: ServerResponse, path: string): boolean;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The request id: the caller's X-Request-Id when it is sane, else a new one. Echoed back. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers["x-request-id"];
  return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * Listens before anything slow is started, so a port in use ends the start at once. Until the
 * routes are attached, /healthz answers 200 (the process is up) and everything else 503.
 */
export async function bindHttpPort(host: string, port: number): Promise<Server> {
  const server = createServer(answerWhileStarting);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}

function answerWhileStarting(req: IncomingMessage, res: ServerResponse): void {
  const path = new URL(req.url ?? "/", "http://localhost").pathname;
  if (path === "/healthz") sendJson(res, 200, { status: "ok" });
  else {
    res.setHeader("retry-after", "1");
    sendJson(res, 503, { status: "starting" });
  }
}

/**
 * The one HTTP server: /graphql (HTTP; WebSocket upgrades are attached separately),
 * /healthz (the process is up), /readyz (its dependencies answer) and the pages for people.
 * Given `bound` (from bindHttpPort), the routes take over that listening server.
 */
export function createHttpServer(routes: HttpRoutes, logger: Logger, bound?: Server): Server {
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const started = process.hrtime.bigint();
    const requestId = requestIdOf(req);
    req.headers["x-request-id"] = requestId;
    res.setHeader("x-request-id", requestId);
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    try {
      if ((req.method === "GET" || req.method === "HEAD") && routes.pages?.(req, res, path)) return;
      if (path === "/graphql") await routes.graphql(req, res);
      else if (path === "/healthz") sendJson(res, 200, { status: "ok" });
      else if (path === "/metrics" && routes.metrics) await routes.metrics(req, res);
      else if (path === "/readyz") {
        const readiness = await routes.readiness();
        sendJson(res, readiness.ready ? 200 : 503, { status: readiness.ready ? "ready" : "not ready", checks: readiness.checks });
      } else sendJson(res, 404, { error: `no route for ${path}` });
    } catch (error) {
      logger.error({ err: error, requestId }, "request failed");
      if (!res.headersSent) sendJson(res, 500, { error: "Internal server error" });
      else res.destroy();
    } finally {
      if (path !== "/healthz" && path !== "/readyz" && path !== "/metrics") {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        logger.info({ requestId, method: req.method, path, status: res.statusCode, ms: Math.round(ms * 10) / 10 }, "request");
      }
    }
  };
  if (!bound) return createServer(handle);
  bound.off("request", answerWhileStarting).on("request", handle);
  return bound;
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader("content-type", "application/json; charset=utf-8");
  res.setHeader("cache-control", "no-store");
  res.end(JSON.stringify(body));
}
