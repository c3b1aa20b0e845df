# The dashboard is built in its own stage (esbuild, Preact and uPlot are build-time tools); the image that runs
# Lookout holds the production dependencies and the built dist/web only.
FROM node:20-bookworm-slim AS web
WORKDIR /build
COPY package.json package-lock.json ./
COPY packages ./packages
RUN npm install --no-audit --no-fund
COPY scripts/build-web.mjs ./scripts/
COPY src/web ./src/web
RUN node scripts/build-web.mjs

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
COPY package.json package-lock.json ./
COPY packages ./packages
RUN npm install --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY config ./config
COPY schemas ./schemas
COPY src ./src
COPY workers ./workers
COPY --from=web /build/dist/web ./dist/web
USER node
EXPOSE 3000
# Liveness of an API container (compose overrides it with /readyz); worker containers have no HTTP port.
HEALTHCHECK --interval=10s --timeout=3s --retries=5 CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "bin/lookout.mjs", "api"]
