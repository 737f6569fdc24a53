/**
 * Authentication by bearer token, as kube-apiserver's token authenticators do
 * it: one static administrator token (what the kubeconfig carries, as kubeadm's
 * admin.conf does for `kubernetes-admin`), and ServiceAccount tokens minted by
 * the TokenRequest API, JWTs the server signs and checks (signature, audience,
 * expiry, and that the ServiceAccount still exists with the same uid).
 *
 * The simulator signs with HMAC-SHA256 under a key of its own run, not with
 * the RSA key a real cluster publishes: nothing outside verifies its tokens.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { ObjectStore } from "../store.js";
import { objectKey } from "../store.js";
import { R } from "../storage-names.js";

/** Who a request is from, as user.Info has it. */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** The audience a token is for unless it asks otherwise (the apiserver's --api-audiences). */
export const API_AUDIENCE = "https://kubernetes.default.svc.cluster.local";
/** The issuer of ServiceAccount tokens (--service-account-issuer). */
export const ISSUER = "https://kubernetes.default.svc.cluster.local";

export const ADMIN_USER: UserInfo = { username: "kubernetes-admin", groups: ["kubeadm:cluster-admins", "system:authenticated"] };
export const ANONYMOUS: UserInfo = { username: "system:anonymous", groups: ["system:unauthenticated"] };

/** The username of a ServiceAccount. */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** The namespace and name in a ServiceAccount's username, if it is one. */
export function parseServiceAccountUsername(username: string): { namespace: string; name: string } | undefined {
  const m = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(username);
  return m ? { namespace: m[1]!, name: m[2]! } : undefined;
}

/** The user of a ServiceAccount, with the groups the apiserver gives it. */
export function serviceAccountUser(namespace: string, name: string, uid?: string): UserInfo {
  return { username: serviceAccountUsername(namespace, name), ...(uid ? { uid } : {}), groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"] };
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString("base64url");

export interface MintedToken {
  token: string;
  expirationTimestamp: string;
}

export class Authenticator {
  /** The administrator's bearer token (in the kubeconfig). */
  readonly adminToken = randomBytes(24).toString("base64url");
  private readonly key = randomBytes(32);

  constructor(
    private readonly store: ObjectStore,
    private readonly now: () => number = Date.now,
  ) {}

  /** A ServiceAccount token (TokenRequest): a JWT for `audiences`, valid `expirationSeconds`. */
  mint(namespace: string, name: string, uid: string, audiences: string[], expirationSeconds: number): MintedToken {
    const iat = Math.floor(this.now() / 1000);
    const exp = iat + expirationSeconds;
    const claims = {
      aud: audiences,
      exp,
      iat,
      iss: ISSUER,
      jti: randomBytes(16).toString("hex"),
      "kubernetes.io": { namespace, serviceaccount: { name, uid } },
      nbf: iat,
      sub: serviceAccountUsername(namespace, name),
    };
    const head = `${b64url(JSON.stringify({ alg: "HS256", kid: "node-inventory-sim" }))}.${b64url(JSON.stringify(claims))}`;
    return { token: `${head}.${this.sign(head)}`, expirationTimestamp: new Date(exp * 1000).toISOString().replace(/\.\d{3}Z$/, "Z") };
  }

  /**
   * The user a bearer token stands for, undefined when there is no token,
   * null when the token is not valid (the apiserver's 401), as its union of
   * token authenticators answers.
   */
  authenticate(authorization: string | undefined): UserInfo | undefined | null {
    if (authorization === undefined) return undefined;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!m) return null;
    const token = m[1]!;
    if (equal(token, this.adminToken)) return ADMIN_USER;
    return this.serviceAccountToken(token);
  }

  /** The user of a ServiceAccount JWT, or null. */
  private serviceAccountToken(token: string): UserInfo | null {
    const parts = token.split(".");
    if (parts.length !== 3) return null;
    if (!equal(parts[2]!, this.sign(`${parts[0]}.${parts[1]}`))) return null;
    let claims: any;
    try {
      claims = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8"));
    } catch {
      return null;
    }
    const nowS = this.now() / 1000;
    if (claims.iss !== ISSUER || !(claims.exp > nowS) || !(claims.nbf <= nowS + 60)) return null;
    if (!Array.isArray(claims.aud) || !claims.aud.includes(API_AUDIENCE)) return null;
    const sa = claims["kubernetes.io"];
    const namespace = sa?.namespace;
    const name = sa?.serviceaccount?.name;
    if (typeof namespace !== "string" || typeof name !== "string") return null;
    // A token outlives nothing it is bound to: a deleted (or recreated) ServiceAccount's tokens stop working.
    const current = this.store.get(R.serviceaccounts, objectKey(namespace, name));
    if (!current || current.obj.metadata.uid !== sa.serviceaccount.uid) return null;
    return { ...serviceAccountUser(namespace, name, sa.serviceaccount.uid), extra: { "authentication.kubernetes.io/credential-id": [`JTI=${claims.jti}`] } };
  }

  private sign(data: string): string {
    return createHmac("sha256", this.key).update(data).digest("base64url");
  }
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
