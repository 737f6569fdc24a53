# node-inventory: build with the dev toolchain, run with production dependencies only.
# Node 20 is what the project is tested on; the image uses the current LTS.
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY . .
# postinstall generates the Prisma client, compiles TypeScript into dist/ and bundles the web
# pages into dist/web; runtime-image.sh then assembles the runtime's files (the container test
# runs the same script).
RUN npm ci && bash scripts/runtime-image.sh /src /app

FROM node:24-bookworm-slim
# No simulator fallback here: without a kubeconfig or in-cluster credentials the service stops
# (exit 2) and says how to point it at a cluster, or to pass --simulate N on purpose.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=4000 DATA_DIR=/data SIMULATOR_FALLBACK=false
WORKDIR /app
COPY --from=build /app ./
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 4000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||4000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The program itself, not `node` and its path: its first line starts node with the flags it is
# measured with (bin/node-inventory.js).
ENTRYPOINT ["/app/bin/node-inventory.js"]
CMD ["serve"]
