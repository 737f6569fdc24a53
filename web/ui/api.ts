// The UI's only link to the service: GraphQL over HTTP (fetch, for queries and mutations)
// and over graphql-ws (for subscriptions), both to this page's own origin, with the
// caller's token on both when there is one.
import { createClient, type Client } from "graphql-ws/client";
import { getToken } from "./auth";

/** A GraphQL error as the service sends it: the message and its `extensions.code`. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly status?: number,
  ) {
    super(message);
  }
}

const HTTP_URL = `${location.origin}/graphql`;
const WS_URL = `${location.origin.replace(/^http/, "ws")}/graphql`;

function authorization(): Record<string, string> {
  const token = getToken();
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** Runs a query or mutation over HTTP; resolves with `data`, or throws the first error. */
export async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const response = await fetch(HTTP_URL, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/graphql-response+json, application/json", ...authorization() },
    body: JSON.stringify({ query, variables }),
  });
  let body: { data?: T; errors?: { message: string; extensions?: { code?: string } }[] };
  try {
    body = await response.json();
  } catch {
    throw new ApiError(`the service answered ${response.status}`, response.status === 401 ? "UNAUTHENTICATED" : undefined, response.status);
  }
  const first = body.errors?.[0];
  if (first) throw new ApiError(first.message, first.extensions?.code, response.status);
  if (!body.data) throw new ApiError(`the service answered ${response.status} without data`, undefined, response.status);
  return body.data;
}

let client: Client | undefined;
let connection: Promise<void> = new Promise(() => {});
const reconnectListeners = new Set<() => void>();

/** One graphql-ws connection for the page, opened on first use; re-opened with a new token. */
function ws(): Client {
  if (!client) {
    let connectedBefore = false;
    let acknowledged = () => {};
    connection = new Promise((resolve) => (acknowledged = resolve));
    client = createClient({
      url: WS_URL,
      // Read at every (re)connection, so a token typed in later is the one sent.
      connectionParams: () => authorization(),
      retryAttempts: Infinity,
      // 4401/4403: the credentials are wrong; retrying with the same ones cannot help.
      shouldRetry: (event) => !(event && typeof event === "object" && "code" in event && (event.code === 4401 || event.code === 4403)),
      on: {
        connected: () => {
          // Events were missed while disconnected: whoever shows live data reloads it.
          if (connectedBefore) for (const listener of reconnectListeners) listener();
          connectedBefore = true;
          acknowledged();
        },
      },
    });
  }
  return client;
}

/**
 * Resolves once the service acknowledged the connection: subscriptions asked for before are
 * on their way, so a snapshot loaded after this misses no change in between.
 */
export function connected(): Promise<void> {
  ws();
  return connection;
}

/** Closes the connection (a new token, or signing out); the next subscription opens another. */
export function resetConnection(): void {
  const old = client;
  client = undefined;
  void old?.dispose();
}

/** Calls `listener` after the connection was lost and made again (events may have been missed). */
export function onReconnect(listener: () => void): () => void {
  reconnectListeners.add(listener);
  return () => reconnectListeners.delete(listener);
}

/** Subscribes over graphql-ws; returns the function that stops it. */
export function subscribe<T>(query: string, variables: Record<string, unknown>, next: (data: T) => void, error?: (error: ApiError) => void, complete?: () => void): () => void {
  return ws().subscribe<T>(
    { query, variables },
    {
      next: (result) => {
        const first = result.errors?.[0];
        if (first) error?.(new ApiError(first.message, (first.extensions as { code?: string } | undefined)?.code));
        else if (result.data) next(result.data as T);
      },
      error: (cause) => error?.(toApiError(cause)),
      complete: () => complete?.(),
    },
  );
}

function toApiError(cause: unknown): ApiError {
  if (Array.isArray(cause)) return new ApiError(cause[0]?.message ?? "subscription failed", cause[0]?.extensions?.code);
  if (cause && typeof cause === "object" && "code" in cause) {
    const code = (cause as CloseEvent).code;
    return new ApiError(
      `the connection closed (${code}${(cause as CloseEvent).reason ? `: ${(cause as CloseEvent).reason}` : ""})`,
      code === 4401 ? "UNAUTHENTICATED" : code === 4403 ? "FORBIDDEN" : undefined,
    );
  }
  return new ApiError(cause instanceof Error ? cause.message : String(cause), undefined);
}
