import type { Resolvers } from "../graphql/schema.js";
import { requireRole } from "./principal.js";

/** `Query.whoami`: the caller as this service sees them, so a portal can show what they may do. */
export function whoamiResolvers(): Resolvers {
  return {
    Query: {
      whoami: (_parent, _args, context) => {
        const { subject, role, via } = requireRole(context.principal, "viewer");
        return { subject, role: role.toUpperCase(), via: via.toUpperCase() };
      },
    },
  };
}
