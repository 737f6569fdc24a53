/**
 * `node-inventory sim`: run a standalone simulator until SIGINT/SIGTERM.
 *
 *   node-inventory sim --port 0 --nodes 50 --seed 1 --kubeconfig-out FILE
 *                      [--name sim] [--churn RATE] [--host H] [--clock-speed X] [--tls] [--rbac] [--ground-truth FILE]
 */
import { parseArgs } from "node:util";
import { startSimulator } from "./index.js";

const USAGE = `Usage: node-inventory sim [options]

Serve a simulated Kubernetes cluster until interrupted.

Options:
  --port N              port to listen on (default 0: any free port)
  --host H              address to listen on (default 127.0.0.1)
  --nodes N             nodes to generate (default 50)
  --pods-per-node N     average pods per node, daemon pods included (default 30)
  --seed N              generator seed (default 1)
  --name NAME           kubeconfig context, cluster and user name (default sim)
  --kubeconfig-out FILE write a kubeconfig for the simulator to FILE
  --churn RATE          churn scenarios per simulated minute (default 0: still)
  --clock-speed X       simulated seconds per wall second (default 1)
  --tls                 serve HTTPS with a self-signed certificate
  --ground-truth FILE   append every node change, eviction and restart to FILE
                        (JSON lines) for a checker to compare with history
  --rbac                enforce bearer-token authentication (401) and RBAC
                        authorization (403) as a real apiserver does; the
                        kubeconfig's user is an administrator (cluster-admin);
                        use with --tls (kubectl leaves the token out of some
                        requests over plain HTTP)
  --help                show this help
`;

function int(text: string | undefined, flag: string, fallback: number, min = 0): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n < min) throw new Error(`${flag} must be a number >= ${min}, got "${text}"`);
  return n;
}

/** Run the command; resolves with the exit code once stopped. */
export async function runSimCommand(argv: string[], io: { out?: (s: string) => void; err?: (s: string) => void; signal?: AbortSignal } = {}): Promise<number> {
  const out = io.out ?? ((s: string) => process.stdout.write(s));
  const err = io.err ?? ((s: string) => process.stderr.write(s));
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        port: { type: "string" },
        host: { type: "string" },
        nodes: { type: "string" },
        "pods-per-node": { type: "string" },
        seed: { type: "string" },
        name: { type: "string" },
        "kubeconfig-out": { type: "string" },
        churn: { type: "string" },
        "clock-speed": { type: "string" },
        tls: { type: "boolean" },
        rbac: { type: "boolean" },
        "ground-truth": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (e) {
    err(`error: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    out(USAGE);
    return 0;
  }
  let sim;
  try {
    const opts = {
      port: int(values.port as string | undefined, "--port", 0),
      host: (values.host as string | undefined) ?? "127.0.0.1",
      nodes: int(values.nodes as string | undefined, "--nodes", 50, 1),
      podsPerNode: int(values["pods-per-node"] as string | undefined, "--pods-per-node", 30),
      seed: int(values.seed as string | undefined, "--seed", 1),
      name: (values.name as string | undefined) ?? "sim",
      churn: int(values.churn as string | undefined, "--churn", 0),
      clockSpeed: int(values["clock-speed"] as string | undefined, "--clock-speed", 1),
      tls: Boolean(values.tls),
      rbac: Boolean(values.rbac),
      ...(values["ground-truth"] ? { groundTruthFile: values["ground-truth"] as string } : {}),
    };
    sim = await startSimulator(opts);
    if (values["kubeconfig-out"]) await sim.writeKubeconfig(values["kubeconfig-out"] as string);
  } catch (e) {
    err(`error: ${(e as Error).message}\n`);
    await sim?.stop();
    return 1;
  }
  out(`${sim.url}\n`);
  if (values["kubeconfig-out"]) err(`simulator "${sim.name}": ${sim.cluster.store.size("nodes")} nodes, ${sim.cluster.store.size("pods")} pods; kubeconfig written to ${values["kubeconfig-out"]}\n`);
  await new Promise<void>((resolve) => {
    const done = () => resolve();
    process.once("SIGINT", done);
    process.once("SIGTERM", done);
    io.signal?.addEventListener("abort", done);
  });
  await sim.stop();
  return 0;
}
