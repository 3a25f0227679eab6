# Two targets from one file; the container command picks the service:
#   docker build -t tep:0.1.0 .                          production (the default, last stage)
#   docker build --target demo -t tep-demo:0.1.0 .       + the simulators (docker-compose)
#   docker run tep:0.1.0 services/transaction-ingest/src/main.ts
# Node 24 runs the TypeScript sources directly (type stripping), so there is no
# build stage. Our machines have no Docker engine: the test suite builds both targets
# with podman, the base image made locally under this FROM name, and runs the services
# from them (node scripts/image.ts; deploy/README.md, "Build and run the image with podman").
FROM node:24-bookworm-slim AS base
ENV NODE_ENV=production NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY schemas/package.json schemas/
COPY deploy/local/package.json deploy/local/
COPY libs libs
COPY services services
COPY test/package.json test/
COPY patches patches
# INGEST_STATE_DIR of compose and k8s: a volume mounted here starts owned by node (uid 1000).
RUN mkdir -p /var/lib/tep/ingest && chown node:node /var/lib/tep/ingest

# The demo image (docker-compose): the production code plus the simulators and their
# dependencies. Never deployed: simulators hold fixed, public credentials.
FROM base AS demo
COPY simulators simulators
RUN npm ci --omit=dev --ignore-scripts --include-workspace-root -w schemas -w libs -w services -w simulators \
 && npm run postinstall \
 && npm cache clean --force
COPY schemas schemas
USER node
ENTRYPOINT ["node"]

# The production image (default target): no simulators in it.
# The node@24 devDependency is only for machines whose system Node is older; the
# base image already is Node 24, so dev dependencies are left out. Only the
# workspaces the image runs are installed (-w with a folder selects every
# workspace in it): the test workspace's testcontainers/playwright stay out.
# Install scripts stay off (no dependency's code runs at build time), so the root's
# postinstall is run explicitly: patch-package applies patches/*.patch (@platformatic/kafka,
# its buffer, avsc) and fails the build if one does not apply or the version differs.
# --include-workspace-root installs the root's one production dependency, patch-package.
FROM base AS production
RUN npm ci --omit=dev --ignore-scripts --include-workspace-root -w schemas -w libs -w services \
 && npm run postinstall \
 && npm cache clean --force
COPY schemas schemas
# uid 1000 (the image's `node` user) by number, so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
ENTRYPOINT ["node"]
