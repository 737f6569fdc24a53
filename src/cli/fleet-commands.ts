/**
 * The fleet commands, over a running service's GraphQL API as `report` is: `nodes`, `cordon`,
 * `uncordon`, `label`, `taint` and `drain`, with kubectl's arguments and words. A node is
 * `NAME` (the only cluster) or `CLUSTER/NAME`.
 */

import { parseArgs, type ParseArgsConfig } from "node:util";
import { ConfigError } from "../config/config.js";
import { changeLines, finalLine, formatNodes, isFinal, planLines, progressLine, staleWarnings, type ClusterLiveness, type DrainState, type NodeRow, type NodesFormat } from "./fleet-format.js";
import { parseDuration } from "./durations.js";
import { terminalText } from "./output-escaping.js";
import { request, ServiceError, serviceTarget, subscribe, type ServiceTarget } from "./service-client.js";

export type FleetCommand = "nodes" | "cordon" | "uncordon" | "label" | "taint" | "drain" | "debug";

/**
 * Where the command writes: stdout, stderr, and whether stdout is a terminal (the progress bar)
 * of how many columns. What goes to `out` and `err` is escaped for a terminal (output-escaping.ts);
 * `control` writes the command's own cursor movements as they are.
 */
export interface FleetIo {
  out: (text: string) => void;
  err: (text: string) => void;
  control?: (sequence: string) => void;
  tty: boolean;
  columns?: number;
}

const PROCESS_IO: FleetIo = {
  out: (t) => void process.stdout.write(t),
  err: (t) => void process.stderr.write(t),
  tty: Boolean(process.stdout.isTTY),
  get columns() {
    return process.stdout.columns;
  },
};

/** `io` with every text escaped for a terminal; only `control` writes raw bytes. */
function escapedIo(io: FleetIo): FleetIo & { control: (sequence: string) => void } {
  return {
    out: (text) => io.out(terminalText(text)),
    err: (text) => io.err(terminalText(text)),
    control: io.control ?? io.out,
    tty: io.tty,
    get columns() {
      return io.columns;
    },
  };
}

const SERVICE_OPTIONS = { url: { type: "string" }, token: { type: "string" } } as const;

function parse(argv: readonly string[], options: NonNullable<ParseArgsConfig["options"]>): { flags: Record<string, any>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args: [...argv], options: { ...SERVICE_OPTIONS, ...options }, strict: true, allowPositionals: true });
    return { flags: values, positionals };
  } catch (error) {
    throw new ConfigError((error as Error).message.replace(/\. To specify a positional argument.*$/s, ""));
  }
}

/** `NAME` or `CLUSTER/NAME`. */
export function nodeRef(text: string | undefined, command: string): { cluster?: string; name: string } {
  if (!text) throw new ConfigError(`${command}: name the node (NAME or CLUSTER/NAME)`);
  const slash = text.indexOf("/");
  if (slash < 0) return { name: text };
  const cluster = text.slice(0, slash);
  const name = text.slice(slash + 1);
  if (!cluster || !name || name.includes("/")) throw new ConfigError(`${command}: "${text}" is not NAME or CLUSTER/NAME`);
  return { cluster, name };
}

/** Runs a fleet command; resolves with its exit code. Bad arguments throw ConfigError (exit 2), a failing service ServiceError (exit 1). */
export async function fleetCommand(command: FleetCommand, argv: readonly string[], env: NodeJS.ProcessEnv = process.env, given: FleetIo = PROCESS_IO): Promise<number> {
  const io = escapedIo(given);
  switch (command) {
    case "nodes":
      return nodes(argv, env, io);
    case "cordon":
    case "uncordon":
      return cordon(command, argv, env, io);
    case "label":
      return label(argv, env, io);
    case "taint":
      return taint(argv, env, io);
    case "drain":
      return drain(argv, env, io);
    case "debug":
      return debug(argv, env, io);
  }
}

async function debug(argv: readonly string[], env: NodeJS.ProcessEnv, io: FleetIo): Promise<number> {
  const { flags, positionals } = parse(argv, { image: { type: "string" }, reason: { type: "string" }, ttl: { type: "string" } });
  if (positionals.length > 1) throw new ConfigError("debug: one node at a time");
  const ref = nodeRef(positionals[0], "debug");
  if (!flags.image) throw new ConfigError("debug: --image is required, e.g. --image busybox");
  if (!flags.reason) throw new ConfigError("debug: --reason is required (it is recorded as DEBUGGED)");
  const ttlSeconds = flags.ttl === undefined ? undefined : parseDuration(flags.ttl, "--ttl");
  const target = serviceTarget(flags, env);
  const data = await request<{ debugNode: { namespace: string; name: string; expiresAt: string; attachCommand: string } }>(
    target,
    `mutation($cluster: String, $name: String!, $image: String!, $reason: String!, $ttl: Int) { debugNode(cluster: $cluster, name: $name, image: $image, reason: $reason, ttlSeconds: $ttl) { namespace name expiresAt attachCommand } }`,
    { ...ref, image: flags.image, reason: flags.reason, ttl: ttlSeconds },
  );
  const pod = data.debugNode;
  io.out(`Creating debugging pod ${pod.name} with container debugger on node ${ref.name}; deleted at ${pod.expiresAt}.\n${pod.attachCommand}\n`);
  return 0;
}

const NODES_QUERY = `query FleetNodes($cluster: String, $filter: NodeFilter, $after: String) {
  nodes(cluster: $cluster, filter: $filter, first: 1000, after: $after) {
    edges { node { cluster name status roles createdAt
      nodeInfo { kubeletVersion osImage kernelVersion containerRuntimeVersion }
      addresses { type address } usage { cpuPercent memoryPercent } } }
    pageInfo { hasNextPage endCursor }
  }
  clusters { name disconnectedSince lastError }
}`;

async function nodes(argv: readonly string[], env: NodeJS.ProcessEnv, io: FleetIo): Promise<number> {
  const { flags, positionals } = parse(argv, { selector: { type: "string", short: "l" }, cluster: { type: "string" }, output: { type: "string", short: "o" } });
  if (positionals.length) throw new ConfigError(`nodes: unexpected argument "${positionals[0]}"`);
  const format = (flags.output ?? "table") as NodesFormat;
  if (!["table", "wide", "json", "csv"].includes(format)) throw new ConfigError(`-o: "${format}" is not table, wide, json or csv`);
  const target = serviceTarget(flags, env);
  const rows: NodeRow[] = [];
  let clusters: ClusterLiveness[] = [];
  let after: string | null = null;
  do {
    const data: any = await request(target, NODES_QUERY, { cluster: flags.cluster, filter: flags.selector !== undefined ? { labelSelector: flags.selector } : undefined, after });
    for (const edge of data.nodes.edges) rows.push(edge.node);
    // As of the first page: a cluster that went down meanwhile is named by the next run.
    if (!after) clusters = data.clusters;
    after = data.nodes.pageInfo.hasNextPage ? data.nodes.pageInfo.endCursor : null;
  } while (after);
  // Every cluster asked about: one not live may have nodes missing here, or shown as they were.
  for (const line of staleWarnings(clusters.filter((c) => flags.cluster === undefined || c.name === flags.cluster))) io.err(line + "\n");
  if (rows.length === 0 && format !== "json") {
    io.err("No resources found\n");
    return 0;
  }
  io.out(formatNodes(rows, format, Date.now(), clusters));
  return 0;
}

const NODE_QUERY = `query FleetNode($cluster: String, $name: String!) { node(cluster: $cluster, name: $name) { cluster name unschedulable labels { key value } taints { key value effect } } }`;

interface NodeNow {
  cluster: string;
  name: string;
  unschedulable: boolean;
  labels: { key: string; value: string }[];
  taints: { key: string; value: string | null; effect: string }[];
}

async function current(target: ServiceTarget, ref: { cluster?: string; name: string }): Promise<NodeNow> {
  const data = await request<{ node: NodeNow | null }>(target, NODE_QUERY, { ...ref });
  if (!data.node) throw new ServiceError(`NOT_FOUND: node "${ref.name}" not found${ref.cluster ? ` in cluster "${ref.cluster}"` : ""}`);
  return data.node;
}

async function cordon(command: "cordon" | "uncordon", argv: readonly string[], env: NodeJS.ProcessEnv, io: FleetIo): Promise<number> {
  const { flags, positionals } = parse(argv, { reason: { type: "string" } });
  if (positionals.length > 1) throw new ConfigError(`${command}: one node at a time`);
  const ref = nodeRef(positionals[0], command);
  const target = serviceTarget(flags, env);
  const before = await current(target, ref);
  // As kubectl: nothing to do is said, not done.
  if (before.unschedulable === (command === "cordon")) {
    io.out(`node/${before.name} already ${command}ed\n`);
    return 0;
  }
  const field = command === "cordon" ? "cordonNode" : "uncordonNode";
  await request(target, `mutation($cluster: String, $name: String!, $reason: String) { ${field}(cluster: $cluster, name: $name, reason: $reason) { name } }`, { cluster: before.cluster, name: before.name, reason: flags.reason });
  io.out(`node/${before.name} ${command}ed\n`);
  return 0;
}

/** kubectl label's arguments: `k=v` sets, `k-` removes. */
export function parseLabelArgs(args: readonly string[]): { set: { key: string; value: string }[]; remove: string[] } {
  const set: { key: string; value: string }[] = [];
  const remove: string[] = [];
  for (const arg of args) {
    const eq = arg.indexOf("=");
    if (eq > 0) set.push({ key: arg.slice(0, eq), value: arg.slice(eq + 1) });
    else if (arg.endsWith("-") && arg.length > 1) remove.push(arg.slice(0, -1));
    else throw new ConfigError(`label: "${arg}" is not KEY=VALUE or KEY-`);
  }
  if (set.length === 0 && remove.length === 0) throw new ConfigError("at least one label update is required");
  return { set, remove };
}

/**
 * `label` and `taint`: `NODE CHANGE...` with --overwrite and --reason, checked in that order (the
 * node, the changes, the service), then the node as it is now.
 */
async function nodeUpdate<T>(
  command: "label" | "taint",
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  parseChanges: (args: readonly string[]) => T,
): Promise<{ flags: Record<string, any>; changes: T; target: ServiceTarget; before: NodeNow }> {
  const { flags, positionals } = parse(argv, { overwrite: { type: "boolean" }, reason: { type: "string" } });
  const [node, ...args] = positionals;
  const ref = nodeRef(node, command);
  const changes = parseChanges(args);
  const target = serviceTarget(flags, env);
  return { flags, changes, target, before: await current(target, ref) };
}

async function label(argv: readonly string[], env: NodeJS.ProcessEnv, io: FleetIo): Promise<number> {
  const { flags, changes: { set, remove }, target, before } = await nodeUpdate("label", argv, env, parseLabelArgs);
  const had = new Map(before.labels.map((l) => [l.key, l.value]));
  for (const key of remove) if (!had.has(key)) io.out(`label "${key}" not found.\n`);
  const data: any = await request(
    target,
    `mutation($cluster: String, $name: String!, $set: [KeyValueInput!], $remove: [String!], $overwrite: Boolean, $reason: String) {
      labelNode(cluster: $cluster, name: $name, set: $set, remove: $remove, overwrite: $overwrite, reason: $reason) { labels { key value } } }`,
    { cluster: before.cluster, name: before.name, set, remove, overwrite: Boolean(flags.overwrite), reason: flags.reason },
  );
  const now = new Map<string, string>(data.labelNode.labels.map((l: { key: string; value: string }) => [l.key, l.value]));
  const changed = [...new Set([...had.keys(), ...now.keys()])].some((k) => had.get(k) !== now.get(k));
  const added = set.some((s) => had.get(s.key) !== s.value);
  io.out(`node/${before.name} ${!changed ? "not labeled" : added ? "labeled" : "unlabeled"}\n`);
  return 0;
}

/** kubectl taint's arguments: `k=v:Effect` or `k:Effect` adds, `k-` or `k:Effect-` removes. */
export function parseTaintArgs(args: readonly string[]): { add: { key: string; value?: string; effect: string }[]; remove: { key: string; effect?: string }[] } {
  const add: { key: string; value?: string; effect: string }[] = [];
  const remove: { key: string; effect?: string }[] = [];
  for (const arg of args) {
    if (arg.endsWith("-")) {
      const [key, effect] = arg.slice(0, -1).split(":");
      if (!key) throw new ConfigError(`taint: "${arg}" is not KEY- or KEY:EFFECT-`);
      remove.push({ key, ...(effect ? { effect } : {}) });
      continue;
    }
    const colon = arg.lastIndexOf(":");
    if (colon < 0) throw new ConfigError(`invalid taint spec: ${arg}: give KEY=VALUE:EFFECT or KEY:EFFECT`);
    const [key, value] = arg.slice(0, colon).split("=", 2) as [string, string | undefined];
    add.push({ key, ...(value ? { value } : {}), effect: arg.slice(colon + 1) });
  }
  if (add.length === 0 && remove.length === 0) throw new ConfigError("at least one taint update is required");
  return { add, remove };
}

async function taint(argv: readonly string[], env: NodeJS.ProcessEnv, io: FleetIo): Promise<number> {
  const { flags, changes: { add, remove }, target, before } = await nodeUpdate("taint", argv, env, parseTaintArgs);
  await request(
    target,
    `mutation($cluster: String, $name: String!, $add: [TaintInput!], $remove: [TaintRemovalInput!], $overwrite: Boolean, $reason: String) {
      taintNode(cluster: $cluster, name: $name, add: $add, remove: $remove, overwrite: $overwrite, reason: $reason) { name } }`,
    { cluster: before.cluster, name: before.name, add, remove, overwrite: Boolean(flags.overwrite), reason: flags.reason },
  );
  // kubectl's words: modified when an existing taint got a new value, untainted when only taken off.
  const replaced = add.some((a) => before.taints.some((t) => t.key === a.key && t.effect === a.effect));
  io.out(`node/${before.name} ${replaced ? "modified" : add.length ? "tainted" : "untainted"}\n`);
  return 0;
}

const DRAIN_FIELDS = `id node status dryRun message progressPercent remainingPods warnings
  podsByPhase { notStarted evicting terminating gone notRemoved } pods { namespace name status reason action blockedBy unblockedBy }`;

async function drain(argv: readonly string[], env: NodeJS.ProcessEnv, io: FleetIo & { control: (sequence: string) => void }): Promise<number> {
  // kubectl's --dry-run takes none|client|server; any but none is a plan here.
  let dryRun = false;
  const args = argv.filter((arg) => {
    const m = /^--dry-run(?:=(none|client|server))?$/.exec(arg);
    if (!m) return true;
    dryRun = m[1] !== "none";
    return false;
  });
  const { flags, positionals } = parse(args, {
    "ignore-daemonsets": { type: "boolean" },
    "delete-emptydir-data": { type: "boolean" },
    force: { type: "boolean" },
    "grace-period": { type: "string" },
    timeout: { type: "string" },
    "pod-selector": { type: "string" },
    "disable-eviction": { type: "boolean" },
    reason: { type: "string" },
  });
  if (positionals.length > 1) throw new ConfigError("drain: one node at a time");
  const ref = nodeRef(positionals[0], "drain");
  const grace = flags["grace-period"];
  if (grace !== undefined && !/^-?\d+$/.test(grace)) throw new ConfigError(`--grace-period: "${grace}" is not a whole number of seconds`);
  const options = {
    ignoreDaemonSets: Boolean(flags["ignore-daemonsets"]),
    deleteEmptyDirData: Boolean(flags["delete-emptydir-data"]),
    force: Boolean(flags.force),
    disableEviction: Boolean(flags["disable-eviction"]),
    dryRun,
    ...(grace !== undefined ? { gracePeriodSeconds: Number(grace) } : {}),
    ...(flags.timeout !== undefined ? { timeoutSeconds: parseDuration(flags.timeout, "--timeout") } : {}),
    ...(flags["pod-selector"] !== undefined ? { podSelector: flags["pod-selector"] } : {}),
  };
  const target = serviceTarget(flags, env);
  const started: any = await request(
    target,
    `mutation($cluster: String, $name: String!, $options: DrainOptions, $reason: String) { drainNode(cluster: $cluster, name: $name, options: $options, reason: $reason) { ${DRAIN_FIELDS} } }`,
    { ...ref, options, reason: flags.reason },
  );
  let last: DrainState = started.drainNode;
  if (last.dryRun) {
    // A plan, not a drain that happened: what it would do, what stops it and which flag unblocks it.
    for (const line of planLines(last)) io.out(line + "\n");
    return last.status === "SUCCEEDED" ? 0 : 1;
  }
  const show = (next: DrainState, previous: DrainState | undefined) => {
    if (!io.tty) {
      for (const line of changeLines(previous, next)) io.out(line + "\n");
      return;
    }
    if (!previous) {
      io.out(`node/${next.node} cordoned${next.dryRun ? " (dry run)" : ""}\n`);
      for (const warning of next.warnings) io.out(`Warning: ${warning}\n`);
    }
    // The bar rewrites its own line; the final line replaces it.
    // A bar wider than the terminal would wrap, and only its last line would be redrawn.
    const bar = progressLine(next);
    const fitted = io.columns && bar.length >= io.columns ? bar.slice(0, Math.max(1, io.columns - 2)) + "…" : bar;
    io.control("\r\x1b[2K");
    io.out(isFinal(next.status) ? finalLine(next) + "\n" : fitted);
  };
  if (isFinal(last.status)) show(last, undefined);
  else {
    // Ctrl-C stops the drain, as it stops kubectl drain: cancelled, the node stays cordoned.
    const id = last.id;
    const interrupt = () => {
      process.off("SIGINT", interrupt);
      void request(target, `mutation($id: ID!) { cancelDrain(id: $id) { status } }`, { id }).catch((error: Error) => io.err(`node-inventory: could not cancel drain ${id}: ${error.message}\n`));
    };
    process.on("SIGINT", interrupt);
    try {
      show(last, undefined);
      await subscribe<{ drainProgress: DrainState }>(target, `subscription($id: ID!) { drainProgress(id: $id) { ${DRAIN_FIELDS} } }`, { id }, (data) => {
        const next = data.drainProgress;
        show(next, last);
        last = next;
      });
    } finally {
      process.off("SIGINT", interrupt);
    }
  }
  if (!isFinal(last.status)) throw new ServiceError(`the drain's progress ended before the drain did (${last.status}); follow it with drainOperation(id: "${last.id}")`);
  return last.status === "SUCCEEDED" ? 0 : 1;
}
