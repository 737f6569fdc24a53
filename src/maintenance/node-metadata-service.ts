import { randomUUID } from "node:crypto";
import type { Principal } from "../auth/principal.js";
import type { ClusterRegistry } from "../cluster/cluster-registry.js";
import { ClusterWriter } from "../cluster/cluster-writer.js";
import type { CachedNode } from "../cluster/model.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import { changeNoteAnnotations, type ChangeNote } from "../history/history-model.js";
import type { InventoryService } from "../inventory/inventory-service.js";
import type { Logger } from "../log/logger.js";
import { kube } from "../cluster/kube-contract-errors.js";
import { checkReason } from "./maintenance-service.js";
import { planLabels, planTaints, type LabelRequest, type TaintRequest } from "./node-metadata-plan.js";

export interface NodeMetadataServiceOptions {
  clusters: ClusterRegistry;
  inventory: InventoryService;
  logger: Logger;
  /** Kubernetes calls for a caller carry Impersonate-User: <subject>. */
  impersonate: boolean;
}

/** A node changed between our read and our patch this many times in a row is a CONFLICT for the caller. */
const ATTEMPTS = 3;

/**
 * labelNode and taintNode: plan against the node as the API has it now (not the cache, which
 * may lag), patch it with the change note that lets the recorder name the caller, and patch
 * only when something changes. The recorder writes LABELED / TAINTED from the watch, as it
 * writes cordons, so a change made by kubectl is recorded the same way, as `external`.
 */
export class NodeMetadataService {
  constructor(private readonly options: NodeMetadataServiceOptions) {}

  label(principal: Principal, cluster: string | null | undefined, name: string, request: LabelRequest, reason: string | null | undefined): Promise<CachedNode> {
    return this.change(principal, cluster, name, reason, "labels", (node) => {
      const plan = planLabels(node.name, node.labels, request);
      return { changes: plan.changes, patch: { metadata: { labels: plan.labels } } };
    });
  }

  taint(principal: Principal, cluster: string | null | undefined, name: string, request: TaintRequest, reason: string | null | undefined): Promise<CachedNode> {
    return this.change(principal, cluster, name, reason, "taints", (node) => {
      const plan = planTaints(node.name, node.taints, request);
      // A merge patch replaces the list whole: the resourceVersion makes sure it is the list we planned on.
      return { changes: plan.changes, patch: { spec: { taints: plan.taints.length ? plan.taints : null } } };
    });
  }

  private async change(
    principal: Principal,
    clusterName: string | null | undefined,
    name: string,
    reason: string | null | undefined,
    what: "labels" | "taints",
    plan: (node: CachedNode) => { changes: Record<string, string | null>; patch: { metadata?: Record<string, unknown>; spec?: Record<string, unknown> } },
  ): Promise<CachedNode> {
    const why = checkReason(reason);
    const cached = this.options.inventory.node(clusterName, name);
    const cache = this.options.clusters.get(cached.cluster)!;
    const writer = new ClusterWriter(cache.client, cached.cluster, this.options.impersonate ? principal.subject : undefined);
    const missing = () => new AppError(ErrorCode.NOT_FOUND, `node "${name}" not found in cluster "${cached.cluster}"`);
    for (let attempt = 1; ; attempt++) {
      const current = await kube(cached.cluster, () => writer.node(name));
      if (!current) throw missing();
      const { changes, patch } = plan(current);
      if (Object.keys(changes).length === 0) return current;
      const note: ChangeNote = { id: randomUUID(), actor: principal.subject, reason: why, [what]: changes };
      const body = { ...patch, metadata: { ...patch.metadata, resourceVersion: current.resourceVersion, annotations: changeNoteAnnotations(note) } };
      try {
        const updated = await kube(cached.cluster, () => writer.patchNode(name, body));
        if (!updated) throw missing();
        this.options.logger.info({ cluster: cached.cluster, node: name, actor: principal.subject, [what]: changes }, `node ${what} changed`);
        return updated;
      } catch (error) {
        // Someone changed the node since we read it: plan again on what it is now.
        if (attempt < ATTEMPTS && error instanceof AppError && error.extensions.code === ErrorCode.CONFLICT) continue;
        throw error;
      }
    }
  }
}
