/**
 * The fleet commands' client of a running node-inventory: where it is (--url, --token and
 * their environment variables, as `report` reads them), one GraphQL operation over HTTP, and
 * subscriptions over graphql-ws with the token in connection_init.
 */

import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { ConfigError } from "../config/config.js";

export const DEFAULT_SERVICE_URL = "http://127.0.0.1:4000";

/** The service failed or refused: one line (with the error code) on stderr, exit 1. */
export class ServiceError extends Error {
  override name = "ServiceError";
}

export interface ServiceTarget {
  /** The GraphQL endpoint, `…/graphql`. */
  endpoint: string;
  token?: string;
}

export interface GraphqlResult<T = Record<string, any>> {
  data?: T | null;
  errors?: readonly { message: string; extensions?: { code?: unknown } }[];
}

/** `url` checked as an http(s) URL, without trailing slashes. @throws ConfigError naming `flag`. */
export function serviceBase(url: string, flag: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`${flag}: not a URL (expected e.g. ${DEFAULT_SERVICE_URL})`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new ConfigError(`${flag}: use an http:// or https:// URL`);
  return url.replace(/\/+$/, "");
}

/** --url / NODE_INVENTORY_URL and --token / NODE_INVENTORY_TOKEN; flags win. @throws ConfigError for a URL that is none. */
export function serviceTarget(flags: { url?: string; token?: string }, env: NodeJS.ProcessEnv): ServiceTarget {
  const [url, flag] = flags.url !== undefined ? [flags.url, "--url"] : env.NODE_INVENTORY_URL ? [env.NODE_INVENTORY_URL, "NODE_INVENTORY_URL"] : [DEFAULT_SERVICE_URL, "--url"];
  const base = serviceBase(url, flag);
  const token = flags.token ?? (env.NODE_INVENTORY_TOKEN || undefined);
  return { endpoint: base.endsWith("/graphql") ? base : `${base}/graphql`, ...(token ? { token } : {}) };
}

/** The first error as one line with its code (and how many more there were). */
export function errorLine(errors: NonNullable<GraphqlResult["errors"]>): string {
  const first = errors[0]!;
  const code = typeof first.extensions?.code === "string" ? first.extensions.code : "ERROR";
  return `${code}: ${first.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ""}`;
}

/** Runs one operation over HTTP and returns its data. @throws ServiceError when unreachable or when the answer has errors. */
export async function request<T = Record<string, any>>(target: ServiceTarget, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const result = await post<T>(target, query, variables);
  if (result.errors?.length) throw new ServiceError(errorLine(result.errors));
  if (!result.data) throw new ServiceError(`node-inventory at ${target.endpoint} answered without data`);
  return result.data;
}

/** Runs one operation over HTTP and returns the GraphQL response as it is. @throws ServiceError when unreachable or when the answer is no GraphQL response. */
export async function post<T = Record<string, any>>(target: ServiceTarget, query: string, variables: Record<string, unknown> = {}): Promise<GraphqlResult<T>> {
  let response: Response;
  try {
    response = await fetch(target.endpoint, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/graphql-response+json, application/json",
        ...(target.token ? { authorization: `Bearer ${target.token}` } : {}),
      },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(120_000),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new ServiceError(`cannot reach node-inventory at ${target.endpoint}: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
  }
  const text = await response.text();
  try {
    return JSON.parse(text) as GraphqlResult<T>;
  } catch {
    throw new ServiceError(`node-inventory at ${target.endpoint} answered HTTP ${response.status} without a GraphQL response`);
  }
}

/**
 * Subscribes over graphql-ws and calls `next` with each event's data until the server
 * completes the subscription. @throws ServiceError when the connection or the operation fails.
 */
export async function subscribe<T = Record<string, any>>(target: ServiceTarget, query: string, variables: Record<string, unknown>, next: (data: T) => void): Promise<void> {
  const client = createClient({
    url: target.endpoint.replace(/^http/, "ws"),
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
    ...(target.token ? { connectionParams: { authorization: `Bearer ${target.token}` } } : {}),
  });
  try {
    await new Promise<void>((resolve, reject) => {
      client.subscribe<T>(
        { query, variables },
        {
          next: (result) => {
            if (result.errors?.length) reject(new ServiceError(errorLine(result.errors as GraphqlResult["errors"] & object)));
            else if (result.data) next(result.data as T);
          },
          error: (error) => {
            if (Array.isArray(error)) reject(new ServiceError(errorLine(error)));
            else if (error && typeof error === "object" && "code" in error && "reason" in error)
              reject(new ServiceError(`the subscription closed (${(error as CloseEvent).code}): ${(error as CloseEvent).reason}`));
            else reject(new ServiceError(`cannot follow the subscription at ${target.endpoint}: ${(error as Error)?.message ?? String(error)}`));
          },
          complete: resolve,
        },
      );
    });
  } finally {
    await client.dispose();
  }
}
