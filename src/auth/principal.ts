import { AppError, ErrorCode } from "../graphql/errors.js";

/** What a caller may do: viewer reads and subscribes; operator also changes nodes; admin everything. */
export type Role = "viewer" | "operator" | "admin";

export const ROLES: readonly Role[] = ["viewer", "operator", "admin"];

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

/** The authenticated caller of one request or WebSocket connection. */
export interface Principal {
  /** Who: the token's subject or the JWT's subject claim; recorded as the actor of what they do. */
  subject: string;
  role: Role;
  /** How they proved it; "loopback" is the local admin of a server without auth configured. */
  via: "token" | "oidc" | "loopback";
}

export function hasRole(principal: Principal, needed: Role): boolean {
  return RANK[principal.role] >= RANK[needed];
}

/** The caller, if they hold at least `needed`; UNAUTHENTICATED or FORBIDDEN otherwise. */
export function requireRole(principal: Principal | undefined, needed: Role): Principal {
  if (!principal) throw new AppError(ErrorCode.UNAUTHENTICATED, "Authentication required: send a bearer token");
  if (!hasRole(principal, needed)) {
    throw new AppError(ErrorCode.FORBIDDEN, `Role ${principal.role} may not do this; it needs ${needed}`);
  }
  return principal;
}
