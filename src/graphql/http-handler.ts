import type { IncomingMessage, ServerResponse } from "node:http";
import { HeaderMap, type ApolloServer } from "@apollo/server";
import type { GraphQLError } from "graphql";
import type { Authentication, Principal } from "./caller.js";
import { requestOf, type RequestContext } from "./context.js";
import { AppError, ErrorCode } from "./errors.js";
import type { InFlightLimiter } from "./in-flight.js";
import { checkNesting } from "./operation-limits.js";
import type { PrerenderedAnswers } from "../performance/prerendered-json.js";

/** The largest request body accepted; GraphQL documents are small, so this is generous. */
export const MAX_BODY_BYTES = 1024 * 1024;

const SUPPORTED_CHARSET = /^utf-?8$/i;

const REFUSAL_STATUS = { [ErrorCode.UNAUTHENTICATED]: 401, [ErrorCode.FORBIDDEN]: 403, [ErrorCode.UNAVAILABLE]: 503 } as const;

/**
 * GraphQL over HTTP on node:http, in front of Apollo Server: authenticates the caller
 * (before reading the body: a caller who cannot be served costs nothing more), reads and
 * parses the body with a size limit, hands Apollo the request and writes back its answer.
 */
export function graphqlHttpHandler(
  apollo: ApolloServer<RequestContext>,
  authenticate: (req: IncomingMessage) => Promise<Authentication>,
  contextFor: (req: IncomingMessage, principal: Principal) => RequestContext,
  inFlight?: InFlightLimiter,
  prerendered?: PrerenderedAnswers,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const auth = await authenticate(req);
    if (!auth.ok || !inFlight) return handle(req, res, auth);
    // Refused before the body is read: a flood of parallel requests costs the service nothing more.
    const slot = inFlight.acquire(auth.principal.subject);
    if (slot instanceof AppError) {
      res.setHeader("retry-after", String(slot.extensions["retryAfterSeconds"]));
      res.setHeader("connection", "close");
      const { code, ...extensions } = slot.extensions;
      return sendError(res, code === ErrorCode.UNAVAILABLE ? 503 : 429, slot.message, code as ErrorCode, extensions);
    }
    try {
      await handle(req, res, auth);
    } finally {
      slot();
    }
  };

  async function handle(req: IncomingMessage, res: ServerResponse, auth: Authentication): Promise<void> {
    if (!auth.ok) {
      // RFC 6750: say how to authenticate, and whether the token sent was the problem.
      if (auth.code === ErrorCode.UNAUTHENTICATED) {
        res.setHeader("www-authenticate", `Bearer realm="node-inventory"${auth.presented ? ', error="invalid_token"' : ""}`);
      }
      if (auth.code === ErrorCode.UNAVAILABLE) res.setHeader("retry-after", "5");
      // The body is not read: close rather than drain whatever the caller still sends.
      res.setHeader("connection", "close");
      return sendError(res, REFUSAL_STATUS[auth.code], auth.message, auth.code);
    }
    const headers = new HeaderMap();
    for (const [key, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(", ") : value);
    }
    let body: unknown;
    if (req.method === "POST") {
      const read = await readBody(req);
      if ("error" in read) return sendError(res, read.status, read.error);
      const contentType = headers.get("content-type") ?? "";
      const [mediaType = "", ...params] = contentType.split(";").map((part) => part.trim());
      const charset = params
        .find((p) => p.toLowerCase().startsWith("charset="))
        ?.slice(8)
        .replace(/"/g, "");
      if (charset && !SUPPORTED_CHARSET.test(charset)) {
        return sendError(res, 415, `Unsupported charset "${charset}": send UTF-8`);
      }
      if (/^application\/(.+\+)?json$/i.test(mediaType)) {
        try {
          body = read.text === "" ? undefined : JSON.parse(read.text);
        } catch {
          return sendError(res, 400, "The request body is not valid JSON");
        }
      } else {
        body = read.text;
      }
    }
    const url = req.url ?? "/";
    const queryAt = url.indexOf("?");
    if (queryAt >= 0 && !percentEncodedUtf8(url.slice(queryAt + 1))) return sendError(res, 400, "The query string is not valid UTF-8 once percent-decoded");
    // Before Apollo parses it: parsing and validation recurse, and a deep enough document overflows the stack.
    const text = typeof (body as { query?: unknown } | undefined)?.query === "string" ? (body as { query: string }).query : queryAt < 0 ? null : new URLSearchParams(url.slice(queryAt)).get("query");
    if (text) {
      try {
        checkNesting(text);
      } catch (error) {
        const { message, extensions } = error as GraphQLError;
        return sendError(res, 400, message, ErrorCode.BAD_USER_INPUT, extensions);
      }
    }
    // Kept: a prerendered answer's bytes wait for the handler under its request (requestOf).
    let context: RequestContext | undefined;
    const response = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: req.method ?? "GET", headers, search: queryAt < 0 ? "" : url.slice(queryAt), body },
      context: async () => (context = contextFor(req, auth.principal)),
    });
    for (const [key, value] of response.headers) res.setHeader(key, value);
    res.statusCode = response.status ?? 200;
    if (response.body.kind === "complete") {
      // A large answer's bytes, written once by the serialiser, or Apollo's text.
      res.end(prerendered?.take(response.body.string, context && requestOf(context)) ?? response.body.string);
      return;
    }
    for await (const chunk of response.body.asyncIterator) res.write(chunk);
    res.end();
  }
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

type BodyRead = { text: string } | { status: number; error: string };

function readBody(req: IncomingMessage): Promise<BodyRead> {
  return new Promise((resolve) => {
    const declared = Number(req.headers["content-length"]);
    if (declared > MAX_BODY_BYTES) {
      req.resume();
      return resolve({ status: 413, error: `The request body is larger than ${MAX_BODY_BYTES} bytes` });
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.removeAllListeners("data");
        req.resume();
        resolve({ status: 413, error: `The request body is larger than ${MAX_BODY_BYTES} bytes` });
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      // Strict: a body that is not UTF-8 is refused, never read with U+FFFD in place of its bytes.
      try {
        resolve({ text: STRICT_UTF8.decode(Buffer.concat(chunks)) });
      } catch {
        resolve({ status: 400, error: "The request body is not valid UTF-8" });
      }
    });
    req.on("error", () => resolve({ status: 400, error: "The request body could not be read" }));
  });
}

/** Whether every percent-encoded part of a query string decodes to UTF-8 (URLSearchParams would put U+FFFD in its place). */
function percentEncodedUtf8(search: string): boolean {
  try {
    for (const part of search.split(/[&=]/)) decodeURIComponent(part.replaceAll("+", " "));
    return true;
  } catch {
    return false;
  }
}

/** A GraphQL-shaped error for failures before Apollo sees the request. */
function sendError(res: ServerResponse, status: number, message: string, code: ErrorCode = ErrorCode.BAD_USER_INPUT, extensions: Record<string, unknown> = {}): void {
  res.statusCode = status;
  res.setHeader("content-type", "application/json; charset=utf-8");
  res.end(JSON.stringify({ errors: [{ message, extensions: { ...extensions, code } }] }));
}
