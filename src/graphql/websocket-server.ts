import type { IncomingMessage, Server } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { getOperationAST, GraphQLError, type DocumentNode, type ExecutionArgs, NoSchemaIntrospectionCustomRule, parse, specifiedRules, validate, type GraphQLFormattedError, type GraphQLSchema, type ParseOptions } from "graphql";
import { handleProtocols, makeServer, type Context, type SubscribePayload } from "graphql-ws";
import { WebSocketServer, type WebSocket } from "ws";
import type { Logger } from "../log/logger.js";
import type { AuditDone, Authentication, OperationPolicy, Principal } from "./caller.js";
import { CloseCode } from "./close-codes.js";
import { withFreshLoaders, type RequestContext } from "./context.js";
import { AppError, ErrorCode } from "./errors.js";
import { InFlightLimiter } from "./in-flight.js";
import { checkNesting } from "./operation-limits.js";
import { sharedEventSubscribe } from "./shared-event-execution.js";
import { NextMessages } from "./shared-next-message.js";
import { sendTextFrame, sendTextFrameNow } from "./websocket-text-frame.js";

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
  /** Bounds per caller (principal subject) and per connection; absent: unbounded. */
  limits?: WebSocketLimits;
  /** Operations running at once, shared with HTTP; absent: unbounded. */
  inFlight?: InFlightLimiter;
  /** Sees each operation's outcome (errors as sent) and seconds from subscribe to result; a subscription's at its start. */
  observe?(operation: { name: string | null | undefined; type: string | undefined }, errors: readonly GraphQLFormattedError[] | undefined, seconds: number | undefined): void;
}

/** How much of the server one caller may hold open over WebSocket. */
export interface WebSocketLimits {
  connectionsPerCaller: number;
  subscriptionsPerConnection: number;
  subscriptionsPerCaller: number;
}

/** Why a subscription was refused, in `extensions.reason`. */
export const TOO_MANY_SUBSCRIPTIONS = "TOO_MANY_SUBSCRIPTIONS";

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
  /**
   * Each subscription's sharing key, by its context: what its events' results depend on (the
   * document, operation and variables as sent, and who the caller is, so a result is never
   * shared across callers). Subscriptions with one key have each event executed once.
   */
  const sharingKeys = new WeakMap<object, string>();
  const validated = new ValidDocuments();
  /** Each result's payload serialised once, however many subscriptions it goes to. */
  const nextMessages = new NextMessages(options.formatError);
  /** Each subscription's id and connection, by its context, for results sent as soon as they are ready. */
  const destinations = new WeakMap<object, { id: string; socket: WebSocket; tcp: Socket }>();
  const subscribeShared = sharedEventSubscribe(
    (args) => sharingKeys.get(args.contextValue as object),
    (context) => withFreshLoaders(context as RequestContext),
  );

  /** Acknowledged connections and what they authenticated with, checked again when credentials change. */
  const authenticated = new Map<WebSocket, { request: IncomingMessage; connectionParams: Record<string, unknown> | undefined }>();

  /** What each caller holds open, and each connection's caller and live subscription ids. */
  const holdings = new Map<string, { connections: number; subscriptions: number }>();
  const connections = new WeakMap<WebSocket, { subject: string; subscriptions: Set<string>; running: Map<string, () => void> }>();
  const holding = (subject: string) => {
    let held = holdings.get(subject);
    if (!held) holdings.set(subject, (held = { connections: 0, subscriptions: 0 }));
    return held;
  };
  const release = (socket: WebSocket, id: string) => {
    const connection = connections.get(socket);
    if (!connection?.subscriptions.delete(id)) return;
    holding(connection.subject).subscriptions--;
  };

  /** Closes with 4401, 4403 or 1013 (graphql-ws clients know the first two) and the caller's message. */
  const refuse = (socket: WebSocket, auth: Extract<Authentication, { ok: false }>) => {
    socket.close(REFUSAL_CLOSE[auth.code], truncateUtf8(auth.message, 123));
  };

  const protocol = makeServer<Record<string, unknown> | undefined, Extra>({
    schema,
    subscribe: async (args) => {
      const results = await subscribeShared(args);
      const to = destinations.get(args.contextValue as object);
      // A shared result reaching an idle subscription is written at once, in the hub's turn: the
      // same text graphql-ws's next would send (its onNext is ours, payloadFor), without its loop's
      // promises per subscriber. A connection with data still waiting takes it through graphql-ws,
      // whose awaited send holds the rest in the subscription's bounded queue (the 1013 cut-off).
      if (to && Symbol.asyncIterator in results) results.deliverNow = (result) => sendTextFrameNow(to.socket, to.tcp, nextMessages.messageFor(to.id, result));
      return results;
    },
    onConnect: async (ctx) => {
      const { request, socket } = ctx.extra;
      const auth = await options.authenticate(request, ctx.connectionParams);
      if (!auth.ok) {
        refuse(socket, auth);
        // graphql-ws then closes with 4403 itself, which ws ignores: the socket is closing.
        return false;
      }
      const subject = auth.principal.subject;
      const held = holding(subject);
      const limits = options.limits;
      if (limits && held.connections >= limits.connectionsPerCaller) {
        logger.warn({ subject, connections: held.connections }, "WebSocket connection refused: too many for this caller");
        socket.close(CloseCode.TooManyConnections, truncateUtf8(`Too many WebSocket connections for this caller: at most ${limits.connectionsPerCaller}`, 123));
        return false;
      }
      held.connections++;
      connections.set(socket, { subject, subscriptions: new Set(), running: new Map() });
      authenticated.set(socket, { request, connectionParams: ctx.connectionParams });
      socket.once("close", () => {
        authenticated.delete(socket);
        const connection = connections.get(socket)!;
        for (const id of [...connection.subscriptions]) release(socket, id);
        for (const done of connection.running.values()) done();
        if (--held.connections === 0 && held.subscriptions === 0) holdings.delete(subject);
      });
      if (auth.expiresAt !== undefined) {
        // A connection lives no longer than the token it was opened with.
        const expiry = setTimeout(() => socket.close(CloseCode.Unauthorized, "The token has expired"), Math.max(0, auth.expiresAt - Date.now()));
        expiry.unref();
        socket.once("close", () => clearTimeout(expiry));
      }
      return true;
    },
    onSubscribe: async (ctx, id, payload) => {
      const { socket } = ctx.extra;
      // The in-flight bound first, before authenticating, parsing or validating: a connection
      // flooding subscribe frames must not queue its work ahead of every other caller.
      const open = connections.get(socket);
      if (open && options.inFlight) {
        const slot = options.inFlight.acquire(open.subject);
        if (slot instanceof AppError) return [slot];
        open.running.set(id, slot);
      }
      const done = () => {
        open?.running.get(id)?.();
        open?.running.delete(id);
      };
      try {
        const admitted = await admitOperation(ctx, id, payload);
        if (Array.isArray(admitted)) done();
        return admitted;
      } catch (error) {
        done();
        throw error;
      }
    },
    onOperation: async (_ctx, id, _payload, args, result) => {
      // The operation has run (a query's result is ready, a subscription's stream is set up): its slot is free.
      const connection = connections.get(_ctx.extra.socket);
      connection?.running.get(id)?.();
      connection?.running.delete(id);
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
    onComplete: (ctx, id) => release(ctx.extra.socket, id),
    onNext: (_ctx, id, _payload, _args, result) => nextMessages.payloadFor(id, result),
  });

  /** Authenticates, parses, validates and admits one operation: its execution arguments or the errors refusing it. */
  async function admitOperation(ctx: Context<Record<string, unknown> | undefined, Extra>, id: string, payload: SubscribePayload): Promise<ExecutionArgs | readonly GraphQLError[]> {
    const { request, socket } = ctx.extra;
    // Asked again per operation, so a token taken out of the tokens file stops working here too.
    const auth = await options.authenticate(request, ctx.connectionParams);
    if (!auth.ok) {
      refuse(socket, auth);
      return [new AppError(auth.code, auth.message)];
    }
    let document = validated.get(payload.query);
    if (!document) {
      try {
        checkNesting(payload.query);
        document = parse(payload.query, options.parseOptions);
      } catch (error) {
        if (!(error instanceof GraphQLError)) return [new GraphQLError(String(error))];
        // checkNesting's refusal carries its own code; the parser's errors carry none.
        return [error.extensions["code"] ? error : withCode(error, ErrorCode.GRAPHQL_PARSE_FAILED)];
      }
      const invalid = validate(schema, document, options.introspection === false ? [...specifiedRules, NoSchemaIntrospectionCustomRule] : undefined);
      if (invalid.length > 0) return invalid.map((error) => withCode(error, ErrorCode.GRAPHQL_VALIDATION_FAILED));
      validated.add(payload.query, document);
    }
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
    const connection = connections.get(socket);
    if (operation.operation === "subscription" && connection) {
      const refused = subscriptionRefusal(connection.subscriptions.size, holding(connection.subject).subscriptions, options.limits);
      if (refused) return [refused];
      connection.subscriptions.add(id);
      holding(connection.subject).subscriptions++;
      const { subject, role, via } = auth.principal;
      sharingKeys.set(context, JSON.stringify([payload.query, payload.operationName ?? null, payload.variables ?? null, subject, role, via]));
      destinations.set(context, { id, socket, tcp: request.socket });
    }
    return {
      schema,
      document,
      operationName: payload.operationName ?? null,
      variableValues: payload.variables ?? null,
      contextValue: context,
    };
  }

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
        send: (data) => {
          // Taken at once: graphql-ws serialised a next message's placeholder just before this call.
          const text = nextMessages.take(data);
          return new Promise<void>((resolve, reject) => {
            if (socket.readyState !== socket.OPEN) return resolve();
            sendTextFrame(socket, request.socket, text, (err) => (err ? reject(err) : resolve()));
          });
        },
        close: (code, reason) => socket.close(code, reason),
        onMessage: (handle) => {
          const inbox = new Inbox(socket, async (text) => {
            try {
              await handle(text);
            } catch (error) {
              logger.error({ err: error }, "graphql-ws message handling failed");
              socket.close(CloseCode.InternalServerError, "Internal server error");
            }
          });
          socket.on("message", (data) => inbox.push(String(data)));
        },
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

/** Messages one connection gets handled per turn of the event loop. */
const MESSAGES_PER_TURN = 32;
/** Messages waiting beyond which the connection stops reading until they are handled. */
const INBOX_HIGH_WATER = 1_024;

/**
 * A connection's received messages, handed on in order, at most {@link MESSAGES_PER_TURN} per
 * turn of the event loop. A client that sends thousands of frames at once (they arrive in one
 * read, and each is cheap to refuse) would otherwise have them all handled in one go, ahead
 * of every HTTP request and every other connection; past the high water mark the socket is
 * paused, so what waits stays bounded.
 */
class Inbox {
  private readonly waiting: string[] = [];
  private next = 0;
  private scheduled = false;

  constructor(
    private readonly socket: WebSocket,
    private readonly handle: (text: string) => Promise<void>,
  ) {}

  push(text: string): void {
    this.waiting.push(text);
    if (this.waiting.length - this.next > INBOX_HIGH_WATER && !this.socket.isPaused) this.socket.pause();
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
  }

  private drain(): void {
    for (let i = 0; i < MESSAGES_PER_TURN && this.next < this.waiting.length; i++) void this.handle(this.waiting[this.next++]!);
    if (this.next < this.waiting.length) {
      setImmediate(() => this.drain());
      return;
    }
    this.waiting.length = 0;
    this.next = 0;
    this.scheduled = false;
    if (this.socket.isPaused) this.socket.resume();
  }
}

/** A request error of graphql-js with the code Apollo Server gives the same error over HTTP. */
function withCode(error: GraphQLError, code: ErrorCode): GraphQLError {
  return new GraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, extensions: { ...error.extensions, code } });
}

/** The refusal of one more subscription, when the connection or its caller holds as many as allowed. */
function subscriptionRefusal(onConnection: number, ofCaller: number, limits: WebSocketLimits | undefined): AppError | undefined {
  if (!limits) return undefined;
  if (onConnection >= limits.subscriptionsPerConnection) {
    return new AppError(ErrorCode.FORBIDDEN, `Too many subscriptions on this connection: at most ${limits.subscriptionsPerConnection}; complete one first`, {
      reason: TOO_MANY_SUBSCRIPTIONS,
      max: limits.subscriptionsPerConnection,
    });
  }
  if (ofCaller >= limits.subscriptionsPerCaller) {
    return new AppError(ErrorCode.FORBIDDEN, `Too many subscriptions for this caller: at most ${limits.subscriptionsPerCaller} across its connections; complete one first`, {
      reason: TOO_MANY_SUBSCRIPTIONS,
      max: limits.subscriptionsPerCaller,
    });
  }
  return undefined;
}

/** `text` cut to at most `bytes` bytes of UTF-8 (a close reason may have 123). */
function truncateUtf8(text: string, bytes: number): string {
  let out = text;
  while (Buffer.byteLength(out) > bytes) out = out.slice(0, -1);
  return out;
}

/**
 * Documents that parsed and validated, by their text: thousands of wallboard clients subscribe
 * with the same few documents, and reconnecting all at once (a replica restarted) each parsed
 * and validated the same one again, about a fifth of their subscribe work. Validation depends
 * only on the text and this server's schema and rules, so its success can be kept; failures
 * are not kept, and the operation's cost and authorisation are still checked every time. An
 * LRU of a few hundred short documents (HTTP has Apollo's own document cache).
 */
class ValidDocuments {
  private readonly documents = new Map<string, DocumentNode>();

  constructor(
    private readonly capacity = 200,
    private readonly maxLength = 16_384,
  ) {}

  get(text: string): DocumentNode | undefined {
    const document = this.documents.get(text);
    if (document) {
      this.documents.delete(text);
      this.documents.set(text, document);
    }
    return document;
  }

  add(text: string, document: DocumentNode): void {
    if (text.length > this.maxLength) return;
    this.documents.set(text, document);
    if (this.documents.size > this.capacity) this.documents.delete(this.documents.keys().next().value!);
  }
}
