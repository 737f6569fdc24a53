import DataLoader from "dataloader";
import { requireRole } from "../auth/principal.js";
import type { CachedNode } from "../cluster/model.js";
import { CloseCode } from "../graphql/close-codes.js";
import { loaderFor } from "../graphql/context.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import type { DrainOperation as SchemaDrainOperation, DrainOperationResolvers, DrainPod as SchemaDrainPod, DrainPodResolvers } from "../graphql/generated/resolvers-types.js";
import type { CompleteResolvers, Resolvers } from "../graphql/schema.js";
import { BoundedQueue } from "../subscriptions/bounded-queue.js";
import type { SubscriptionHub } from "../subscriptions/subscription-hub.js";
import { isActive, phaseCounts, podPhase, progressPercent, remainingPods, type DrainOperation, type DrainPodState } from "./drain-operation.js";
import type { MaintenanceService } from "./maintenance-service.js";

/** States a drainProgress subscriber may have undelivered; only the latest matters, so few. */
const PROGRESS_QUEUE = 100;

/**
 * The mutations (operator role), Query.drainOperation, Node.activeDrain and
 * Subscription.drainProgress.
 */
export function maintenanceResolvers(service: MaintenanceService, hub: SubscriptionHub): Resolvers {
  const operation = async (id: string) => {
    const found = await service.get(id);
    if (!found) throw new AppError(ErrorCode.NOT_FOUND, `drain operation ${id} not found`);
    return found;
  };
  return {
    Mutation: {
      cordonNode: (_root, args, context) => service.cordon(requireRole(context.principal, "operator"), args.cluster, args.name, args.reason),
      uncordonNode: (_root, args, context) => service.uncordon(requireRole(context.principal, "operator"), args.cluster, args.name, args.reason),
      drainNode: (_root, args, context) =>
        service.drain(requireRole(context.principal, "operator"), args.cluster, args.name, args.options, args.reason),
      cancelDrain: (_root, args, context) => service.cancel(requireRole(context.principal, "operator"), args.id),
    },
    Query: {
      drainOperation: async (_root, args) => (await service.get(args.id)) ?? null,
    },
    Node: {
      activeDrain: (node, _args, context) =>
        loaderFor(
          context,
          "maintenance:Node.activeDrain",
          () =>
            new DataLoader<CachedNode, DrainOperation | null, string>(
              async (nodes) => {
                const active = await service.activeFor(nodes.map((n) => ({ cluster: n.cluster, node: n.name })));
                return nodes.map((n) => active.get(`${n.cluster}/${n.name}`) ?? null);
              },
              { cacheKeyFn: (n) => `${n.cluster}/${n.name}` },
            ),
        ).load(node),
    },
    Subscription: {
      drainProgress: {
        subscribe: async (_root, args, context) => {
          // Listen before reading, so no change between the read and the listening is missed.
          let chain = Promise.resolve();
          let last = "";
          let stop = () => {};
          const queue = new BoundedQueue<DrainOperation>(
            PROGRESS_QUEUE,
            () => context.closeConnection?.(CloseCode.TryAgainLater, "Subscriber too slow"),
            () => stop(),
          );
          const deliver = (state: DrainOperation) => {
            // Each state once, in order; complete after a final one.
            const fingerprint = JSON.stringify(state);
            if (fingerprint === last) return;
            last = fingerprint;
            queue.push(state);
            if (!isActive(state.status)) queue.finish();
          };
          stop = hub.onDrain((id) => {
            if (id !== args.id) return;
            chain = chain.then(async () => deliver(await operation(args.id))).catch(() => {});
          });
          // The first read is first in the chain: later notices can only bring newer states.
          let failure: unknown;
          chain = chain.then(async () => deliver(await operation(args.id))).catch((error) => void (failure = error));
          await chain;
          if (failure) {
            stop();
            throw failure;
          }
          return queue;
        },
        resolve: (state: DrainOperation) => state,
      },
    },
    DrainPod: {
      phase: (pod) => podPhase(pod),
      unblockedBy: (pod) => pod.unblockedBy ?? null,
    } satisfies CompleteResolvers<DrainPodResolvers, DrainPodState, SchemaDrainPod>,
    DrainOperation: {
      remainingPods: (op) => remainingPods(op),
      progressPercent: (op) => progressPercent(op),
      podsByPhase: (op) => phaseCounts(op),
      // Each pod's own fields are DrainPod's resolvers'.
    } satisfies CompleteResolvers<DrainOperationResolvers, DrainOperation, Omit<SchemaDrainOperation, "pods">>,
  };
}
