# node-inventory: build with the dev toolchain, run with production dependencies only.
# Node 20 is what the project is tested on; the image uses the current LTS.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY . .
# postinstall generates the Prisma client and compiles TypeScript into dist/.
RUN npm ci && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=4000 DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json /app/schema.graphql ./
COPY --from=build /app/bin ./bin
COPY --from=build /app/prisma ./prisma
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/node_modules ./node_modules
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 4000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||4000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["node", "bin/node-inventory.js"]
CMD ["serve"]
