#!/usr/bin/env -S node --max-semi-space-size=4
// V8's young generation grows while a program allocates fast (the first sync, large answers)
// and stays resident; smaller semi-spaces keep the service smaller at the same speed
// (docs/scaling.md, "Figures behind the code's tuning choices"). V8 reads the flag only when
// node starts, so it is here: `npm start`, `npx node-inventory` and the image run
// this file; a `node bin/node-inventory.js` of your own can pass it.
//
// graphql-js (and other libraries) pick their fast paths when NODE_ENV is production, and the
// choice is made at import time: set it before anything is imported. Tests set their own.
process.env.NODE_ENV ??= "production";
// The compiled CLI lives in dist/ (built by `npm install`'s postinstall or `npm run build`).
await import("../dist/src/cli/main.js");
