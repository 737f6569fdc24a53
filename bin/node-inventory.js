#!/usr/bin/env -S node --max-semi-space-size=4
// V8's young generation grows to 3 x 16 MB while a program allocates fast (the first sync, large
// answers), and it stays resident: with 4 MB semi-spaces the service peaked at 559-570 MiB
// through twenty all-node queries of 5,000 nodes instead of 596-614, settled at 470-512 MiB
// instead of 530-563, at the same sync time and query speed (README, Resources). V8 reads the
// flag only when node starts, so it is here: `npm start`, `npx node-inventory` and the image run
// this file; a `node bin/node-inventory.js` of your own can pass it.
//
// graphql-js (and other libraries) pick their fast paths when NODE_ENV is production, and the
// choice is made at import time: set it before anything is imported. Tests set their own.
process.env.NODE_ENV ??= "production";
// The compiled CLI lives in dist/ (built by `npm install`'s postinstall or `npm run build`).
await import("../dist/src/cli/main.js");
