import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { type GraphQLError, type GraphQLFormattedError, type GraphQLSchema } from "graphql";
import { CloseCode, handleProtocols, makeServer } from "graphql-ws";
import { WebSocketServer, type WebSocket } from "ws";
import type { Logger } from "../log/logger.js";
import type { RequestContext } from "./context.js";

/** Close code for a server going away (RFC 6455), sent to every client on shutdown. */
export const GOING_AWAY = 1001;

export interface GraphqlWebSocketOptions {
  httpServer: Server;
  path: string;
  schema: GraphQLSchema;
  logger: Logger;
  contextFor(request: IncomingMessage): RequestContext;
  formatError(error: GraphQLError): GraphQLFormattedError;
  /** Interval of WebSocket pings; a peer that misses a pong for as long is dropped. */
  keepAliveMs?: number;
  maxPayloadBytes?: number;
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

  const protocol = makeServer<Record<string, unknown> | undefined, { request: IncomingMessage; socket: WebSocket }>({
    schema,
    context: (ctx) => {
      // One context per operation: DataLoaders must not outlive a single subscription event stream.
      const context: RequestContext = {
        ...options.contextFor(ctx.extra.request),
        closeConnection: (code, reason) => ctx.extra.socket.close(code, reason),
      };
      return context as unknown as Record<string, unknown>;
    },
    onError: (_ctx, _id, _payload, errors) => errors.map(options.formatError),
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
      { request, socket },
    );
    socket.on("error", (error) => logger.warn({ err: error }, "WebSocket error"));
    socket.once("close", (code, reason) => {
      clearInterval(ping);
      void closed(code, String(reason));
    });
  });

  let closing: Promise<void> | undefined;
  return {
    connectionCount: () => wss.clients.size,
    close() {
      closing ??= new Promise<void>((resolve) => {
        httpServer.off("upgrade", onUpgrade);
        for (const client of wss.clients) client.close(GOING_AWAY, "Server shutting down");
        // A client that never answers the close handshake must not hold shutdown up.
        const force = setTimeout(() => wss.clients.forEach((c) => c.terminate()), 1_000);
        force.unref();
        wss.close(() => (clearTimeout(force), resolve()));
      });
      return closing;
    },
  };
}
