import type { IncomingMessage } from "node:http";
import { ConfigError, type AuthConfig } from "../config/config.js";
import type { Authentication } from "../graphql/caller.js";
import { ErrorCode } from "../graphql/errors.js";
import type { Logger } from "../log/logger.js";
import { hostOfAuthority, isLoopbackHost } from "./loopback.js";
import { looksLikeJwt, OidcVerifier } from "./oidc-verifier.js";
import type { Principal } from "./principal.js";
import { TokenStore } from "./tokens-file.js";

/** The caller of a server without authentication configured, on its own machine. */
export const LOCAL_ADMIN: Principal = Object.freeze({ subject: "local-admin", role: "admin", via: "loopback" });

export type { Authentication } from "../graphql/caller.js";

/** What a request or connection brings to prove who it is. */
export interface Credentials {
  transport: "http" | "websocket";
  requestId: string;
  /** The bearer token, if one was sent. */
  token: string | undefined;
  /** The peer's address and the Host and Origin headers: the loopback rule looks at all three. */
  remoteAddress: string | undefined;
  host: string | undefined;
  origin: string | undefined;
}

/** Timings tests shorten. */
export interface AuthTuning {
  /** How often the tokens file is checked for changes (2 s). */
  tokensFilePollMs?: number;
  /** The least time between two JWKS fetches for unknown key ids (30 s). */
  jwksCooldownMs?: number;
}

export interface Authenticator {
  /** True when tokens or OIDC are configured; false: loopback callers are the local admin. */
  readonly configured: boolean;
  /** Checks what it can before serving (the tokens file: ConfigError if bad) and starts watching it. */
  start(host: string): void;
  stop(): void;
  authenticate(credentials: Credentials): Promise<Authentication>;
  /** Calls `listener` when the accepted credentials change (the tokens file re-read); returns how to stop. */
  onCredentialsChanged(listener: () => void): () => void;
}

const UNAUTHENTICATED = (message: string, presented: boolean): Authentication => ({ ok: false, code: ErrorCode.UNAUTHENTICATED, message, presented });

/** Builds the authenticator `config` describes; failures are logged (at info or warn, never with a token). */
export function createAuthenticator(config: AuthConfig, logger: Logger, tuning: AuthTuning = {}): Authenticator {
  const tokens = config.tokensFile !== undefined ? new TokenStore(config.tokensFile, logger.child({ component: "auth" }), tuning.tokensFilePollMs) : undefined;
  const oidc = config.oidc ? new OidcVerifier(config.oidc, tuning.jwksCooldownMs !== undefined ? { cooldownMs: tuning.jwksCooldownMs } : {}) : undefined;
  const configured = tokens !== undefined || oidc !== undefined;

  async function decide(c: Credentials): Promise<Authentication & { reason?: string }> {
    if (!configured) {
      if (isLocal(c)) return { ok: true, principal: LOCAL_ADMIN };
      return { ...UNAUTHENTICATED("This server has no authentication configured and serves only callers on its own machine", false), reason: "not a local caller" };
    }
    if (c.token === undefined || c.token === "") {
      return { ...UNAUTHENTICATED("Authentication required: send a bearer token", false), reason: "no credentials" };
    }
    const entry = tokens?.lookup(c.token);
    if (entry) return { ok: true, principal: { subject: entry.subject, role: entry.role, via: "token" } };
    if (!oidc || !looksLikeJwt(c.token)) return { ...UNAUTHENTICATED("The token is not valid", true), reason: "unknown token" };
    const verified = await oidc.verify(c.token);
    if (!verified.ok) {
      return verified.unavailable
        ? { ok: false, code: ErrorCode.UNAVAILABLE, message: "Tokens cannot be checked right now; try again shortly", presented: true, reason: verified.reason }
        : { ...UNAUTHENTICATED(verified.reason === "token expired" ? "The token has expired" : "The token is not valid", true), reason: verified.reason };
    }
    if (!verified.role) {
      return { ok: false, code: ErrorCode.FORBIDDEN, message: `${verified.subject} has no role in this service`, presented: true, reason: `no known role in claim "${config.oidc!.rolesClaim}"` };
    }
    return { ok: true, principal: { subject: verified.subject, role: verified.role, via: "oidc" }, expiresAt: verified.expiresAt };
  }

  return {
    configured,
    start(host) {
      if (!configured && !isLoopbackHost(host)) {
        throw new ConfigError(`--host/HOST "${host}" is not a loopback address, and no authentication is configured: set --auth-tokens-file or the --oidc-* settings, or listen on 127.0.0.1`);
      }
      tokens?.start();
      if (!configured) {
        logger.warn("no authentication configured: callers on this machine are the local admin, and the service listens only on loopback");
      }
    },
    stop() {
      tokens?.stop();
    },
    onCredentialsChanged(listener) {
      return tokens ? tokens.onReload(listener) : () => {};
    },
    async authenticate(credentials) {
      const { reason, ...decision } = await decide(credentials);
      if (!decision.ok) {
        const level = decision.presented ? "warn" : "info";
        logger[level]({ requestId: credentials.requestId, transport: credentials.transport, remoteAddress: credentials.remoteAddress, code: decision.code, reason }, "authentication failed");
      }
      return decision;
    },
  };
}

/**
 * A local caller: the peer is on loopback, and the Host and Origin headers (when sent) name
 * loopback too, so a web page on another site cannot reach the local admin through the
 * user's browser (DNS rebinding, cross-site WebSockets).
 */
function isLocal(c: Credentials): boolean {
  if (c.remoteAddress === undefined || !isLoopbackHost(c.remoteAddress)) return false;
  if (c.host !== undefined && !isLoopbackHost(hostOfAuthority(c.host))) return false;
  if (c.origin === undefined) return true;
  try {
    return isLoopbackHost(new URL(c.origin).hostname);
  } catch {
    return false;
  }
}

/** The token of an `Authorization: Bearer …` value (scheme case-insensitive). */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer +(\S+) *$/i.exec(authorization ?? "");
  return match?.[1];
}

/** Credentials of an HTTP request (or a WebSocket upgrade, which carries no token here). */
export function credentialsOf(req: IncomingMessage, requestId: string, transport: Credentials["transport"], token: string | undefined): Credentials {
  return {
    transport,
    requestId,
    token,
    remoteAddress: req.socket.remoteAddress,
    host: req.headers.host,
    origin: typeof req.headers.origin === "string" ? req.headers.origin : undefined,
  };
}

/**
 * The token of a graphql-ws `connection_init` payload: `{ "authorization": "Bearer …" }` or
 * `{ "token": "…" }`; failing both, the upgrade request's own Authorization header.
 */
export function connectionToken(params: Record<string, unknown> | undefined, req: IncomingMessage): string | undefined {
  const authorization = params?.["authorization"] ?? params?.["Authorization"];
  if (typeof authorization === "string") return bearerToken(authorization) ?? "";
  if (typeof params?.["token"] === "string") return params["token"];
  return bearerToken(req.headers.authorization);
}
