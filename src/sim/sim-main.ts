/** Standalone entry: `node dist/src/sim/sim-main.js --nodes 50 --kubeconfig-out FILE`. */
import { runSimCommand } from "./sim-command.js";

process.exitCode = await runSimCommand(process.argv.slice(2));
