/**
 * Ids that are unique across every type of the API, so that a client's normalised cache (Apollo
 * Client, urql's graphcache, Relay) never takes two objects for one. A Node's id is
 * `<cluster>/<name>` (the contract's); every other id this file makes is base64url, which holds
 * no `/` and so is no Node's, and names its type, so no two types share one.
 */

/** The opaque id of the `type` object keyed `key` (a history row's id, a cluster's name). */
export function globalId(type: "Cluster" | "ConditionTransition" | "MaintenanceEvent" | "NodeChange", key: string | bigint): string {
  return Buffer.from(`${type}:${key}`, "utf8").toString("base64url");
}
