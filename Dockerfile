# syntax=docker/dockerfile:1
# Node version of both stages: the one the `node` dev dependency pins for development and tests
# (node_modules/node/package.json), so the image runs what the suite ran. Bump them together.
ARG NODE_VERSION=24.21.0

# Build stage: production dependencies only (Node comes from the base image,
# so the `node` dev dependency is not needed here).
FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts

# Runtime stage: sources run directly (Node 24 strips TypeScript types), as a non-root user.
FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY src ./src
COPY config ./config
# GET /openapi.json serves these merged.
COPY openapi ./openapi
# What GET /version reports as the build: docker build --build-arg LOOPGATE_BUILD=$(git rev-parse --short HEAD) .
ARG LOOPGATE_BUILD=""
ENV LOOPGATE_BUILD=${LOOPGATE_BUILD}
USER node
EXPOSE 8080
# Healthy means ready for traffic (/readyz): a provider configured, the response store reachable,
# not draining. /healthz (process up) stays available for liveness probes elsewhere.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM drains (server.shutdownGraceMs, 30 s by default): give `docker stop` more than that (-t / stop_grace_period).
STOPSIGNAL SIGTERM
# Flags pass through: docker run --rm loopgate:local --check-config (or --help, --version).
ENTRYPOINT ["node", "src/main.ts"]
