/** `npm run soak -- …`: runs a soak (./soak.ts), prints its summary, exits 1 when the check failed. */
import { formatSoak, parseSoakArgs, runSoak } from "./soak.js";

let options;
try {
  options = parseSoakArgs(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`error: ${(error as Error).message}\n`);
  process.exit(2);
}
const report = await runSoak(options);
process.stdout.write(`${formatSoak(report)}\n`);
process.exit(report.failed ? 1 : 0);
