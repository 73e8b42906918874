# Gateway image: one process serves the API, the portal and the docs.
# Build stage: compile TypeScript to dist/ (plain JavaScript runs 10–30 % faster per request than tsx).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY db ./db
COPY lib ./lib
COPY openapi ./openapi
COPY identity ./identity
COPY petstore ./petstore
COPY portal ./portal
COPY gateway ./gateway
COPY cli ./cli
RUN npm run build

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# Every interface of the container: outside one, the gateway listens on loopback only by default.
ENV HOST=0.0.0.0
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --retries=3 CMD node -e "fetch('http://127.0.0.1:8080/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The gateway's Node flags, kept in step with npm start and the bench (test/node-flags.test.ts); why each: bench/support/processes.ts.
CMD ["node", "--max-semi-space-size=32", "--min-semi-space-size=32", "--no-allocation-site-pretenuring", "--no-parallel-scavenge", "--no-memory-reducer", "--heap-growing-percent=100", "dist/gateway/main.js"]
