import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client } from "graphql-ws";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from "jose";
import WebSocket from "ws";

/** One token per role; the operator's is written to the file as its SHA-256 only. */
export const TOKENS = {
  viewer: "viewer-token-7f3a9c2e51d04b68",
  operator: "operator-token-0b5d8e1f6a9c3d27",
  admin: "admin-token-93e0c4a7b1f85d62",
};

export const sha256Hex = (token: string) => createHash("sha256").update(token).digest("hex");

/** The tokens file of the tests: viewer and admin as plain tokens, operator as sha256. */
export const TOKEN_ENTRIES = [
  { subject: "vera", role: "viewer", token: TOKENS.viewer },
  { subject: "otto", role: "operator", sha256: sha256Hex(TOKENS.operator) },
  { subject: "ada", role: "admin", token: TOKENS.admin },
];

/** A tokens file in a fresh directory; `write` replaces its content. */
export function tokensFile(entries: unknown = TOKEN_ENTRIES): { path: string; write(entries: unknown): void; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "ni-tokens-"));
  const path = join(dir, "tokens.json");
  const write = (content: unknown) => writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content, null, 2));
  write(entries);
  return { path, write, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

export const wsUrl = (url: string) => url.replace(/^http/, "ws") + "/graphql";

/** What the server did with a raw graphql-transport-ws connection_init: acknowledged, or closed with a code. */
export type InitOutcome = { acked: true; socket: WebSocket } | { acked: false; code: number; reason: string };

/** Opens a raw socket, sends connection_init with `payload` and reports the server's first answer. */
export async function init(url: string, payload?: Record<string, unknown>, headers: Record<string, string> = {}): Promise<InitOutcome> {
  const socket = new WebSocket(wsUrl(url), "graphql-transport-ws", { headers });
  await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
  return new Promise((resolve) => {
    socket.once("message", (data) => {
      const message = JSON.parse(String(data));
      if (message.type === "connection_ack") resolve({ acked: true, socket });
    });
    socket.once("close", (code, reason) => resolve({ acked: false, code, reason: String(reason) }));
    socket.send(JSON.stringify({ type: "connection_init", ...(payload ? { payload } : {}) }));
  });
}

/** A graphql-ws client that does not retry. */
export function wsClient(url: string, connectionParams?: Record<string, unknown>, options: { lazy?: boolean } = {}): Client {
  // A non-lazy client's closing error goes to console.error unless handled; tests watch "closed" instead.
  return createClient({ url: wsUrl(url), webSocketImpl: WebSocket, retryAttempts: 0, onNonLazyError: () => {}, ...options, ...(connectionParams ? { connectionParams } : {}) });
}

/** Runs one operation over graphql-ws: its last result, or what its error sink received (errors or a CloseEvent). */
export function runOverWs(client: Client, query: string, variables?: Record<string, unknown>): Promise<{ result?: any; error?: any }> {
  return new Promise((resolve) => {
    let last: unknown;
    client.subscribe({ query, ...(variables ? { variables } : {}) }, { next: (value) => (last = value), error: (error) => resolve({ error }), complete: () => resolve({ result: last }) });
  });
}

/** A local OpenID Connect issuer: a JWKS on node:http (port 0) and keys generated here. */
export interface TestIssuer {
  issuer: string;
  jwksUrl: string;
  /** How many times the JWKS was fetched. */
  fetches: number;
  /** Signs `claims` (iss, aud, exp filled in unless given) with the key `kid` (the first by default). */
  sign(claims?: JWTPayload, options?: { kid?: string; key?: CryptoKey; alg?: string }): Promise<string>;
  /** A new key; published in the JWKS only when `publish` is true. */
  addKey(kid: string, publish: boolean): Promise<{ privateKey: CryptoKey }>;
  publish(kid: string): void;
  /** While down, the JWKS answers 500. */
  down: boolean;
  stop(): Promise<void>;
}

export const AUDIENCE = "node-inventory";

export async function startIssuer(): Promise<TestIssuer> {
  const keys = new Map<string, { privateKey: CryptoKey; jwk: JWK; alg: string; published: boolean }>();
  const addKey = async (kid: string, publish: boolean, alg = "RS256") => {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    keys.set(kid, { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: "sig" }, alg, published: publish });
    return { privateKey };
  };
  await addKey("rsa-1", true);
  await addKey("ec-1", true, "ES256");
  const issuerState = {
    fetches: 0,
    down: false,
  };
  const server: Server = createServer((req, res) => {
    issuerState.fetches++;
    if (issuerState.down || req.url !== "/jwks") {
      res.statusCode = issuerState.down ? 500 : 404;
      return res.end();
    }
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ keys: [...keys.values()].filter((k) => k.published).map((k) => k.jwk) }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${base}/realms/test`;
  return Object.assign(issuerState, {
    issuer,
    jwksUrl: `${base}/jwks`,
    async sign(claims: JWTPayload = {}, options: { kid?: string; key?: CryptoKey; alg?: string } = {}) {
      const kid = options.kid ?? "rsa-1";
      const known = keys.get(kid);
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: issuer, aud: AUDIENCE, sub: "someone", iat: now, exp: now + 300, ...claims })
        .setProtectedHeader({ alg: options.alg ?? known?.alg ?? "RS256", kid })
        .sign(options.key ?? known!.privateKey);
    },
    addKey: (kid: string, publish: boolean) => addKey(kid, publish),
    publish(kid: string) {
      keys.get(kid)!.published = true;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
