/**
 * Request guards, the first step of the handler chain. The simulator has no
 * authentication (it is the demo cluster, on the machine of whoever runs it),
 * so what keeps a web page in a browser on that machine from driving it is
 * here, in the order they are checked:
 *
 * - Host must name this server (a loopback name or address, or the address it
 *   was told to listen on): a page on evil.example whose name was rebound to
 *   127.0.0.1 sends `Host: evil.example`. 403 Forbidden.
 * - A browser's Origin must be this server's own. 403 Forbidden.
 * - A request with a body must say it is JSON or Kubernetes protobuf (a PATCH:
 *   one of the patch types), none of which a page may send without asking first:
 *   the body types a page may send cross-site without asking first are
 *   text/plain, form data, or none at all. 415 Unsupported Media Type.
 *
 * The real kube-apiserver needs none of this (every request authenticates, by
 * bearer token or client certificate, which a browser does not attach on its
 * own) and answers a disallowed Origin by leaving out the CORS headers; it
 * also takes a body without Content-Type as JSON. The statuses and Status
 * bodies are the apiserver's own for a refusal (403) and a body it cannot read
 * (415). Authentication and authorization, when the simulator gets them, go
 * after these guards.
 */
import type { IncomingHttpHeaders } from "node:http";
import { isIP } from "node:net";
import { forbidden, unsupportedMediaType, type ApiError } from "./status.js";
import { PATCH_MEDIA_TYPES } from "./patch.js";
import { PROTOBUF } from "./protobuf.js";

/** The body types a write (other than PATCH) may have: JSON, and protobuf for the kinds ./protobuf.ts knows. */
const WRITE_MEDIA_TYPES = ["application/json", PROTOBUF];

export interface GuardedRequest {
  method: string;
  headers: IncomingHttpHeaders;
  /** Bytes in the body. */
  bodyLength: number;
}

/** Who the server is: what it listens on and how it is reached. */
export interface ServerIdentity {
  /** The address it was told to listen on (127.0.0.1, ::1, 0.0.0.0, 10.1.2.3, a name ...). */
  listenHost: string;
  scheme: "http" | "https";
}

/** The host part of a Host header value ("[::1]:443" -> "::1", "Example:80" -> "example"). */
export function hostName(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith("[")) return h.slice(1, h.indexOf("]") > 0 ? h.indexOf("]") : undefined);
  const colon = h.lastIndexOf(":");
  return colon >= 0 && h.indexOf(":") === colon ? h.slice(0, colon) : h;
}

function isLoopback(name: string): boolean {
  if (name === "localhost" || name === "::1") return true;
  const v4 = name.startsWith("::ffff:") ? name.slice("::ffff:".length) : name;
  return isIP(v4) === 4 && v4.startsWith("127.");
}

const WILDCARDS = ["0.0.0.0", "::", ""];

/**
 * Whether a Host header names this server: loopback always (it listens there
 * or on every address); the address it was told to listen on; and, listening
 * on every address, any IP address (an address literal cannot be rebound).
 */
export function isOwnHost(host: string | undefined, server: ServerIdentity): boolean {
  if (!host) return false;
  const name = hostName(host);
  if (isLoopback(name)) return true;
  const listen = hostName(server.listenHost.includes(":") && !server.listenHost.startsWith("[") ? `[${server.listenHost}]` : server.listenHost);
  if (WILDCARDS.includes(listen)) return isIP(name) !== 0;
  return name === listen;
}

/** The media type of a Content-Type value, without parameters ("application/json; charset=utf-8" -> "application/json"). */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase();
}

/** Why the request is refused before routing, or undefined when it may go on. */
export function refusal(req: GuardedRequest, server: ServerIdentity): ApiError | undefined {
  const host = req.headers.host;
  if (!isOwnHost(host, server)) {
    return forbidden(`forbidden: the simulated cluster answers only requests addressed to itself, and Host ${JSON.stringify(host ?? "")} is not its address`);
  }
  const origin = req.headers.origin;
  if (origin !== undefined && origin.toLowerCase() !== `${server.scheme}://${host!.toLowerCase()}`) {
    return forbidden(`forbidden: the simulated cluster answers no page of another origin, and Origin ${JSON.stringify(origin)} is not its own`);
  }
  const method = req.method.toUpperCase();
  // A connection upgrade (port-forward, exec) carries no body; a page cannot send Upgrade.
  const upgrade = req.headers.upgrade !== undefined && req.bodyLength === 0;
  const hasBody = !upgrade && (method === "POST" || method === "PUT" || method === "PATCH" || req.bodyLength > 0);
  if (hasBody) {
    const accepted = method === "PATCH" ? PATCH_MEDIA_TYPES : WRITE_MEDIA_TYPES;
    if (!accepted.includes(mediaType(req.headers["content-type"]))) return unsupportedMediaType(accepted);
  }
  return undefined;
}
