import type { Logger } from "../log/logger.js";

/** What a caller may do: viewer reads and subscribes; operator also changes nodes; admin everything. */
export type Role = "viewer" | "operator" | "admin";

/** The authenticated caller of one request or WebSocket connection. */
export interface Principal {
  /** Who: the token's subject or the JWT's subject claim; recorded as the actor of what they do. */
  subject: string;
  role: Role;
  /** How they proved it; "loopback" is the local admin of a server without auth configured. */
  via: "token" | "oidc" | "loopback";
}

/** Built fresh for every request or subscription operation; never shared between them. */
export interface RequestContext {
  requestId: string;
  logger: Logger;
  /** Per-request DataLoaders, made on first use by {@link loaderFor}. */
  loaders: Map<string, unknown>;
  /**
   * The authenticated caller (the local admin on a server without authentication): set for
   * every operation the server runs; undefined only in contexts tests build by hand.
   */
  principal?: Principal;
  /** The operation's cost as measured before it ran (operation-limits.ts), for Query.rateLimit. */
  operationCost?: number;
  /** For operations over a WebSocket: closes that connection (a subscriber fallen too far behind). */
  closeConnection?: (code: number, reason: string) => void;
}

/**
 * An object that stands for the request, however Apollo copies its context (it runs each
 * operation on a shallow copy of the context value): the request's own loaders map.
 */
export function requestOf(context: RequestContext): object {
  return context.loaders;
}

/**
 * The request's loader named `name`, made by `make` the first time it is asked for. One
 * loader per request (DataLoader's rule): batching within the request, no cache across them.
 */
export function loaderFor<T>(context: RequestContext, name: string, make: () => T): T {
  let loader = context.loaders.get(name) as T | undefined;
  if (loader === undefined) context.loaders.set(name, (loader = make()));
  return loader;
}

/** The same caller's context with loaders of its own: one subscription event is one request. */
export function withFreshLoaders(context: RequestContext): RequestContext {
  return { ...context, loaders: new Map() };
}
