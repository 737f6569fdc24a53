/**
 * What every controller is built with: the one shared store, the simulated
 * clock and randomness, and the writes a client makes through the apiserver.
 * Controllers talk to each other only through the store, as in
 * kube-controller-manager: each notes work from store events (its informer's
 * handler, `observe`) and does it when the cluster's loop calls it.
 */
import type { Entry, KObject, ObjectStore } from "../store.js";
import type { SimClock } from "../clock.js";
import type { Rng } from "../rng.js";

export interface ClusterContext {
  readonly store: ObjectStore;
  readonly clock: SimClock;
  readonly rng: Rng;
  /** Create an object with server-set metadata (uid, creationTimestamp, generation) filled in. */
  create(resource: string, obj: KObject): Entry;
  /** Replace an object with a modified copy; a change that changes nothing writes nothing. */
  update(resource: string, key: string, fn: (copy: KObject) => KObject | void): Entry | undefined;
  /** Graceful pod deletion, as a DELETE through the apiserver. */
  deletePod(key: string, gracePeriodSeconds: number | undefined): KObject | undefined;
  /** Record an Event about a node (Normal unless `type` says Warning); a repeat of one still held bumps its count. */
  nodeEvent(name: string, reason: string, message: string, component?: string, type?: "Normal" | "Warning"): void;
}
