/**
 * The parts of a Node served only when a query asks for them (Node.providerID, podCIDRs,
 * volumesAttached, volumesInUse, images), stripped on arrival like the rest of the node.
 * The kubelet reports at most 50 images (nodeStatusMaxImages) and a few volumes; the bounds
 * below only keep a hostile or broken source from making one node take megabytes.
 */
import type { Interner } from "./interner.js";
import type { NodeDetails, NodeImage } from "./model.js";

type Json = Record<string, unknown>;

const MAX_IMAGES = 200;
const MAX_NAMES_PER_IMAGE = 20;
const MAX_VOLUMES = 500;
const MAX_POD_CIDRS = 8;

function obj(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

function strings(value: unknown, limit: number, interner: Interner): string[] {
  const out: string[] = [];
  if (!Array.isArray(value)) return out;
  for (const item of value) {
    if (out.length >= limit) break;
    if (typeof item === "string") out.push(interner.string(item));
  }
  return out;
}

/** Strips spec and status of a v1 Node to its {@link NodeDetails}: frozen, images largest first. */
export function stripNodeDetails(spec: Json, status: Json, interner: Interner): NodeDetails {
  const volumesAttached: NodeDetails["volumesAttached"][number][] = [];
  for (const v of Array.isArray(status.volumesAttached) ? status.volumesAttached : []) {
    if (volumesAttached.length >= MAX_VOLUMES) break;
    const { name, devicePath } = obj(v);
    if (typeof name === "string") volumesAttached.push(Object.freeze({ name, devicePath: typeof devicePath === "string" && devicePath !== "" ? devicePath : undefined }));
  }
  const images: NodeImage[] = [];
  for (const i of Array.isArray(status.images) ? status.images : []) {
    if (images.length >= MAX_IMAGES) break;
    const { names, sizeBytes } = obj(i);
    const size = typeof sizeBytes === "number" && Number.isFinite(sizeBytes) && sizeBytes >= 0 ? sizeBytes : undefined;
    images.push(Object.freeze({ names: Object.freeze(strings(names, MAX_NAMES_PER_IMAGE, interner)), sizeBytes: size }));
  }
  // Stable, so equal sizes keep the kubelet's order; unknown sizes last.
  images.sort((a, b) => (b.sizeBytes ?? -1) - (a.sizeBytes ?? -1));
  // spec.podCIDR alone is what clusters older than dual-stack write; podCIDRs[0] always equals it.
  const podCIDRs = strings(spec.podCIDRs, MAX_POD_CIDRS, interner);
  if (podCIDRs.length === 0 && typeof spec.podCIDR === "string" && spec.podCIDR !== "") podCIDRs.push(spec.podCIDR);
  return Object.freeze({
    providerID: typeof spec.providerID === "string" && spec.providerID !== "" ? spec.providerID : undefined,
    podCIDRs: Object.freeze(podCIDRs),
    volumesAttached: Object.freeze(volumesAttached),
    volumesInUse: Object.freeze(strings(status.volumesInUse, MAX_VOLUMES, interner)),
    images: Object.freeze(images),
  });
}
