#!/usr/bin/env bash
# Assembles what the container image's runtime stage holds, from a built checkout (npm ci
# done, so dist/ holds the compiled service and the bundled web pages): the paths the service
# reads at run time and the production dependencies only. The Dockerfile runs it in its build
# stage and copies the result whole; test/shipped/container.test.ts runs it into a temporary
# directory and serves from there, so the image and its test cannot drift apart.
#
#   bash scripts/runtime-image.sh <built checkout> <destination>
set -euo pipefail
src=$(cd "$1" && pwd)
dest=$2

# What the service reads at run time, besides node_modules.
RUNTIME_PATHS=(package.json package-lock.json schema.graphql bin prisma/migrations dist/src dist/web dist/pglite-seed)

for path in "${RUNTIME_PATHS[@]}"; do
  [ -e "$src/$path" ] || { echo "runtime-image: $src/$path is missing (run npm ci first)" >&2; exit 1; }
done
mkdir -p "$dest"
for path in "${RUNTIME_PATHS[@]}"; do
  mkdir -p "$dest/$(dirname "$path")"
  cp -a "$src/$path" "$dest/$path"
done
# Hard links where the filesystem allows (the test: fast, nothing copied), a copy elsewhere.
cp -al "$src/node_modules" "$dest/node_modules" 2>/dev/null || { rm -rf "$dest/node_modules"; cp -a "$src/node_modules" "$dest/node_modules"; }
# npm rewrites its hidden lockfile in place: never through a link into the checkout's. It is
# only a cache of the tree, which npm reads without it.
rm -f "$dest/node_modules/.package-lock.json"
# Dev dependencies out: a module the service needs at run time must be a production one.
(cd "$dest" && npm prune --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
rm "$dest/package-lock.json"
