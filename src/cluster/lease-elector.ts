import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type { Logger } from "../log/logger.js";
import { PeriodicTask } from "../lifecycle/periodic-task.js";
import { isConflict, isNotFound, type KubeClient } from "./kube-client.js";
import { backoffDelay } from "../lifecycle/backoff.js";

export interface LeaseElectorOptions {
  client: KubeClient;
  logger: Logger;
  namespace: string;
  name: string;
  /** Who we are in the lease's holderIdentity. */
  identity?: string;
  /** How long a lease not renewed stays with its holder. */
  leaseDurationMs?: number;
  /** How often the holder renews and a candidate retries. */
  retryPeriodMs?: number;
  onStartedLeading(): void;
  onStoppedLeading(): void;
}

/** Retry delay after `failures` failed checks in a row: doubling from the retry period, at most 30 s (or the period, if longer). */
export function leaseRetryBackoff(retryPeriodMs: number, failures: number): number {
  return backoffDelay({ initialMs: retryPeriodMs, maxMs: Math.max(30_000, retryPeriodMs) }, failures);
}

/** Every replica's default identity: host, process and a random part (pids repeat in containers). */
export function defaultIdentity(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
}

interface Lease {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it:
 * the holder renews every retry period; a candidate takes the lease over once it has seen no
 * renewal for a whole lease duration. Expiry is judged by when *we* last saw the record change,
 * not by the holder's clock, so clock skew between replicas does not matter. Every write is an
 * optimistic update (resourceVersion): two candidates cannot both win.
 */
export class LeaseElector {
  private readonly options: Required<Omit<LeaseElectorOptions, "identity">> & { identity: string };
  private readonly task: PeriodicTask;
  private leading = false;
  private observed: { holder?: string; renewTime?: string; seenAt: number } | undefined;
  private failures = 0;
  /** Date.now() of our last successful write of the lease. */
  private renewedAt: number | undefined;

  constructor(options: LeaseElectorOptions) {
    this.options = { identity: defaultIdentity(), leaseDurationMs: 15_000, retryPeriodMs: 2_000, ...options };
    this.task = new PeriodicTask({
      run: async () => {
        // A process frozen (SIGSTOP, a long pause) past its lease wakes here believing it leads:
        // it steps down before anything else, and takes the lease again only if it is still ours.
        if (this.leading && this.renewedAt !== undefined && Date.now() - this.renewedAt > this.options.leaseDurationMs) this.setLeading(false);
        await this.tryAcquireOrRenew();
        if (this.failures) this.options.logger.info({ lease: this.lease, failures: this.failures }, "lease check succeeds again");
        this.failures = 0;
      },
      // An unreachable cluster fails every check: back off, and say so once per step.
      delayMs: () => (this.failures ? leaseRetryBackoff(this.options.retryPeriodMs, this.failures) : this.options.retryPeriodMs),
      immediately: true,
      onError: (error) => {
        this.failures++;
        const retryInMs = leaseRetryBackoff(this.options.retryPeriodMs, this.failures);
        this.options.logger.warn({ lease: this.lease, err: (error as Error).message, failures: this.failures, retryInMs }, "lease check failed");
        // A renewal that failed may mean someone else holds the lease now: stop writing at once
        // (the next check that finds the lease still ours takes it again).
        if (this.leading) this.setLeading(false);
      },
    });
  }

  get identity(): string {
    return this.options.identity;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** `namespace/name` of the Lease. */
  get lease(): string {
    return `${this.options.namespace}/${this.options.name}`;
  }

  /** Who holds the Lease as last read (us included); undefined while nobody does or before the first read. */
  get holder(): string | undefined {
    return this.observed?.holder;
  }

  start(): void {
    this.task.start();
  }

  /** Stops leading now (the database refused this replica's writes); the next check decides again. */
  stepDown(): void {
    this.setLeading(false);
  }

  /** Stops campaigning; a leader releases the lease so a standby takes over at once. */
  async stop(): Promise<void> {
    await this.task.stop();
    if (this.leading) {
      this.setLeading(false);
      await this.release().catch((error) => this.options.logger.warn({ err: (error as Error).message }, "could not release the lease"));
    }
  }

  private path(name = ""): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${this.options.namespace}/leases${name ? `/${name}` : ""}`;
  }

  private async tryAcquireOrRenew(): Promise<void> {
    const now = new Date();
    const microNow = now.toISOString().replace("Z", "000Z");
    let lease: Lease;
    try {
      lease = await this.options.client.getJson<Lease>(this.path(this.options.name));
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await this.options.client.request(
        "POST",
        this.path(),
        {},
        {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name: this.options.name, namespace: this.options.namespace },
          spec: this.spec(microNow, microNow, 0),
        },
      );
      this.observe(this.options.identity, microNow);
      this.renewedAt = now.getTime();
      this.setLeading(true);
      return;
    }
    const { holderIdentity, renewTime } = lease.spec;
    if (!this.observed || this.observed.holder !== holderIdentity || this.observed.renewTime !== renewTime) {
      this.observe(holderIdentity, renewTime);
    }
    const ours = holderIdentity === this.options.identity;
    const expired = !holderIdentity || Date.now() - this.observed!.seenAt > this.options.leaseDurationMs;
    if (!ours && !expired) {
      if (this.leading) this.setLeading(false);
      return;
    }
    const transitions = (lease.spec.leaseTransitions ?? 0) + (ours ? 0 : 1);
    const acquireTime = ours ? (lease.spec.acquireTime ?? microNow) : microNow;
    try {
      await this.options.client.request("PUT", this.path(this.options.name), {}, { ...lease, spec: this.spec(acquireTime, microNow, transitions) });
    } catch (error) {
      // 409: another replica wrote first; it holds the lease now.
      if (isConflict(error)) {
        if (this.leading) this.setLeading(false);
        return;
      }
      throw error;
    }
    this.observe(this.options.identity, microNow);
    this.renewedAt = now.getTime();
    if (!this.leading) this.setLeading(true);
  }

  private spec(acquireTime: string, renewTime: string, leaseTransitions: number): Lease["spec"] {
    return {
      holderIdentity: this.options.identity,
      leaseDurationSeconds: Math.ceil(this.options.leaseDurationMs / 1000),
      acquireTime,
      renewTime,
      leaseTransitions,
    };
  }

  private observe(holder: string | undefined, renewTime: string | undefined): void {
    const before = this.observed?.holder;
    this.observed = { ...(holder ? { holder } : {}), ...(renewTime ? { renewTime } : {}), seenAt: Date.now() };
    // Said once per holder, not at every retry: who this replica is waiting on.
    if (holder && holder !== before && holder !== this.options.identity) {
      this.options.logger.info({ lease: this.lease, holder, identity: this.options.identity }, `standing by: the Lease is held by ${holder}`);
    }
  }

  private setLeading(leading: boolean): void {
    if (this.leading === leading) return;
    this.leading = leading;
    this.options.logger.info({ lease: this.path(this.options.name), identity: this.options.identity }, leading ? "became leader" : "stopped leading");
    if (leading) this.options.onStartedLeading();
    else this.options.onStoppedLeading();
  }

  /** Gives the lease up (empty holder) so a standby need not wait for it to expire. */
  private async release(): Promise<void> {
    const lease = await this.options.client.getJson<Lease>(this.path(this.options.name));
    if (lease.spec.holderIdentity !== this.options.identity) return;
    await this.options.client.request(
      "PUT",
      this.path(this.options.name),
      {},
      {
        ...lease,
        spec: { ...lease.spec, holderIdentity: "", leaseDurationSeconds: 1 },
      },
    );
  }
}
