import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";

/** Another live process has the PGlite directory; the CLI prints the message and exits 2. */
export class DataDirLockedError extends Error {
  override name = "DataDirLockedError";
}

const LOCK_FILE = "node-inventory.lock";

interface Holder {
  pid: number;
  host: string;
  since: string;
}

/**
 * Takes `dir` for this process: PGlite is one process's database, and two processes writing
 * one directory corrupt it. The lock is a file created exclusively, holding the pid; a file
 * left by a process that is gone (a crash, a killed container) is taken over. Returns the
 * release function.
 */
export function lockDataDir(dir: string): () => void {
  const path = join(dir, LOCK_FILE);
  const mine: Holder = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(path, "wx", 0o644);
      writeSync(fd, JSON.stringify(mine) + "\n");
      closeSync(fd);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 0) throw error;
      const holder = readHolder(path);
      if (holder && holdsIt(holder)) {
        throw new DataDirLockedError(
          `the PGlite data directory ${resolve(dir)} is in use by process ${holder.pid} on ${holder.host} (since ${holder.since}); ` +
            `stop that one, or give this one another --data-dir (or --database-url for PostgreSQL, which replicas can share)`,
        );
      }
      // Left behind by a process that is gone: take it over.
      unlinkSync(path);
    }
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    try {
      if (readHolder(path)?.pid === process.pid) unlinkSync(path);
    } catch {
      // Already gone.
    }
  };
}

function readHolder(path: string): Holder | undefined {
  try {
    const holder = JSON.parse(readFileSync(path, "utf8")) as Holder;
    return Number.isInteger(holder.pid) ? holder : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the holder still runs. A holder on another host (a volume moved to a new container
 * or machine) cannot be asked: the directory moved with it, so the old process is taken to be
 * gone. On this host a pid reused by something that is not Node is not a holder either.
 */
function holdsIt(holder: Holder): boolean {
  if (holder.host !== hostname()) return false;
  if (holder.pid === process.pid) return true;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  try {
    return readFileSync(`/proc/${holder.pid}/cmdline`, "utf8").includes("node");
  } catch {
    // No /proc (not Linux): the signal check has to do.
    return true;
  }
}
