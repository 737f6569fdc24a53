import { requireRole } from "../auth/principal.js";
import type { Resolvers } from "../graphql/schema.js";
import type { NodeMetadataService } from "./node-metadata-service.js";

/** Mutation.labelNode and Mutation.taintNode: the operator role, as cordon and drain. */
export function nodeMetadataResolvers(service: NodeMetadataService): Resolvers {
  return {
    Mutation: {
      labelNode: (_root, args, context) =>
        service.label(requireRole(context.principal, "operator"), args.cluster, args.name, { set: args.set, remove: args.remove, overwrite: args.overwrite }, args.reason),
      taintNode: (_root, args, context) =>
        service.taint(requireRole(context.principal, "operator"), args.cluster, args.name, { add: args.add, remove: args.remove, overwrite: args.overwrite }, args.reason),
    },
  };
}
