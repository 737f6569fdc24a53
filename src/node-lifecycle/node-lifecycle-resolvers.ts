/**
 * The Node fields of the node's lifecycle: the eviction outlook (from the watch caches) and the
 * kubelet's configuration (through the node proxy, on demand, at most a bounded number of nodes
 * per request), its journal (the node log query; operator role, audited), and debugging pods
 * (debugNode, admin role).
 */
import type { NodeResolvers } from "../graphql/generated/resolvers-types.js";
import type { Resolvers } from "../graphql/schema.js";
import type { InventoryService } from "../inventory/inventory-service.js";
import { evictionOutlook } from "./eviction-outlook.js";
import type { CachedNode } from "../cluster/model.js";
import type { ClusterRegistry } from "../cluster/cluster-registry.js";
import { requireRole } from "../auth/principal.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import { checkLogQuery, readNodeLog } from "./node-logs.js";
import type { DebugPods } from "./debug-pods.js";
import type { KubeProxyModes } from "./kube-proxy-mode.js";
import { resourcesView } from "../inventory/resources.js";
import { allocatableArithmetic, type KubeletConfigRead, type KubeletConfigReader } from "./kubelet-config.js";

/** The Node fields resolved here, which the inventory's own resolvers leave out. */
export type NodeLifecycleFields = "evictionOutlook" | "kubeletConfig" | "kubeletConfigUnavailableReason" | "logs" | "debugPods" | "kubeProxyMode";

/** Nodes whose kubelet one request may ask for its configuration (each is a request through the apiserver). */
export const KUBELET_CONFIGS_PER_REQUEST = 100;
/** Nodes whose journal one request may read. */
export const NODE_LOGS_PER_REQUEST = 10;

export function nodeLifecycleResolvers(inventory: InventoryService, clusters: ClusterRegistry, kubeletConfigs: KubeletConfigReader, debugPods: DebugPods, kubeProxyModes: KubeProxyModes): Resolvers {
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
  const logsAsked = new WeakMap<object, number>();
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
    debugPods: (n) => debugPods.list(n),
    kubeProxyMode: (n) => kubeProxyModes.forNode(n),
    logs: async (n, args, context) => {
      const principal = requireRole(context.principal, "operator");
      const asked = checkLogQuery(args.query, args.tailLines, args.pattern);
      const count = (logsAsked.get(context) ?? 0) + 1;
      logsAsked.set(context, count);
      if (count > NODE_LOGS_PER_REQUEST) throw new AppError(ErrorCode.BAD_USER_INPUT, `logs: at most ${NODE_LOGS_PER_REQUEST} nodes' logs per request`);
      let outcome = "error";
      try {
        const log = await readNodeLog(clusters, n, asked);
        outcome = log ? "ok" : "off";
        return log;
      } finally {
        // Reading a node's journal is audited as a mutation is: who, which node, what was asked.
        context.logger.info({ audit: "node-logs", subject: principal.subject, role: principal.role, cluster: n.cluster, node: n.name, ...asked, outcome }, "node logs read");
      }
    },
    evictionOutlook: (n) => {
      const outlook = evictionOutlook(n, inventory.pods(n));
      if (!outlook) return null;
      const { key, value, effect } = outlook.taint;
      return { ...outlook, taint: { key, value: value ?? null, effect } };
    },
  };
  return {
    Node: node,
    Mutation: {
      debugNode: (_root, args, context) => debugPods.create(requireRole(context.principal, "admin"), args.cluster, args.name, args.image, args.reason, args.ttlSeconds),
    },
  };
}
