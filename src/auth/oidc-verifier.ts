import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from "jose";
import type { OidcConfig } from "../config/config.js";
import { ROLES, type Role } from "./principal.js";

/** Signatures with a public key only: a shared-secret (HS*) token could be minted by anyone holding the secret. */
const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];

/** How far the issuer's clock and ours may disagree when checking exp and nbf. */
export const CLOCK_SKEW_SECONDS = 30;

/** What a JWT proved: who (and, if the claim names a known role, as what), until when. */
export type JwtVerification =
  | { ok: true; subject: string; role: Role | undefined; expiresAt: number }
  /** `unavailable`: the token could not be checked (the JWKS did not answer), not that it is bad. */
  | { ok: false; unavailable: boolean; reason: string };

/** Three base64url parts: worth handing to the verifier. */
export function looksLikeJwt(token: string): boolean {
  return /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);
}

/**
 * Verifies JWTs of one OIDC issuer with jose: signature against the issuer's JWKS (cached;
 * fetched again for a key id it does not know, at most once per `cooldownMs`), `iss`, `aud`,
 * `exp` (required) and `nbf`, with {@link CLOCK_SKEW_SECONDS} of leeway.
 */
export class OidcVerifier {
  private readonly jwks: ReturnType<typeof createRemoteJWKSet>;

  constructor(
    private readonly config: OidcConfig,
    options: { cooldownMs?: number } = {},
  ) {
    this.jwks = createRemoteJWKSet(new URL(config.jwksUrl), {
      timeoutDuration: 5_000,
      ...(options.cooldownMs !== undefined ? { cooldownDuration: options.cooldownMs } : {}),
    });
  }

  async verify(token: string): Promise<JwtVerification> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.jwks, {
        issuer: this.config.issuer,
        audience: this.config.audience,
        algorithms: ALGORITHMS,
        clockTolerance: CLOCK_SKEW_SECONDS,
        requiredClaims: ["exp"],
      }));
    } catch (error) {
      return { ok: false, ...whyRefused(error) };
    }
    const subject = claimAt(payload, this.config.subjectClaim);
    if (typeof subject !== "string" || subject === "") {
      return { ok: false, unavailable: false, reason: `no "${this.config.subjectClaim}" claim naming the caller` };
    }
    return {
      ok: true,
      subject,
      role: roleFromClaims(payload, this.config.rolesClaim, this.config.roleMap),
      expiresAt: (payload.exp as number) * 1000,
    };
  }
}

/** A reason for the log (never the token), and whether the fault is ours rather than the token's. */
function whyRefused(error: unknown): { unavailable: boolean; reason: string } {
  if (error instanceof errors.JWTExpired) return { unavailable: false, reason: "token expired" };
  if (error instanceof errors.JWTClaimValidationFailed) return { unavailable: false, reason: `claim "${error.claim}" ${error.reason.replace(/_/g, " ")}` };
  if (error instanceof errors.JWSSignatureVerificationFailed) return { unavailable: false, reason: "signature does not verify" };
  if (error instanceof errors.JWKSNoMatchingKey) return { unavailable: false, reason: "no key of the issuer's JWKS matches the token" };
  if (error instanceof errors.JOSEAlgNotAllowed) return { unavailable: false, reason: "signature algorithm not allowed" };
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid || error instanceof errors.JOSENotSupported) {
    return { unavailable: false, reason: `malformed token: ${(error as Error).message}` };
  }
  // The JWKS timed out, answered other than 200, or was not a key set: nothing is known about the token.
  return { unavailable: true, reason: `the issuer's JWKS cannot be used: ${(error as Error).message}` };
}

/**
 * The claim at a dotted path (`realm_access.roles`). A claim whose own name has dots (as
 * namespaced claims like `https://example.com/roles` do) is found by its whole name first.
 */
export function claimAt(claims: Record<string, unknown>, path: string): unknown {
  if (Object.hasOwn(claims, path)) return claims[path];
  let value: unknown = claims;
  for (const key of path.split(".")) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * The highest role named by the claim at `path` (a string, possibly space- or
 * comma-separated, or an array of strings). With `roleMap`, its values are translated and
 * others ignored; without, only `viewer`, `operator` and `admin` count. Undefined: no known role.
 */
export function roleFromClaims(claims: Record<string, unknown>, path: string, roleMap?: Record<string, Role>): Role | undefined {
  const value = claimAt(claims, path);
  const names = typeof value === "string" ? value.split(/[\s,]+/) : Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  let best = -1;
  for (const name of names) {
    const role = roleMap ? (Object.hasOwn(roleMap, name) ? roleMap[name] : undefined) : ROLES.find((r) => r === name);
    if (role !== undefined) best = Math.max(best, ROLES.indexOf(role));
  }
  return best < 0 ? undefined : ROLES[best];
}
