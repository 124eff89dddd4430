# syntax=docker/dockerfile:1
# Build stage: production dependencies only (Node 24 comes from the base image,
# so the `node` dev dependency is not needed here).
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts

# Runtime stage: sources run directly (Node 24 strips TypeScript types), as a non-root user.
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY src ./src
COPY config ./config
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=2s --retries=3 CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "src/main.ts"]
