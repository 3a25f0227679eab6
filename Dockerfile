# One image for every service; the container command picks the service:
#   docker run IMAGE services/transaction-ingest/src/main.ts
# Node 24 runs the TypeScript sources directly (type stripping), so there is no
# build stage. Not exercised by CI (no Docker engine on our machines).
FROM node:24-bookworm-slim
ENV NODE_ENV=production NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY schemas/package.json schemas/
COPY deploy/local/package.json deploy/local/
COPY libs libs
COPY services services
# The simulators are never deployed in production; the demo (compose) runs them from this image.
COPY simulators simulators
COPY test/package.json test/
COPY scripts/patch-kafkajs.mjs scripts/
# The node@24 devDependency is only for machines whose system Node is older; the
# base image already is Node 24, so dev dependencies are left out. Only the
# workspaces the image runs are installed (-w with a folder selects every
# workspace in it): the test workspace's testcontainers/playwright stay out.
# Install scripts stay off (no third-party code runs at build time), so the
# project's own KafkaJS patch is applied explicitly, and the build fails if it
# did not take (a KafkaJS bump that the patch no longer matches).
RUN npm ci --omit=dev --ignore-scripts -w schemas -w libs -w services -w simulators \
 && node scripts/patch-kafkajs.mjs \
 && grep -qF 'tep-patch: no idle polling (kafkajs#1704)' node_modules/kafkajs/src/network/requestQueue/index.js \
 && npm cache clean --force
COPY schemas schemas
# INGEST_STATE_DIR of the compose file: a volume mounted here starts owned by node.
RUN mkdir -p /var/lib/tep/ingest && chown node:node /var/lib/tep/ingest
USER node
ENTRYPOINT ["node"]
