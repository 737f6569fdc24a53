import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import { hostname } from "node:os";
import type { Principal } from "../auth/principal.js";
import type { ClusterRegistry } from "../cluster/cluster-registry.js";
import { ClusterWriter, type AccessAttributes } from "../cluster/cluster-writer.js";
import { kube } from "../cluster/kube-contract-errors.js";
import type { CachedNode } from "../cluster/model.js";
import { AppError, ErrorCode } from "../graphql/errors.js";
import type { DrainOptions as DrainOptionsInput } from "../graphql/generated/resolvers-types.js";
import { maintenanceAnnotations } from "../history/history-model.js";
import type { InventoryService } from "../inventory/inventory-service.js";
import type { Logger } from "../log/logger.js";
import type { PubSub } from "../pubsub/pubsub.js";

import { DEFAULT_DRAIN_TIMING, executeDrain, readPlan, type DrainTiming } from "./drain-executor.js";
import { isActive, type DrainOperation } from "./drain-operation.js";
import { drainOptions } from "./drain-plan.js";
import { drainEvent, type DrainEventRecord, type DrainStore } from "./drain-store.js";
import { backoffDelay } from "../lifecycle/backoff.js";

export interface MaintenanceTuning extends Partial<DrainTiming> {
  /** How often a runner proves it is alive (5 s). */
  heartbeatMs?: number;
  /** A drain whose runner has been silent this long is taken over (30 s). */
  staleAfterMs?: number;
  /** Longest wait for a drain's plan before drainNode answers anyway (5 s). */
  planWaitMs?: number;
}

export interface MaintenanceServiceOptions {
  clusters: ClusterRegistry;
  inventory: InventoryService;
  store: DrainStore;
  pubsub: PubSub;
  logger: Logger;
  /** Kubernetes calls for a caller carry Impersonate-User: <subject>. */
  impersonate: boolean;
  /** This replica's name as the runner of drains. */
  identity?: string;
  /** A drain's timeout when its options give none. */
  defaultTimeoutSeconds?: number;
  tuning?: MaintenanceTuning;
  /** Sees every drain state this replica publishes (metrics count the final ones). */
  observe?: (operation: DrainOperation) => void;
}

const MAX_REASON_LENGTH = 1_000;
/** Coalesces a burst of pod changes into one write (and one notice). */
const SAVE_DELAY_MS = 100;

interface Runner {
  /** The runner's latest state, written by the next save. */
  operation: DrainOperation;
  /**
   * What readers see: the latest state while the drain runs; a final state only once it is
   * saved, and so once its event is recorded (events are written before the save).
   */
  visible: DrainOperation;
  abort: AbortController;
  done: Promise<void>;
  saveTimer: NodeJS.Timeout | undefined;
  /** Writes and notices of this drain, in order. */
  chain: Promise<void>;
}

/**
 * Cordon, uncordon and drain: checks the request, writes to the cluster through the cluster
 * writer, and runs drains in the background with their state in PostgreSQL, so any replica
 * can answer for them and take over those whose runner stopped.
 */
export class MaintenanceService {
  private readonly runners = new Map<string, Runner>();
  private readonly identity: string;
  private readonly timing: DrainTiming;
  private readonly heartbeatMs: number;
  private readonly staleAfterMs: number;
  private readonly planWaitMs: number;
  private heartbeat: NodeJS.Timeout | undefined;
  private orphanSweep: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private stopped = false;

  constructor(private readonly options: MaintenanceServiceOptions) {
    this.identity = options.identity ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.timing = { ...DEFAULT_DRAIN_TIMING, ...options.tuning };
    this.heartbeatMs = options.tuning?.heartbeatMs ?? 5_000;
    this.staleAfterMs = options.tuning?.staleAfterMs ?? 30_000;
    this.planWaitMs = options.tuning?.planWaitMs ?? 5_000;
  }

  /** Takes over drains nobody runs (this replica's own, after a restart), then keeps watching for them. */
  async start(): Promise<void> {
    // A cancel handled by another replica reaches the runner here.
    this.unsubscribe = this.options.pubsub.subscribe((notice) => {
      if (notice.drain && notice.from !== this.identity && this.runners.has(notice.drain)) void this.checkStillActive(notice.drain);
    });
    this.heartbeat = setInterval(() => {
      for (const id of this.runners.keys()) this.save(id);
    }, this.heartbeatMs);
    this.heartbeat.unref();
    await this.adoptOrphans().catch((error) => this.options.logger.warn({ err: error }, "could not look for drains to take over"));
    this.orphanSweep = setInterval(() => void this.adoptOrphans().catch(() => {}), Math.max(1_000, this.staleAfterMs / 2));
    this.orphanSweep.unref();
  }

  /** Stops running drains without ending them and hands them to whichever replica runs next. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.heartbeat);
    clearInterval(this.orphanSweep);
    this.unsubscribe?.();
    const runners = [...this.runners.values()];
    for (const runner of runners) runner.abort.abort();
    await Promise.all(runners.map((runner) => runner.done));
    await this.options.store
      .release(
        runners.map((runner) => runner.operation.id),
        this.identity,
      )
      .catch((error) => {
        this.options.logger.warn({ err: error }, "could not release running drains; another replica takes them over once they look stale");
      });
  }

  cordon(principal: Principal, cluster: string | null | undefined, name: string, reason: string | null | undefined): Promise<CachedNode> {
    return this.setUnschedulable(principal, cluster, name, reason, true);
  }

  uncordon(principal: Principal, cluster: string | null | undefined, name: string, reason: string | null | undefined): Promise<CachedNode> {
    return this.setUnschedulable(principal, cluster, name, reason, false);
  }

  /** Starts a drain (or, with dryRun, returns its plan); answers once the plan is known. */
  async drain(principal: Principal, clusterName: string | null | undefined, name: string, input: DrainOptionsInput | null | undefined, reason: string | null | undefined): Promise<DrainOperation> {
    const options = drainOptions(input, this.options.defaultTimeoutSeconds);
    const node = this.options.inventory.node(clusterName, name);
    const writer = this.writer(node.cluster, principal);
    const base = {
      cluster: node.cluster,
      node: node.name,
      requestedBy: principal.subject,
      reason: checkReason(reason),
      options,
      warnings: [] as string[],
      message: null,
      finishedAt: null,
    };
    // Acting as the caller, ask the cluster first: a drain it would refuse halfway must not cordon the node.
    if (this.options.impersonate) await this.checkDrainAccess(writer, principal, node.name, options, input?.dryRun === true);
    if (input?.dryRun) return this.dryRun(writer, base);

    const operation = await this.options.store.create({ ...base, status: "PENDING", dryRun: false, pods: [] }, this.identity);
    this.options.logger.info({ operation: operation.id, cluster: node.cluster, node: node.name, actor: principal.subject, options }, "drain started");
    let planned!: () => void;
    const plan = new Promise<void>((resolve) => (planned = resolve));
    this.run(operation, writer, planned);
    await Promise.race([plan, new Promise((resolve) => setTimeout(resolve, this.planWaitMs).unref())]);
    // A drain that ended while planning (refused, say) answers with its saved final state.
    const runner = this.runners.get(operation.id);
    if (runner && !isActive(runner.operation.status)) await runner.done;
    return (await this.get(operation.id)) ?? operation;
  }

  /** Stops a drain wherever it runs; the node stays cordoned. Cancelling a cancelled drain is a no-op. */
  async cancel(principal: Principal, id: string): Promise<DrainOperation> {
    const existing = await this.get(id);
    if (!existing) throw new AppError(ErrorCode.NOT_FOUND, `drain operation ${id} not found`);
    if (existing.status === "CANCELLED") return existing;
    if (!isActive(existing.status)) throw new AppError(ErrorCode.CONFLICT, `drain operation ${id} already ended: ${existing.status}`);
    const ended = await this.options.store.end(id, null, { status: "CANCELLED", message: `cancelled by ${principal.subject}; the node stays cordoned` }, (op) =>
      drainEvent(op, "DRAIN_CANCELLED", { actor: principal.subject, detail: op.message }),
    );
    if (!ended) {
      // The database, not this replica's runner: a runner just cancelled may not have ended yet,
      // and its last visible state still says RUNNING.
      const now = await this.options.store.get(id);
      if (now?.status === "CANCELLED") return now;
      throw new AppError(ErrorCode.CONFLICT, `drain operation ${id} already ended: ${now?.status ?? "unknown"}`);
    }
    const cancelled = ended.operation;
    const runner = this.runners.get(id);
    if (runner) {
      // Readers (drainProgress, drainOperation) see the cancel at once, not the runner's last
      // running state: its own final save is refused, so nothing else would tell them.
      runner.visible = cancelled;
      runner.abort.abort();
    }
    await this.publish(cancelled, ended.eventIds);
    this.options.logger.info({ operation: id, actor: principal.subject }, "drain cancelled");
    return cancelled;
  }

  /** The drains this replica is executing now. */
  runningIds(): string[] {
    return [...this.runners.keys()];
  }

  /** The status this replica's runner last reported for a drain, written or not yet (undefined when it runs elsewhere or has finished). */
  runnerStatus(id: string): string | undefined {
    return this.runners.get(id)?.operation.status;
  }

  /** The freshest state: this replica's runner if it runs the drain, else the database. */
  async get(id: string): Promise<DrainOperation | undefined> {
    const local = this.runners.get(id);
    if (local) return local.visible;
    return this.options.store.get(id);
  }

  /** `operation` as fresh as `get` has it: this replica's runner's state when it runs it. */
  freshest(operation: DrainOperation): DrainOperation {
    return this.runners.get(operation.id)?.visible ?? operation;
  }

  /** Each node's active drain, as fresh as `get` has it (this replica's runners ahead of their last save). */
  async activeFor(nodes: readonly { cluster: string; node: string }[]): Promise<Map<string, DrainOperation>> {
    const active = await this.options.store.activeFor(nodes);
    for (const [key, stored] of active) {
      const local = this.runners.get(stored.id);
      if (local) active.set(key, local.visible);
    }
    return active;
  }

  private async setUnschedulable(principal: Principal, clusterName: string | null | undefined, name: string, reason: string | null | undefined, unschedulable: boolean): Promise<CachedNode> {
    const note = checkReason(reason);
    const cached = this.options.inventory.node(clusterName, name);
    const writer = this.writer(cached.cluster, principal);
    // Patch only when something would change (kubectl's cordon helper does the same), reading
    // the node from the API rather than the cache, which may lag a moment.
    const current = await kube(cached.cluster, () => writer.node(name));
    if (!current) throw new AppError(ErrorCode.NOT_FOUND, `node "${name}" not found in cluster "${cached.cluster}"`);
    if (current.unschedulable === unschedulable) return current;
    const updated = await kube(cached.cluster, () => writer.setUnschedulable(name, unschedulable, maintenanceAnnotations({ actor: principal.subject, reason: note }, unschedulable)));
    if (!updated) throw new AppError(ErrorCode.NOT_FOUND, `node "${name}" not found in cluster "${cached.cluster}"`);
    this.options.logger.info({ cluster: cached.cluster, node: name, actor: principal.subject, unschedulable }, unschedulable ? "node cordoned" : "node uncordoned");
    return updated;
  }

  private async dryRun(writer: ClusterWriter, base: Omit<DrainOperation, "id" | "status" | "dryRun" | "pods" | "startedAt">): Promise<DrainOperation> {
    const plan = await kube(base.cluster, () => readPlan(writer, base.node, base.options));
    const states = plan.pods;
    const removable = states.filter((pod) => pod.action).length;
    return this.options.store.create(
      {
        ...base,
        dryRun: true,
        status: plan.errors.length ? "FAILED" : "SUCCEEDED",
        pods: states,
        warnings: plan.warnings,
        message: plan.errors.length
          ? `a drain would be refused: cannot drain node "${base.node}": ${plan.errors.join("; ")}`
          : `dry run: would ${base.options.disableEviction ? "delete" : "evict"} ${removable} pod(s) and leave ${states.length - removable}`,
        finishedAt: new Date(),
      },
      null,
    );
  }

  /** Runs a drain on this replica until it ends or is stopped. */
  private run(operation: DrainOperation, writer: ClusterWriter, planned: () => void = () => {}): void {
    const abort = new AbortController();
    // Every pod waiting out a retry listens on this one signal.
    setMaxListeners(0, abort.signal);
    const runner: Runner = { operation, visible: operation, abort, done: Promise.resolve(), saveTimer: undefined, chain: Promise.resolve() };
    this.runners.set(operation.id, runner);
    const logger = this.options.logger.child({ operation: operation.id });
    runner.done = executeDrain({
      operation,
      writer,
      timing: this.timing,
      signal: abort.signal,
      logger,
      planned,
      report: (next) => {
        runner.operation = next;
        // A cancelled drain stays cancelled for readers, whatever the stopping runner reports.
        if (isActive(next.status) && isActive(runner.visible.status)) runner.visible = next;
        if (!isActive(next.status)) this.save(operation.id);
        else runner.saveTimer ??= setTimeout(() => this.save(operation.id), SAVE_DELAY_MS);
      },
      record: (events) => this.record(runner, events),
    })
      .then(async (final) => {
        planned();
        clearTimeout(runner.saveTimer);
        await runner.chain;
        if (!abort.signal.aborted) logger.info({ status: final.status, message: final.message }, "drain ended");
      })
      .catch((error) => logger.error({ err: error }, "drain runner failed"))
      .finally(() => this.runners.delete(operation.id));
  }

  /** Writes the runner's state; a write refused (cancelled elsewhere, or taken over) stops the runner. */
  private save(id: string): void {
    const runner = this.runners.get(id);
    if (!runner) return;
    clearTimeout(runner.saveTimer);
    runner.saveTimer = undefined;
    runner.chain = runner.chain.then(async () => {
      const operation = runner.operation;
      // A progress write that fails is superseded by the next one (or the heartbeat); the
      // final state must land, so it is retried until it does or this replica stops (then
      // the next replica takes the drain over and finds its pods gone).
      const final = !isActive(operation.status);
      const ours = await this.persist(final ? "the final state of a drain" : undefined, () => this.options.store.save(operation, this.identity));
      if (ours === undefined) return;
      if (!ours) {
        if (!final) runner.abort.abort();
        return;
      }
      if (final) runner.visible = operation;
      await this.publish(operation, []);
    });
  }

  /** Events are history: retried until written, or until this replica stops. */
  private record(runner: Runner, events: DrainEventRecord[]): void {
    runner.chain = runner.chain.then(async () => {
      const ids = await this.persist("drain events", () => this.options.store.recordEvents(events));
      if (ids?.length) await this.publish(runner.operation, ids);
    });
  }

  /**
   * Runs a database write; on failure retries it with backoff (up to 5 s apart) while this
   * replica runs when `mustLand` names it, else gives up at once. Undefined when it did not land.
   */
  private async persist<T>(mustLand: string | undefined, write: () => Promise<T>): Promise<T | undefined> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await write();
      } catch (error) {
        if (attempt === 0) this.options.logger.warn({ err: (error as Error).message }, `could not write ${mustLand ?? "drain progress"}${mustLand ? "; retrying" : "; the next write carries it"}`);
        if (!mustLand || this.stopped) return undefined;
        await new Promise((resolve) => setTimeout(resolve, backoffDelay({ initialMs: 250, maxMs: 5_000 }, attempt + 1)).unref());
      }
    }
  }

  private async publish(operation: DrainOperation, maintenance: string[]): Promise<void> {
    this.options.observe?.(operation);
    await this.options.pubsub
      .publish({ cluster: operation.cluster, node: operation.node, transitions: [], maintenance, drain: operation.id, from: this.identity, at: new Date().toISOString() })
      .catch((error) => this.options.logger.warn({ err: (error as Error).message }, "could not publish drain progress"));
  }

  private async checkStillActive(id: string): Promise<void> {
    const stored = await this.options.store.get(id).catch(() => undefined);
    if (stored && !isActive(stored.status)) this.runners.get(id)?.abort.abort();
  }

  /** Drains nobody runs: resumed here, or failed when their deadline passed while nobody ran them. */
  private async adoptOrphans(): Promise<void> {
    if (this.stopped) return;
    const orphans = await this.options.store.claimOrphans(this.identity, this.staleAfterMs);
    for (const operation of orphans) {
      if (this.stopped || this.runners.has(operation.id)) continue;
      const cache = this.options.clusters.get(operation.cluster);
      const deadline = operation.startedAt.getTime() + operation.options.timeoutSeconds * 1000;
      if (!cache || Date.now() >= deadline) {
        const message = !cache
          ? `cluster "${operation.cluster}" is no longer configured; the drain cannot go on`
          : `global timeout reached: ${operation.options.timeoutSeconds}s while no replica was running the drain; the node stays cordoned`;
        const ended = await this.options.store.end(operation.id, this.identity, { status: "FAILED", message }, (op) => drainEvent(op, "DRAIN_FAILED", { detail: message }));
        if (ended) await this.publish(ended.operation, ended.eventIds);
        continue;
      }
      this.options.logger.info({ operation: operation.id, node: operation.node }, "resuming a drain whose runner stopped");
      const writer = new ClusterWriter(cache.client, operation.cluster, this.options.impersonate ? operation.requestedBy : undefined);
      this.run(operation, writer);
    }
  }

  /**
   * Every permission the drain will use, asked of the cluster as the caller (SelfSubjectAccessReview):
   * read and patch the node, list pods, read DaemonSets, and evict (or delete) in each namespace
   * with pods on the node. FORBIDDEN, naming what is missing, before anything is written.
   */
  private async checkDrainAccess(writer: ClusterWriter, principal: Principal, node: string, options: ReturnType<typeof drainOptions>, dryRun: boolean): Promise<void> {
    const needed: AccessAttributes[] = [
      { verb: "get", group: "", resource: "nodes" },
      ...(dryRun ? [] : [{ verb: "patch", group: "", resource: "nodes" }]),
      { verb: "list", group: "", resource: "pods" },
      { verb: "get", group: "apps", resource: "daemonsets" },
    ];
    if (!dryRun) {
      const namespaces = new Set([...(this.options.clusters.get(writer.cluster)?.podsOn(node) ?? [])].map((pod) => pod.namespace));
      for (const namespace of [...namespaces].sort()) {
        needed.push(options.disableEviction ? { verb: "delete", group: "", resource: "pods", namespace } : { verb: "create", group: "", resource: "pods", subresource: "eviction", namespace });
      }
    }
    const reviews = await kube(writer.cluster, () => Promise.all(needed.map((attributes) => writer.mayI(attributes))));
    const denied = needed.filter((_, i) => !reviews[i]!.allowed);
    if (denied.length === 0) return;
    const describe = (a: AccessAttributes) => `${a.verb} ${a.resource}${a.subresource ? `/${a.subresource}` : ""}${a.group ? `.${a.group}` : ""}${a.namespace ? ` in namespace "${a.namespace}"` : ""}`;
    const reason = reviews.find((r) => !r.allowed && r.reason)?.reason;
    throw new AppError(
      ErrorCode.FORBIDDEN,
      `cluster "${writer.cluster}" refused: ${principal.subject} may not drain node "${node}": cannot ${denied.map(describe).join(", ")}${reason ? ` (${reason})` : ""}; nothing was changed`,
    );
  }

  private writer(cluster: string, principal: Principal): ClusterWriter {
    const cache = this.options.clusters.get(cluster)!;
    return new ClusterWriter(cache.client, cluster, this.options.impersonate ? principal.subject : undefined);
  }
}

export function checkReason(reason: string | null | undefined): string | null {
  const text = reason?.trim() || null;
  if (text && text.length > MAX_REASON_LENGTH) throw new AppError(ErrorCode.BAD_USER_INPUT, `reason is longer than ${MAX_REASON_LENGTH} characters`);
  return text;
}
