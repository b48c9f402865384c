# Runtime image for Node.js bots (grpc-js is vendored by each bundle, or taken from /opt/arena/node_modules).
# Build from the repository root:  docker build -f docker/bot-node.Dockerfile -t elfern-arena/bot-node .
# BASE_IMAGE: the public Node image by default.
ARG BASE_IMAGE=node:20-bookworm-slim
FROM ${BASE_IMAGE}
WORKDIR /opt/arena
RUN npm install --omit=dev --no-audit --no-fund @grpc/grpc-js@1 @grpc/proto-loader@0 && npm cache clean --force
COPY protos /opt/arena/protos
ENV NODE_PATH=/opt/arena/node_modules ARENA_PROTO_DIR=/opt/arena/protos
WORKDIR /bot
