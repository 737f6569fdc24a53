import { ConfigError } from "../config/config.js";
import { DatabaseUnavailableError } from "../db/database.js";
import { MigrationError } from "../db/migrator.js";
import { DataDirLockedError } from "../db/pglite-lock.js";
import { VERSION } from "../package-info.js";
import { MIGRATE_HELP, migrateCommand } from "./migrate-command.js";
import { REPORT_HELP, ReportError, reportCommand } from "./report-command.js";
import { SERVE_HELP, serveCommand } from "./serve-command.js";
import { FLEET_HELP } from "./fleet-help.js";
import { runSimCommand } from "../sim/sim-command.js";
import { terminalText } from "./output-escaping.js";

interface Command {
  summary: string;
  /** Empty for a command that prints its own help. */
  help: string;
  run(argv: string[]): Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  serve: { summary: "run the GraphQL service (default)", help: SERVE_HELP, run: serveCommand },
  migrate: { summary: "apply database migrations and exit", help: MIGRATE_HELP, run: migrateCommand },
  report: { summary: "print a capacity or availability report (table, csv or json)", help: REPORT_HELP, run: (argv) => reportCommand(argv) },
  // The fleet commands, loaded only when run.
  ...Object.fromEntries(
    (
      [
        ["nodes", "list nodes of every cluster as kubectl get nodes does"],
        ["cordon", "mark a node unschedulable"],
        ["uncordon", "mark a node schedulable again"],
        ["label", "set or remove a node's labels (kubectl label)"],
        ["taint", "add or remove a node's taints (kubectl taint)"],
        ["drain", "drain a node and follow it (kubectl drain)"],
        ["debug", "a debugging pod on a node (kubectl debug node/NAME)"],
      ] as const
    ).map(([name, summary]) => [name, { summary, help: FLEET_HELP[name], run: async (argv: string[]) => (await import("./fleet-commands.js")).fleetCommand(name, argv) }]),
  ),
  // The simulator parses its own flags and prints its own help.
  sim: { summary: "serve a simulated Kubernetes cluster (for demos and tests)", help: "", run: runSimCommand },
};

const USAGE = `node-inventory ${VERSION}: a live GraphQL inventory of Kubernetes nodes.

Usage: node-inventory [command] [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, command]) => `  ${name.padEnd(10)}${command.summary}`)
  .join("\n")}

Run \`node-inventory <command> --help\` for a command's options.`;

/** Errors whose message is the whole story: printed as one line, no stack. */
const EXPECTED: Record<string, number> = {
  [ConfigError.name]: 2,
  [DataDirLockedError.name]: 2,
  [DatabaseUnavailableError.name]: 1,
  [MigrationError.name]: 1,
  [ReportError.name]: 1,
  // The fleet commands' (loaded lazily, so by name).
  ServiceError: 1,
};

async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === "--help" || first === "-h" || first === "help") return print(USAGE);
  if (first === "--version") return print(VERSION);
  const named = first !== undefined && !first.startsWith("-");
  const name = named ? first : "serve";
  const command = COMMANDS[name];
  if (!command) {
    console.error(`node-inventory: unknown command "${terminalText(name)}" (commands: ${Object.keys(COMMANDS).join(", ")})`);
    return 2;
  }
  const args = named ? rest : argv;
  if (command.help && (args.includes("--help") || args.includes("-h"))) {
    return print(command.help);
  }
  return command.run(args);
}

function print(text: string): number {
  console.log(text);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // Everything was closed in order; a stray handle must not keep a stopped service alive.
    setTimeout(() => process.exit(code), 2_000).unref();
  },
  (error: unknown) => {
    const e = error as Error & { code?: string; address?: string; port?: number };
    if (e?.name in EXPECTED) {
      // The message may quote the service, which quotes node text.
      console.error(`node-inventory: ${terminalText(e.message)}`);
      process.exitCode = EXPECTED[e.name];
    } else if (e?.code === "EADDRINUSE" || e?.code === "EACCES" || e?.code === "EADDRNOTAVAIL") {
      console.error(`node-inventory: cannot listen on ${e.address}:${e.port} (${e.code})`);
      process.exitCode = 1;
    } else {
      console.error("node-inventory: failed:", error);
      process.exitCode = 1;
    }
    // The start cleaned up after itself; whatever a failed connection left open (a socket
    // pg never closes after a SASL error, say) must not keep the process alive.
    setTimeout(() => process.exit(), 500).unref();
  },
);
