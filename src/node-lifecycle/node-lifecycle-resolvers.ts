/**
 * The Node fields of the node's lifecycle: the eviction outlook (from the watch caches) and the
 * kubelet's configuration (through the node proxy, on demand, at most a bounded number of nodes
 * per request).
 */
import type { NodeResolvers } from "../graphql/generated/resolvers-types.js";
import type { Resolvers } from "../graphql/schema.js";
import type { InventoryService } from "../inventory/inventory-service.js";
import { evictionOutlook } from "./eviction-outlook.js";
import type { CachedNode } from "../cluster/model.js";
import { resourcesView } from "../inventory/resources.js";
import { allocatableArithmetic, type KubeletConfigRead, type KubeletConfigReader } from "./kubelet-config.js";

/** The Node fields resolved here, which the inventory's own resolvers leave out. */
export type NodeLifecycleFields = "evictionOutlook" | "kubeletConfig" | "kubeletConfigUnavailableReason";

/** Nodes whose kubelet one request may ask for its configuration (each is a request through the apiserver). */
export const KUBELET_CONFIGS_PER_REQUEST = 100;

export function nodeLifecycleResolvers(inventory: InventoryService, kubeletConfigs: KubeletConfigReader): Resolvers {
  // Per request: the nodes asked so far, so one query cannot make thousands of proxy requests.
  const asked = new WeakMap<object, Set<string>>();
  const readFor = (n: CachedNode, context: object): Promise<KubeletConfigRead> => {
    let nodes = asked.get(context);
    if (!nodes) asked.set(context, (nodes = new Set()));
    const key = `${n.cluster}/${n.name}`;
    if (!nodes.has(key) && nodes.size >= KUBELET_CONFIGS_PER_REQUEST) {
      return Promise.resolve({ config: null, reason: `at most ${KUBELET_CONFIGS_PER_REQUEST} nodes' kubelet configuration per request` });
    }
    nodes.add(key);
    return kubeletConfigs.read(n);
  };
  const node: Pick<NodeResolvers, NodeLifecycleFields> = {
    kubeletConfig: async (n, _args, context) => {
      const { config } = await readFor(n, context);
      if (!config) return null;
      const arithmetic = allocatableArithmetic(n, config);
      return {
        maxPods: config.maxPods,
        cgroupDriver: config.cgroupDriver,
        kubeReserved: resourcesView(config.kubeReserved),
        systemReserved: resourcesView(config.systemReserved),
        evictionHard: Object.keys(config.evictionHard).sort().map((key) => ({ key, value: config.evictionHard[key]! })),
        expectedAllocatable: resourcesView(arithmetic.expected),
        allocatableMismatch: arithmetic.mismatched,
      };
    },
    kubeletConfigUnavailableReason: async (n, _args, context) => (await readFor(n, context)).reason,
    evictionOutlook: (n) => {
      const outlook = evictionOutlook(n, inventory.pods(n));
      if (!outlook) return null;
      const { key, value, effect } = outlook.taint;
      return { ...outlook, taint: { key, value: value ?? null, effect } };
    },
  };
  return { Node: node };
}
