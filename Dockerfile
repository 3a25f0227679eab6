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
# The node@24 devDependency is only for machines whose system Node is older; the
# base image already is Node 24, so dev dependencies are left out.
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY schemas schemas
USER node
ENTRYPOINT ["node"]
