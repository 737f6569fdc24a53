import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import { PACKAGE_ROOT } from "../package-info.js";

/**
 * PGlite's initdb, done once at build time instead of at every start. A new PGlite database runs
 * initdb in a second WebAssembly instance, copies its data directory into the first as a tarball
 * and drops the second: about 6 CPU s and a peak of ~620 MiB resident in a bare script, with
 * ~450-600 MiB still resident afterwards until V8 collects the second instance. Loading the same
 * directory from a tarball costs ~1.6 CPU s and ~270-320 MiB. The seed is only initdb's output:
 * the migrations still run at start, exactly as on a database made by initdb.
 */
export const PGLITE_SEED_PATH = join(PACKAGE_ROOT, "dist", "pglite-seed", "initdb.tar.gz");

// A data directory belongs to the PostgreSQL build that made it: a seed from another PGlite is
// not used (initdb runs instead).
// (Its package.json is not exported: read it beside the entry point, dist/index.cjs.)
const PGLITE_VERSION: string = JSON.parse(readFileSync(join(dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite")), "..", "package.json"), "utf8")).version;

/**
 * initdb's arguments for every new PGlite database, from the seed or not: 1 MB WAL segments
 * instead of 16 MB. PostgreSQL keeps at least two segments, and in memory they are this
 * process's memory (database.ts keeps 4 MB of WAL there instead of 32 MB).
 */
export const INITDB_ARGS: readonly string[] = ["--wal-segsize=1"];

/** What a seed was made by; a seed whose manifest says otherwise is not used. */
const MANIFEST = { pglite: PGLITE_VERSION, initdb: INITDB_ARGS };

/** Seeds read so far, by path: a Blob is immutable, so every database opened in a process (a test run opens hundreds) shares one read. */
const seeds = new Map<string, Blob | undefined>();

/** The seed tarball when it was made by this PGlite with {@link INITDB_ARGS}, else undefined (initdb then runs as before). */
export function readPgliteSeed(path: string = PGLITE_SEED_PATH): Blob | undefined {
  if (!seeds.has(path)) seeds.set(path, readSeed(path));
  return seeds.get(path);
}

function readSeed(path: string): Blob | undefined {
  try {
    const manifest: unknown = JSON.parse(readFileSync(manifestPath(path), "utf8"));
    if (!isDeepStrictEqual(manifest, MANIFEST)) return undefined;
    return new Blob([readFileSync(path)]);
  } catch {
    return undefined;
  }
}

/** Runs initdb in an in-memory PGlite and writes its data directory (gzip) and a manifest. */
export async function writePgliteSeed(path: string = PGLITE_SEED_PATH): Promise<number> {
  const pglite = await PGlite.create({ initDbStartParams: [...INITDB_ARGS] });
  try {
    const tarball = Buffer.from(await (await pglite.dumpDataDir("gzip")).arrayBuffer());
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, tarball);
    writeFileSync(manifestPath(path), JSON.stringify(MANIFEST) + "\n");
    return tarball.length;
  } finally {
    await pglite.close();
  }
}

function manifestPath(path: string): string {
  return path.replace(/\.tar\.gz$/, "") + ".json";
}
