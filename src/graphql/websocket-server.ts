import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { getOperationAST, GraphQLError, NoSchemaIntrospectionCustomRule, parse, specifiedRules, validate, type GraphQLFormattedError, type GraphQLSchema, type ParseOptions } from "graphql";
import { handleProtocols, makeServer } from "graphql-ws";
import { WebSocketServer, type WebSocket } from "ws";
import type { Logger } from "../log/logger.js";
import type { AuditDone, Authentication, OperationPolicy, Principal } from "./caller.js";
import { CloseCode } from "./close-codes.js";
import type { RequestContext } from "./context.js";
import { AppError, ErrorCode } from "./errors.js";
import { checkNesting } from "./operation-limits.js";

const REFUSAL_CLOSE = {
  [ErrorCode.UNAUTHENTICATED]: CloseCode.Unauthorized,
  [ErrorCode.FORBIDDEN]: CloseCode.Forbidden,
  [ErrorCode.UNAVAILABLE]: CloseCode.TryAgainLater,
} as const;

/** What each connection carries beside the protocol's own state (graphql-ws wants a record). */
interface Extra {
  request: IncomingMessage;
  socket: WebSocket;
  [key: string]: unknown;
}

export interface GraphqlWebSocketOptions {
  httpServer: Server;
  path: string;
  schema: GraphQLSchema;
  logger: Logger;
  /** Who the connection is, from its upgrade request and `connection_init` payload; asked again for every operation. */
  authenticate(request: IncomingMessage, connectionParams: Record<string, unknown> | undefined): Promise<Authentication>;
  contextFor(request: IncomingMessage, principal: Principal): RequestContext;
  /** Roles, limits and audit of each operation, as over HTTP. */
  policy: OperationPolicy;
  /** Subscribes to changes of the accepted credentials (a tokens file re-read); returns how to stop. */
  credentialsChanged?(listener: () => void): () => void;
  parseOptions?: ParseOptions;
  /** False refuses introspection, as HTTP does (`--introspection false`). */
  introspection?: boolean;
  formatError(error: GraphQLError): GraphQLFormattedError;
  /** Interval of WebSocket pings; a peer that misses a pong for as long is dropped. */
  keepAliveMs?: number;
  maxPayloadBytes?: number;
  /** Sees each operation's outcome (errors as sent) and seconds from subscribe to result; a subscription's at its start. */
  observe?(operation: { name: string | null | undefined; type: string | undefined }, errors: readonly GraphQLFormattedError[] | undefined, seconds: number | undefined): void;
}

export interface GraphqlWebSocketEndpoint {
  connectionCount(): number;
  /** Closes every connection with 1001 and stops accepting new ones. Idempotent. */
  close(): Promise<void>;
}

/**
 * graphql-ws on the HTTP server's `path`. The protocol is graphql-ws's own `makeServer`;
 * this file is only the thin adapter between it and the `ws` library, so that errors are
 * logged through our logger and every error payload goes through our one formatter.
 */
export function attachGraphqlWebSocket(options: GraphqlWebSocketOptions): GraphqlWebSocketEndpoint {
  const { httpServer, path, schema, logger, keepAliveMs = 12_000 } = options;
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayloadBytes ?? 1024 * 1024, handleProtocols });

  /** Audit lines of mutations, finished when their result is known. */
  const audits = new WeakMap<object, AuditDone>();
  /** When each operation was subscribed, by its context, for `observe`. */
  const began = new WeakMap<object, { at: number; name: string | null | undefined; type: string }>();

  /** Acknowledged connections and what they authenticated with, checked again when credentials change. */
  const authenticated = new Map<WebSocket, { request: IncomingMessage; connectionParams: Record<string, unknown> | undefined }>();

  /** Closes with 4401, 4403 or 1013 (graphql-ws clients know the first two) and the caller's message. */
  const refuse = (socket: WebSocket, auth: Extract<Authentication, { ok: false }>) => {
    socket.close(REFUSAL_CLOSE[auth.code], truncateUtf8(auth.message, 123));
  };

  const protocol = makeServer<Record<string, unknown> | undefined, Extra>({
    schema,
    onConnect: async (ctx) => {
      const { request, socket } = ctx.extra;
      const auth = await options.authenticate(request, ctx.connectionParams);
      if (!auth.ok) {
        refuse(socket, auth);
        // graphql-ws then closes with 4403 itself, which ws ignores: the socket is closing.
        return false;
      }
      authenticated.set(socket, { request, connectionParams: ctx.connectionParams });
      socket.once("close", () => authenticated.delete(socket));
      if (auth.expiresAt !== undefined) {
        // A connection lives no longer than the token it was opened with.
        const expiry = setTimeout(() => socket.close(CloseCode.Unauthorized, "The token has expired"), Math.max(0, auth.expiresAt - Date.now()));
        expiry.unref();
        socket.once("close", () => clearTimeout(expiry));
      }
      return true;
    },
    onSubscribe: async (ctx, _id, payload) => {
      const { request, socket } = ctx.extra;
      // Asked again per operation, so a token taken out of the tokens file stops working here too.
      const auth = await options.authenticate(request, ctx.connectionParams);
      if (!auth.ok) {
        refuse(socket, auth);
        return [new AppError(auth.code, auth.message)];
      }
      let document;
      try {
        checkNesting(payload.query);
        document = parse(payload.query, options.parseOptions);
      } catch (error) {
        return [error instanceof GraphQLError ? error : new GraphQLError(String(error))];
      }
      const invalid = validate(schema, document, options.introspection === false ? [...specifiedRules, NoSchemaIntrospectionCustomRule] : undefined);
      if (invalid.length > 0) return invalid;
      const operation = getOperationAST(document, payload.operationName);
      if (!operation) return [new GraphQLError("Unable to identify the operation: name it with operationName")];
      // One context per operation: DataLoaders must not outlive a single subscription event stream.
      const context: RequestContext = {
        ...options.contextFor(request, auth.principal),
        closeConnection: (code, reason) => socket.close(code, reason),
      };
      began.set(context, { at: performance.now(), name: payload.operationName ?? operation.name?.value, type: operation.operation });
      try {
        const audit = await options.policy.admit({ context, schema, document, operation, variables: payload.variables ?? undefined, transport: "websocket" });
        if (audit) audits.set(context, audit);
      } catch (error) {
        if (error instanceof GraphQLError) return [error];
        throw error;
      }
      return {
        schema,
        document,
        operationName: payload.operationName ?? null,
        variableValues: payload.variables ?? null,
        contextValue: context,
      };
    },
    onOperation: async (_ctx, _id, _payload, args, result) => {
      // Only mutations have an audit line, and their result is never a stream.
      const audit = audits.get(args.contextValue as object);
      const start = began.get(args.contextValue as object);
      if (!audit && !(start && options.observe)) return;
      const settled = await result;
      const stream = Symbol.asyncIterator in settled;
      if (audit && !stream) audit(settled.errors);
      if (start) options.observe?.(start, stream ? undefined : settled.errors?.map(options.formatError), (performance.now() - start.at) / 1000);
    },
    onError: (_ctx, _id, payload, errors) => {
      const formatted = errors.map(options.formatError);
      options.observe?.({ name: payload.operationName, type: undefined }, formatted, undefined);
      return formatted;
    },
    onNext: (_ctx, _id, _payload, _args, result) =>
      result.errors ? { ...result, errors: result.errors.map(options.formatError) } : undefined,
  });

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (new URL(request.url ?? "/", "http://localhost").pathname !== path) {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit("connection", ws, request));
  };
  httpServer.on("upgrade", onUpgrade);

  wss.on("connection", (socket: WebSocket, request: IncomingMessage) => {
    let alive = true;
    socket.on("pong", () => (alive = true));
    const ping = setInterval(() => {
      if (!alive) return socket.terminate();
      alive = false;
      socket.ping();
    }, keepAliveMs);
    ping.unref();

    const closed = protocol.opened(
      {
        protocol: socket.protocol,
        send: (data) =>
          new Promise<void>((resolve, reject) => {
            if (socket.readyState !== socket.OPEN) return resolve();
            socket.send(data, (err) => (err ? reject(err) : resolve()));
          }),
        close: (code, reason) => socket.close(code, reason),
        onMessage: (handle) =>
          socket.on("message", async (data) => {
            try {
              await handle(String(data));
            } catch (error) {
              logger.error({ err: error }, "graphql-ws message handling failed");
              socket.close(CloseCode.InternalServerError, "Internal server error");
            }
          }),
      },
      { request, socket } satisfies Extra,
    );
    socket.on("error", (error) => logger.warn({ err: error }, "WebSocket error"));
    socket.once("close", (code, reason) => {
      clearInterval(ping);
      void closed(code, String(reason));
    });
  });

  // A token taken out of the tokens file ends its connections at once, subscriptions included,
  // rather than at their next operation (which a long-lived subscription may never send).
  const stopWatchingCredentials = options.credentialsChanged?.(() => {
    for (const [socket, { request, connectionParams }] of authenticated) {
      options.authenticate(request, connectionParams).then(
        (auth) => {
          if (!auth.ok && auth.code !== ErrorCode.UNAVAILABLE) refuse(socket, auth);
        },
        (error) => logger.error({ err: error }, "re-checking a connection's credentials failed"),
      );
    }
  });

  let closing: Promise<void> | undefined;
  return {
    connectionCount: () => wss.clients.size,
    close() {
      closing ??= new Promise<void>((resolve) => {
        stopWatchingCredentials?.();
        httpServer.off("upgrade", onUpgrade);
        for (const client of wss.clients) client.close(CloseCode.GoingAway, "Server shutting down");
        // A client that never answers the close handshake must not hold shutdown up.
        const force = setTimeout(() => wss.clients.forEach((c) => c.terminate()), 1_000);
        force.unref();
        wss.close(() => (clearTimeout(force), resolve()));
      });
      return closing;
    },
  };
}

/** `text` cut to at most `bytes` bytes of UTF-8 (a close reason may have 123). */
function truncateUtf8(text: string, bytes: number): string {
  let out = text;
  while (Buffer.byteLength(out) > bytes) out = out.slice(0, -1);
  return out;
}
