import type { Principal, Role } from "../graphql/caller.js";
import { AppError, ErrorCode } from "../graphql/errors.js";

export type { Principal, Role } from "../graphql/caller.js";

export const ROLES: readonly Role[] = ["viewer", "operator", "admin"];

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

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
