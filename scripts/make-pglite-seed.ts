// Part of `npm run build`: runs PGlite's initdb once and keeps its data directory, so that an
// embedded database starts from it instead of running initdb (src/db/pglite-seed.ts).
import { PGLITE_SEED_PATH, writePgliteSeed } from "../src/db/pglite-seed.js";

const started = performance.now();
const bytes = await writePgliteSeed();
console.log(`pglite seed: ${PGLITE_SEED_PATH} (${(bytes / 1024).toFixed(0)} KiB) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
