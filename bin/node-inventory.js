#!/usr/bin/env node
// The compiled CLI lives in dist/ (built by `npm install`'s postinstall or `npm run build`).
import "../dist/src/cli/main.js";
