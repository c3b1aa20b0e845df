FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY config ./config
COPY schemas ./schemas
COPY src ./src
COPY workers ./workers
USER node
EXPOSE 3000
# Liveness of an API container (compose overrides it with /readyz); worker containers have no HTTP port.
HEALTHCHECK --interval=10s --timeout=3s --retries=5 CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "bin/lookout.mjs", "api"]
