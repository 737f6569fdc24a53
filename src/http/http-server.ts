import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Logger } from "../log/logger.js";
import { effectiveTotal, limitConnections, type ConnectionLimits } from "./connection-limits.js";
import { WEB_PREFIX } from "./web-assets.js";

export type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

/** What /readyz reports: each dependency up or down, and ready only when all are up. */
export interface Readiness {
  ready: boolean;
  checks: Record<string, { ok: boolean; detail?: string }>;
}

export interface HttpRoutes {
  graphql: Handler;
  readiness(): Promise<Readiness>;
  /** The API as an Apollo Federation 2 subgraph (for a gateway or router). */
  subgraph?: Handler;
  /** Whether the caller of /readyz may see each check's details (an authenticated caller); absent: everyone may. */
  readinessDetails?(req: IncomingMessage): Promise<boolean>;
  /** GET /metrics, Prometheus text format. */
  metrics?: Handler;
  /** Pages for people (landing page, explorer, schema): true when it answered the request. */
  pages?(req: IncomingMessage, res: ServerResponse, path: string): boolean;
}

/** How much of a request's path its log line keeps. */
const LOGGED_PATH_LENGTH = 256;

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The request id: the caller's X-Request-Id when it is sane, else a new one. Echoed back. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers["x-request-id"];
  return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * Listens before anything slow is started, so a port in use ends the start at once. Until the
 * routes are attached, /healthz answers 200 (the process is up) and everything else 503.
 * `connections` bounds the connections held (connection-limits.ts).
 */
export async function bindHttpPort(host: string, port: number, connections?: ConnectionLimits): Promise<Server> {
  const server = keepingAlive(createServer(answerWhileStarting));
  if (connections) limitConnections(server, { ...connections, total: effectiveTotal(connections.total) });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}

/**
 * How long an idle keep-alive connection is kept: 65 s, past the 60 s idle timeout of the
 * usual load balancers, instead of Node's 5 s. With 5 s, an event loop busy for a few seconds
 * (a first sync's parsing, an embedded PGlite query) can let a connection's timer fire before
 * its next request, already received, is read, and the request is reset: bench:inventory's
 * query was, about 5 s after the previous answer, never logged by the service (issue 17,
 * docs/scaling.md). Shutdown closes idle connections itself, so this does not make a stop wait.
 */
export const KEEP_ALIVE_MS = 65_000;

/**
 * How long receiving one request (headers and body) may take: the apiserver's
 * default request timeout (60 s), on top of the headers' own allowance (keepingAlive). Node's default
 * is 300 s.
 */
export const REQUEST_TIMEOUT_MS = 60_000 + KEEP_ALIVE_MS + 1_000;

/** How long a connection may be silent (no byte either way) before it is closed, a WebSocket being pinged far more often. */
export const SOCKET_IDLE_MS = 2 * KEEP_ALIVE_MS;

function keepingAlive(server: Server): Server {
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  // Headers of a request on a kept connection must be allowed at least as long.
  server.headersTimeout = Math.max(server.headersTimeout, KEEP_ALIVE_MS + 1_000);
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  // A connection that never sends a request is not covered by the timeouts above.
  server.timeout = SOCKET_IDLE_MS;
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
      else if (path === "/subgraph" && routes.subgraph) await routes.subgraph(req, res);
      else if (path === "/readyz") {
        const full = await routes.readiness();
        const readiness = !routes.readinessDetails || (await routes.readinessDetails(req)) ? full : inGeneralTerms(full);
        sendJson(res, readiness.ready ? 200 : 503, { status: readiness.ready ? "ready" : "not ready", checks: readiness.checks });
      } else sendJson(res, 404, { error: `no route for ${path}` });
    } catch (error) {
      logger.error({ err: error, requestId }, "request failed");
      if (!res.headersSent) sendJson(res, 500, { error: "Internal server error" });
      else res.destroy();
    } finally {
      if (path !== "/healthz" && path !== "/readyz" && path !== "/metrics") {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        // A path is the caller's text: logged cut, so a flood of long ones cannot fill the log.
        const logged = path.length > LOGGED_PATH_LENGTH ? `${path.slice(0, LOGGED_PATH_LENGTH)}…` : path;
        // A page's scripts and styles are a dozen requests each time it loads: debug, not a line each.
        const level = path.startsWith(WEB_PREFIX) && res.statusCode < 400 ? "debug" : "info";
        logger[level]({ requestId, method: req.method, path: logged, status: res.statusCode, ms: Math.round(ms * 10) / 10 }, "request");
      }
    }
  };
  if (!bound) return keepingAlive(createServer(handle));
  bound.off("request", answerWhileStarting).on("request", handle);
  return bound;
}

/** What each kind of check says when it fails, without naming anything inside (contexts, counts, errors). */
const GENERAL_FAILURE: Record<string, string> = { database: "not answering", clusters: "not every cluster has been read yet", history: "not being recorded" };

/**
 * Readiness for an anonymous probe: ready or not, and why in general terms (the database,
 * the clusters, history), never the names of clusters or counts; the details are for
 * authenticated callers.
 */
export function inGeneralTerms(readiness: Readiness): Readiness {
  const checks: Readiness["checks"] = {};
  for (const [name, check] of Object.entries(readiness.checks)) {
    const kind = name.startsWith("cluster:") ? "clusters" : name;
    const ok = (checks[kind]?.ok ?? true) && check.ok;
    checks[kind] = ok ? { ok } : { ok, detail: GENERAL_FAILURE[kind] ?? "not ready" };
  }
  return { ready: readiness.ready, checks };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader("content-type", "application/json; charset=utf-8");
  res.setHeader("cache-control", "no-store");
  res.end(JSON.stringify(body));
}
