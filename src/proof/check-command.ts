/**
 * `node dist/src/proof/check-command.js --ground-truth FILE --database URL|DIR [--tolerance-ms N] [--soak-report FILE] [--json FILE]`:
 * the checker as a command. Exit 0 when nothing was lost, duplicated or made up; 1 otherwise; 2 on usage.
 */
import { readFile, writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { checkHistory, parseGroundTruth, type CheckReport, type FinalNode } from "./history-checker.js";
import { readRecordedHistory } from "./recorded-history.js";

/** A few lines a person reads: the tallies, then the first problems. */
export function formatCheck(report: CheckReport, maxProblems = 20): string {
  const line = (name: string, t: CheckReport["transitions"]) =>
    `${name.padEnd(12)} checked ${t.checked}  lost ${t.lost}  unobservable ${t.unobservable}  duplicated ${t.duplicated}  phantom ${t.phantom}  out of order ${t.outOfOrder}  chain breaks ${t.chainBreaks}  time off ${t.timeOff}`;
  const lines = [
    line("transitions", report.transitions),
    line("node changes", report.changes),
    line("maintenance", report.maintenance),
    `${"drains".padEnd(12)} checked ${report.drains.checked}  evictions ${report.drains.evictions}  evicted twice ${report.drains.evictedTwice}  asked again while terminating ${report.drains.repeatedOfTerminating}  unfinished ${report.drains.unfinished}`,
  ];
  for (const p of report.problems.slice(0, maxProblems)) lines.push(`  ${p.kind} ${p.stream} ${p.cluster}/${p.node}: ${p.detail}`);
  if (report.problems.length > maxProblems) lines.push(`  … and ${report.problems.length - maxProblems} more`);
  lines.push(report.failed ? "FAILED: history is not exactly once" : "OK: every fact recorded exactly once");
  return `${lines.join("\n")}\n`;
}

export async function runCheckCommand(argv: string[], out = (s: string) => process.stdout.write(s)): Promise<number> {
  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { "ground-truth": { type: "string" }, database: { type: "string" }, "tolerance-ms": { type: "string" }, json: { type: "string" }, "soak-report": { type: "string" } },
      strict: true,
    }) as { values: Record<string, string | undefined> });
  } catch (e) {
    out(`error: ${(e as Error).message}\n`);
    return 2;
  }
  if (!values["ground-truth"] || !values.database) {
    out("usage: check-command --ground-truth FILE --database URL|DIR [--tolerance-ms N] [--json FILE]\n");
    return 2;
  }
  const facts = parseGroundTruth(await readFile(values["ground-truth"], "utf8"));
  // A soak's report carries how each drain left its node and the gaps in recording: the check as the soak made it.
  const soak = values["soak-report"] ? (JSON.parse(await readFile(values["soak-report"], "utf8")) as { drainEnds?: Record<string, FinalNode>; gaps?: [number, number][]; lastFactAt?: number }) : {};
  const report = checkHistory(facts, await readRecordedHistory(values.database), {
    toleranceMs: Number(values["tolerance-ms"] ?? 5_000),
    finalNodes: new Map(Object.entries(soak.drainEnds ?? {})),
    ...(soak.gaps ? { gaps: soak.gaps } : {}),
    ...(soak.lastFactAt ? { until: soak.lastFactAt } : {}),
  });
  out(formatCheck(report));
  if (values.json) await writeFile(values.json, JSON.stringify(report, null, 2));
  return report.failed ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  process.exitCode = await runCheckCommand(process.argv.slice(2));
}
