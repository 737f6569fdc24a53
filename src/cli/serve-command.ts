import { setFlagsFromString } from "node:v8";
import { loadConfig, settingsHelp, SETTINGS } from "../config/config.js";
import { createLogger } from "../log/logger.js";

export const SERVE_HELP = `Usage: node-inventory serve [options]

Starts the GraphQL service (HTTP and graphql-ws on /graphql, /healthz, /readyz).
Flags win over environment variables.

Options:
${settingsHelp(Object.keys(SETTINGS) as (keyof typeof SETTINGS)[])}
  --help                   show this help`;

/** Runs until SIGINT/SIGTERM; resolves with the exit code. */
export async function serveCommand(argv: string[]): Promise<number> {
  const config = loadConfig(argv);
  boundHeapGrowth();
  // Imported once the configuration holds: a bad setting is reported before the service's
  // modules (Apollo, Prisma, client-node) take their second or two to load.
  const { createApp } = await import("../app/create-app.js");
  const logger = createLogger(config.logLevel, undefined, config.logFormat);
  const app = createApp(config, { logger });
  // Installed before start(): a SIGTERM while the database opens or migrates (a pod deleted
  // during a rollout) shuts down in order instead of killing the process midway.
  let stopping = false;
  let exit!: (code: number) => void;
  const exited = new Promise<number>((resolve) => (exit = resolve));
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      // A second signal while stopping means "now".
      logger.warn({ signal }, "second signal: exiting without a clean shutdown");
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal, state: app.state }, "signal received");
    app.stop().then(
      () => exit(0),
      (error: unknown) => (logger.error({ err: error }, "shutdown failed"), exit(1)),
    );
  };
  process.on("SIGINT", onSignal).on("SIGTERM", onSignal);
  try {
    await app.start();
  } catch (error) {
    process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
    throw error;
  }
  return exited;
}

/**
 * After each full collection V8 lets the heap grow to a multiple of what survived, more when
 * the program allocates fast, and large answers allocate a lot that dies young. A fixed, small
 * growth keeps the service's memory near what is live, for more collections (docs/scaling.md);
 * Go's GOGC is the same trade. A --heap-growing-percent of the caller's own wins.
 */
function boundHeapGrowth(): void {
  if (process.execArgv.some((arg) => arg.startsWith("--heap-growing-percent") || arg.startsWith("--heap_growing_percent"))) return;
  setFlagsFromString("--heap-growing-percent=15");
}
