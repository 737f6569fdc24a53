/**
 * The Node fields of the node facts that the watch caches answer: heartbeats (the
 * node's Lease) and the node's details (providerID, podCIDRs, volumes, images). Served from the cached node, computed only when a
 * query asks for them.
 */
import type { CachedNode } from "../cluster/model.js";
import type { NodeResolvers } from "../graphql/generated/resolvers-types.js";
import { pageSize } from "../graphql/page-size.js";
import type { Resolvers } from "../graphql/schema.js";
import type { CachesByName } from "./heartbeats.js";

/** The Node fields resolved here (and Node.events in history/node-events-resolvers.ts), which the inventory's own resolvers leave out. */
export type NodeFactsFields = "events" | "heartbeatTime" | "heartbeatAgeSeconds" | "providerID" | "podCIDRs" | "volumesAttached" | "volumesInUse" | "images";

/** A node reports at most a few hundred images (the kubelet: 50), so `first` may ask for all of them. */
const MAX_IMAGES = 1000;

export function nodeFactsResolvers(clusters: CachesByName): Resolvers {
  const heartbeat = (n: CachedNode) => clusters.get(n.cluster)?.facts.heartbeat(n.name);
  const node: Pick<NodeResolvers, Exclude<NodeFactsFields, "events">> = {
    heartbeatTime: (n) => heartbeat(n)?.time ?? null,
    heartbeatAgeSeconds: (n) => heartbeat(n)?.ageSeconds ?? null,
    providerID: (n) => n.details?.providerID ?? null,
    podCIDRs: (n) => n.details?.podCIDRs ?? [],
    volumesAttached: (n) => (n.details?.volumesAttached ?? []).map((v) => ({ name: v.name, devicePath: v.devicePath ?? null })),
    volumesInUse: (n) => n.details?.volumesInUse ?? [],
    images: (n, { first }) => {
      const images = n.details?.images ?? [];
      const count = pageSize(first, MAX_IMAGES, images.length);
      return images.slice(0, count).map((i) => ({ names: i.names, sizeBytes: i.sizeBytes ?? null }));
    },
  };
  return { Node: node };
}
