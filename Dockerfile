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
COPY scripts/patch-platformatic-kafka.mjs scripts/
# INGEST_STATE_DIR of compose and k8s: a volume mounted here starts owned by node (uid 1000).
RUN mkdir -p /var/lib/tep/ingest && chown node:node /var/lib/tep/ingest

# The demo image (docker-compose): the production code plus the simulators and their
# dependencies. Never deployed: simulators hold fixed, public credentials.
FROM base AS demo
COPY simulators simulators
RUN npm ci --omit=dev --ignore-scripts -w schemas -w libs -w services -w simulators \
 && node scripts/patch-platformatic-kafka.mjs \
 && grep -qF 'tep-patch: read_committed keeps committed records (Java rule)' node_modules/@platformatic/kafka/dist/clients/consumer/consumer.js \
 && grep -qF 'tep-patch: chunk lookups resume from the last one' node_modules/@platformatic/dynamic-buffer/dist/index.js \
 && grep -qF 'tep-patch: one buffer per produced record' node_modules/@platformatic/kafka/dist/protocol/records.js \
 && grep -qF 'tep-patch: short ASCII strings without Buffer.byteLength' node_modules/avsc/lib/utils.js \
 && grep -qF 'tep-patch: addPartitions asks once per partition of a send' node_modules/@platformatic/kafka/dist/clients/producer/transaction.js \
 && npm cache clean --force
COPY schemas schemas
USER node
ENTRYPOINT ["node"]

# The production image (default target): no simulators in it.
# The node@24 devDependency is only for machines whose system Node is older; the
# base image already is Node 24, so dev dependencies are left out. Only the
# workspaces the image runs are installed (-w with a folder selects every
# workspace in it): the test workspace's testcontainers/playwright stay out.
# Install scripts stay off (no third-party code runs at build time), so the
# project's own patches (@platformatic/kafka, its buffer, avsc) are applied explicitly, and the build
# fails if one did not take (a version bump the patch no longer matches).
FROM base AS production
RUN npm ci --omit=dev --ignore-scripts -w schemas -w libs -w services \
 && node scripts/patch-platformatic-kafka.mjs \
 && grep -qF 'tep-patch: read_committed keeps committed records (Java rule)' node_modules/@platformatic/kafka/dist/clients/consumer/consumer.js \
 && grep -qF 'tep-patch: chunk lookups resume from the last one' node_modules/@platformatic/dynamic-buffer/dist/index.js \
 && grep -qF 'tep-patch: one buffer per produced record' node_modules/@platformatic/kafka/dist/protocol/records.js \
 && grep -qF 'tep-patch: short ASCII strings without Buffer.byteLength' node_modules/avsc/lib/utils.js \
 && grep -qF 'tep-patch: addPartitions asks once per partition of a send' node_modules/@platformatic/kafka/dist/clients/producer/transaction.js \
 && npm cache clean --force
COPY schemas schemas
# uid 1000 (the image's `node` user) by number, so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
ENTRYPOINT ["node"]
