import type { AuthMethod, Role as SchemaRole, Whoami, WhoamiResolvers } from "../graphql/generated/resolvers-types.js";
import type { CompleteResolvers, Resolvers } from "../graphql/schema.js";
import { requireRole, type Principal, type Role } from "./principal.js";

/** Our roles and methods as the schema's enums: a Record, so a new one fails the build until it is named here. */
const ROLE: Record<Role, SchemaRole> = { viewer: "VIEWER", operator: "OPERATOR", admin: "ADMIN" };
const VIA: Record<Principal["via"], AuthMethod> = { token: "TOKEN", oidc: "OIDC", loopback: "LOOPBACK" };

/** `Query.whoami`: the caller as this service sees them, so a portal can show what they may do. */
export function whoamiResolvers(): Resolvers {
  return {
    Query: {
      whoami: (_parent, _args, context) => requireRole(context.principal, "viewer"),
    },
    Whoami: {
      role: (principal) => ROLE[principal.role],
      via: (principal) => VIA[principal.via],
    } satisfies CompleteResolvers<WhoamiResolvers, Principal, Whoami>,
  };
}
