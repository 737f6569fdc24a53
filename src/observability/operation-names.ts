/**
 * The operation names the shipped web UI (web/ui) and CLI (src/cli) send: /metrics counts these
 * by name out of the box. Any other name is a caller's text, counted by name only when an
 * operator lists it (`--metrics-operations`), so no caller can fill the label's values and push
 * everyone else's operations into `other`.
 */
export const SHIPPED_OPERATIONS: readonly string[] = [
  // web/ui
  "Availability",
  "CancelDrain",
  "Capacity",
  "Cordon",
  "Drain",
  "DrainProgress",
  "Fleet",
  "FleetClusters",
  "FleetDrains",
  "FleetStatus",
  "NodeChanged",
  "NodeCluster",
  "NodeClusterStatus",
  "NodeFacts",
  "NodeMaintenance",
  "NodePage",
  "ReadyInGroup",
  "Trends",
  "Uncordon",
  // src/cli
  "AvailabilityReport",
  "CapacityReport",
  "FleetNode",
  "FleetNodes",
];
