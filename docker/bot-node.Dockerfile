# Runtime image for Node.js bots: Debian's nodejs and npm (the ones the bwrap sandbox runs on a Debian
# host), for the bundle's `npm ci --offline` build and its run; grpc-js is vendored by each bundle, or
# taken from /opt/arena/node_modules.
# Build from the repository root:  docker build -f docker/bot-node.Dockerfile -t elfern-arena/bot-node .
# BASE_IMAGE: the public Debian image by default (scripts/docker_engine.py builds a local one).
# NODE_MODULES: the shared modules fetched from the npm registry; the offline test engine passes ""
# (its bundles install their own from their .npm-cache, as the sample bots do).
ARG BASE_IMAGE=debian:12-slim
FROM ${BASE_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs npm \
 && rm -rf /var/lib/apt/lists/*
ARG NODE_MODULES="@grpc/grpc-js@1 @grpc/proto-loader@0"
WORKDIR /opt/arena
RUN if [ -n "$NODE_MODULES" ]; then \
      npm install --omit=dev --no-audit --no-fund $NODE_MODULES && npm cache clean --force; \
    else mkdir -p node_modules; fi
COPY protos /opt/arena/protos
ENV NODE_PATH=/opt/arena/node_modules ARENA_PROTO_DIR=/opt/arena/protos
WORKDIR /bot
