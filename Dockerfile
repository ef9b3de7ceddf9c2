# syntax=docker/dockerfile:1
# toolgate's production image (docs/DEPLOY.md). Stages: deps (npm ci), build (next build, standalone output),
# migrate (one-shot `db:migrate`), runtime (the standalone server, non-root). tests/hardening/standalone.test.ts
# assembles the runtime stage's files from this file's COPY lines and starts its CMD.

FROM node:24-bookworm-slim AS deps
WORKDIR /app
# Prisma only generates the client here; it needs no engine download (docs/decisions/001).
ENV PRISMA_SCHEMA_ENGINE_BINARY=/app/package.json PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 NEXT_TELEMETRY_DISABLED=1
COPY package.json package-lock.json prisma.config.ts ./
COPY prisma ./prisma
RUN npm ci

FROM deps AS build
COPY . .
RUN npm run db:generate && npx next build

# Applies the migrations and exits; several at once are safe (an advisory lock), so every deploy may run it.
FROM deps AS migrate
COPY lib/migrate.ts ./lib/migrate.ts
COPY scripts/migrate.ts ./scripts/migrate.ts
USER node
CMD ["npx", "tsx", "scripts/migrate.ts"]

FROM node:24-bookworm-slim AS runtime
WORKDIR /app
ENV NODE_ENV=production PORT=3000 HOSTNAME=0.0.0.0 NEXT_TELEMETRY_DISABLED=1
COPY --from=build --chown=node:node /app/.next/standalone ./
COPY --from=build --chown=node:node /app/.next/static ./.next/static
COPY --from=build --chown=node:node /app/prisma/migrations ./prisma/migrations
USER node
EXPOSE 3000
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/api/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "server.js"]
