# syntax=docker/dockerfile:1
# The Hearth server image: `docker build -t hearth .`, then `docker run -p 8080:8080 hearth` (SQLite in /data),
# or `docker compose up` for two nodes on PostgreSQL and Redis behind a proxy (README, Scaling out).
#
# The server runs its TypeScript sources (packages/server/bin/hearth.js bundles them with esbuild, a runtime
# dependency of @hearth/server, on the first start): the image holds the sources, the production dependencies
# and that bundle, made at build time because the `node` user cannot write beside the sources.

ARG NODE_IMAGE=node:22-bookworm-slim

FROM ${NODE_IMAGE} AS dependencies
WORKDIR /app
# better-sqlite3 downloads a prebuilt binary; the compiler is there for the platforms it has none for.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
COPY packages/protocol/package.json packages/protocol/
COPY packages/sdk/package.json packages/sdk/
COPY packages/server/package.json packages/server/binding.gyp packages/server/
# @hearth/server's install script builds its shared-memory view (optional: the server works without it).
COPY packages/server/native packages/server/native
# Production dependencies of every workspace, exactly as locked; the root's devDependencies (tests, lint,
# benchmarks) stay out.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
  HEARTH_HOST=0.0.0.0 \
  HEARTH_PORT=8080 \
  HEARTH_DATA_DIR=/data \
  HEARTH_DATABASE_URL=sqlite:/data/hearth.sqlite
WORKDIR /app
# node_modules keeps its workspace links (node_modules/@hearth/* → packages/*).
COPY --from=dependencies /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY packages/protocol/package.json packages/protocol/
COPY packages/protocol/src packages/protocol/src
# The client library is a workspace of the lock file; the server does not import it.
COPY packages/sdk/package.json packages/sdk/
COPY packages/server/package.json packages/server/
COPY --from=dependencies /app/packages/server/build packages/server/build
COPY packages/server/bin packages/server/bin
COPY packages/server/src packages/server/src
COPY tsconfig.base.json tsconfig.json ./
RUN node packages/server/bin/hearth.js help >/dev/null
# Not root: the `node` user (uid 1000) of the base image owns only the data directory (SQLite, attachments).
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# /healthz answers while the process serves; /readyz (database and Redis reachable, migrations applied) is
# for the load balancer. The image has no curl: Node's own fetch asks.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.HEARTH_PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM (docker stop) stops accepting, lets requests finish, tells gateway clients to resume elsewhere.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "packages/server/bin/hearth.js"]
CMD ["serve"]
