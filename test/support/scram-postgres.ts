import { execFile } from "node:child_process";
import { chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const BIN = "/usr/lib/postgresql/15/bin";

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A PostgreSQL server of the test's own, on a free port, that asks every TCP client for a
 * password (scram-sha-256): the shared server on 5432 trusts everyone and must not be changed.
 * Run as the `postgres` user, which PostgreSQL requires.
 */
export async function startScramPostgres(): Promise<{ port: number; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "ni-scram-"));
  const { uid, gid } = await postgresUser();
  chownSync(dir, uid, gid);
  const pwfile = join(dir, "password");
  writeFileSync(pwfile, "a-password-the-service-is-not-given\n");
  chownSync(pwfile, uid, gid);
  const data = join(dir, "data");
  const as = (command: string, args: string[]) => run("runuser", ["-u", "postgres", "--", join(BIN, command), ...args], { cwd: dir });
  await as("initdb", ["-D", data, "-U", "postgres", "--auth-host=scram-sha-256", "--auth-local=trust", `--pwfile=${pwfile}`, "--no-sync"]);
  const port = await freePort();
  await as("pg_ctl", ["-D", data, "-l", join(dir, "log"), "-w", "-o", `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off`, "start"]);
  return {
    port,
    async stop() {
      await as("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([run("id", ["-u", "postgres"]), run("id", ["-g", "postgres"])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}
