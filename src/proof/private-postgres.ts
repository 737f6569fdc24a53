/**
 * A PostgreSQL server of the soak's own under a temporary directory, on its own port, so that
 * it can be stopped and started as a fault without touching anyone else's server.
 */
import { execFile } from "node:child_process";
import { chownSync, existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./tcp-proxy.js";

const run = promisify(execFile);
const BIN = ["/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/17/bin"].find((d) => existsSync(join(d, "initdb"))) ?? "/usr/lib/postgresql/15/bin";

/** PostgreSQL refuses to run as root: as root, its programs run as the `postgres` user. */
function asOwner(command: string, args: string[], cwd: string) {
  const env = { ...process.env, LC_ALL: "C" };
  return userInfo().uid === 0 ? run("runuser", ["-u", "postgres", "--", join(BIN, command), ...args], { cwd, env }) : run(join(BIN, command), args, { cwd, env });
}

export class PrivatePostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  /** postgres:// URL of its `postgres` database (trust authentication, loopback only). */
  get url(): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async create(): Promise<PrivatePostgres> {
    const dir = await mkdtemp(join(tmpdir(), "node-inventory-soak-pg-"));
    if (userInfo().uid === 0) {
      chownSync(dir, Number((await run("id", ["-u", "postgres"])).stdout), Number((await run("id", ["-g", "postgres"])).stdout));
    }
    await asOwner("initdb", ["-D", join(dir, "data"), "-U", "postgres", "-A", "trust", "--no-sync"], dir);
    const pg = new PrivatePostgres(dir, await freePort());
    await pg.start();
    return pg;
  }

  async start(): Promise<void> {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60 -c shared_buffers=32MB`;
    await asOwner("pg_ctl", ["-D", join(this.dir, "data"), "-l", join(this.dir, "log"), "-o", options, "-w", "-t", "60", "start"], this.dir);
  }

  /** `immediate`: the server goes as if its machine lost power (crash recovery at the next start). */
  async stop(mode: "immediate" | "fast" = "immediate"): Promise<void> {
    await asOwner("pg_ctl", ["-D", join(this.dir, "data"), "-m", mode, "-w", "-t", "60", "stop"], this.dir);
  }

  /** Stop it and remove its files. */
  async destroy(): Promise<void> {
    await this.stop("immediate").catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}
