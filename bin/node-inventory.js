#!/usr/bin/env -S node --max-semi-space-size=4
// V8 reads --max-semi-space-size only when node starts, so it is here; why, and the service's
// other V8 flags: src/performance/v8-flags.ts.
//
// graphql-js (and other libraries) pick their fast paths when NODE_ENV is production, and the
// choice is made at import time: set it before anything is imported. Tests set their own.
process.env.NODE_ENV ??= "production";
// The compiled CLI lives in dist/ (built by `npm install`'s postinstall or `npm run build`).
await import("../dist/src/cli/main.js");
