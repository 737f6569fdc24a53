#!/usr/bin/env node
// graphql-js (and other libraries) pick their fast paths when NODE_ENV is production, and the
// choice is made at import time: set it before anything is imported. Tests set their own.
process.env.NODE_ENV ??= "production";
// The compiled CLI lives in dist/ (built by `npm install`'s postinstall or `npm run build`).
await import("../dist/src/cli/main.js");
