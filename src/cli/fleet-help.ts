/**
 * The fleet commands' help, apart from the commands themselves so that `node-inventory`
 * can list and explain them without loading their code (main imports this eagerly).
 */

const SERVICE = `  --url <url>           the service (default http://127.0.0.1:4000); env NODE_INVENTORY_URL
  --token <token>       sent as "Authorization: Bearer <token>"; env NODE_INVENTORY_TOKEN
  --help                show this help`;

const NODE = "NODE is NAME (when the service watches one cluster) or CLUSTER/NAME.";
const EXITS = "Exit codes: 0 done, 1 the service refused or failed (one line with its error code), 2 bad arguments.";

export const FLEET_HELP = {
  nodes: `Usage: node-inventory nodes [-l SELECTOR] [--cluster C] [-o table|wide|json|csv]

Lists nodes as \`kubectl get nodes\` does, every cluster at once, with CLUSTER first and
CPU% and MEMORY% (of allocatable, as \`kubectl top node\`) last; from the service's watch cache.

Options:
  -l, --selector <sel>  label selector, e.g. node-role.kubernetes.io/worker,zone in (a,b)
  --cluster <name>      one cluster
  -o, --output <fmt>    table (default), wide (kubectl's wide columns), json, csv
${SERVICE}

${EXITS}`,
  cordon: `Usage: node-inventory cordon NODE [--reason TEXT]

Marks the node unschedulable (cordonNode), recorded with you as the actor. ${NODE}

Options:
  --reason <text>       why, recorded with the maintenance event
${SERVICE}

${EXITS}`,
  uncordon: `Usage: node-inventory uncordon NODE [--reason TEXT]

Marks the node schedulable again (uncordonNode). ${NODE}

Options:
  --reason <text>       why, recorded with the maintenance event
${SERVICE}

${EXITS}`,
  label: `Usage: node-inventory label NODE KEY=VALUE… KEY-… [--overwrite] [--reason TEXT]

Sets and removes labels as \`kubectl label node\` does (labelNode): changing a label's value
needs --overwrite. Recorded as LABELED with you as the actor. ${NODE}

Options:
  --overwrite           allow changing existing values
  --reason <text>       why, recorded with the maintenance event
${SERVICE}

${EXITS}`,
  taint: `Usage: node-inventory taint NODE KEY=VALUE:EFFECT… KEY:EFFECT… KEY-… KEY:EFFECT-… [--overwrite] [--reason TEXT]

Adds and removes taints as \`kubectl taint node\` does (taintNode): EFFECT is NoSchedule,
PreferNoSchedule or NoExecute; an existing key and effect needs --overwrite. Recorded as
TAINTED with you as the actor. ${NODE}

Options:
  --overwrite           allow replacing taints of the same key and effect
  --reason <text>       why, recorded with the maintenance event
${SERVICE}

${EXITS}`,
  drain: `Usage: node-inventory drain NODE [kubectl drain's flags] [--dry-run] [--reason TEXT]

Cordons the node and evicts its pods as \`kubectl drain\` does (drainNode), then follows the
drain (drainProgress): a progress bar naming the PodDisruptionBudget that blocks on a
terminal, one line per change when piped. Ctrl-C cancels the drain (the node stays
cordoned). ${NODE}

Options:
  --ignore-daemonsets      leave DaemonSet-managed pods
  --delete-emptydir-data   evict pods with emptyDir volumes (their data is lost)
  --force                  also evict pods no controller recreates
  --grace-period <s>       seconds each pod gets (default: its own)
  --timeout <duration>     how long the drain may take, e.g. 10m (default: the service's)
  --pod-selector <sel>     only pods matching this label selector
  --disable-eviction       delete pods instead of evicting them (bypasses PodDisruptionBudgets)
  --dry-run[=server]       plan only: say what would be evicted, change nothing
  --reason <text>          why, recorded with the drain
${SERVICE.replace(/^ {2}(--\S+(?: <\w+>)?) +/gm, (_, flag: string) => `  ${flag.padEnd(25)}`)}

Exit codes: 0 the drain SUCCEEDED, 1 it FAILED or was CANCELLED (or the service refused it),
2 bad arguments.`,
  debug: `Usage: node-inventory debug NODE --image IMAGE --reason TEXT [--ttl <duration>]

Makes the pod \`kubectl debug node/NODE --image IMAGE\` makes (debugNode: the host's PID, network
and IPC namespaces, the host's root at /host), which the service deletes after its lifetime,
and prints the \`kubectl exec -it\` line that attaches to it. Admin role. ${NODE}

Options:
  --image <image>          the debugger's image, e.g. busybox
  --reason <text>          why, recorded as DEBUGGED (required)
  --ttl <duration>         how long the pod lives, e.g. 30m (default 1h, at most 24h)
${SERVICE.replace(/^ {2}(--\S+(?: <\w+>)?) +/gm, (_, flag: string) => `  ${flag.padEnd(25)}`)}

${EXITS}`,
} as const;
