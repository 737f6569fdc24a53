/**
 * The Node fields of the node's lifecycle: the eviction outlook (from the watch caches).
 */
import type { NodeResolvers } from "../graphql/generated/resolvers-types.js";
import type { Resolvers } from "../graphql/schema.js";
import type { InventoryService } from "../inventory/inventory-service.js";
import { evictionOutlook } from "./eviction-outlook.js";

/** The Node fields resolved here, which the inventory's own resolvers leave out. */
export type NodeLifecycleFields = "evictionOutlook";

export function nodeLifecycleResolvers(inventory: InventoryService): Resolvers {
  const node: Pick<NodeResolvers, NodeLifecycleFields> = {
    evictionOutlook: (n) => {
      const outlook = evictionOutlook(n, inventory.pods(n));
      if (!outlook) return null;
      const { key, value, effect } = outlook.taint;
      return { ...outlook, taint: { key, value: value ?? null, effect } };
    },
  };
  return { Node: node };
}
