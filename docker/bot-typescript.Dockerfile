# Runtime image for TypeScript bots: the Node.js bot image (grpc-js) plus the TypeScript compiler,
# for the bundle's build step (`npm ci --offline ... && tsc -p .`), pinned to Debian 12's version.
# Build from the repository root, after bot-node (NODE_IMAGE, not BASE_IMAGE, which the test
# engine of scripts/docker_engine.py passes to every Dockerfile):
#   docker build -f docker/bot-typescript.Dockerfile -t elfern-arena/bot-typescript .
ARG NODE_IMAGE=elfern-arena/bot-node:latest
FROM ${NODE_IMAGE}
RUN npm install -g --no-audit --no-fund typescript@4.8.4 && npm cache clean --force
WORKDIR /bot
