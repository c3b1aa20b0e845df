# The dashboard and the server are built in their own stage (esbuild, Preact, uPlot and TypeScript are build-time
# tools); the image that runs Lookout holds the production dependencies, the compiled server (dist/server, with its
# source map), the built dashboard (dist/web) and the files the server reads: schemas and Redis scripts.
FROM node:20-bookworm-slim AS web
WORKDIR /build
COPY package.json package-lock.json ./
COPY packages ./packages
RUN npm install --no-audit --no-fund
COPY scripts/build-lib.mjs scripts/build-web.mjs scripts/build-server.mjs ./scripts/
COPY tsconfig.json ./
COPY config ./config
COPY src ./src
COPY workers ./workers
RUN node scripts/build-web.mjs && node scripts/build-server.mjs

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
COPY package.json package-lock.json ./
COPY packages ./packages
RUN npm install --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY schemas ./schemas
COPY src/state/scripts ./src/state/scripts
COPY --from=web /build/dist/web ./dist/web
COPY --from=web /build/dist/server ./dist/server
USER node
EXPOSE 3000
# Liveness of an API container (compose overrides it with /readyz); worker containers have no HTTP port.
HEALTHCHECK --interval=10s --timeout=3s --retries=5 CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "--enable-source-maps", "dist/server/lookout.mjs", "api"]
