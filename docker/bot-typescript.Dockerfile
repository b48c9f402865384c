# Runtime image for TypeScript bots: the Node.js bot image (Debian's nodejs, npm) plus Debian 12's
# TypeScript compiler (node-typescript, tsc 4.8.4: the one the bwrap sandbox finds on a Debian host),
# for the bundle's build step (`npm ci --offline ... && tsc -p .`).
# Build from the repository root, after bot-node (NODE_IMAGE, not BASE_IMAGE, which the test
# engine of scripts/docker_engine.py passes to every Dockerfile):
#   docker build -f docker/bot-typescript.Dockerfile -t elfern-arena/bot-typescript .
ARG NODE_IMAGE=elfern-arena/bot-node:latest
FROM ${NODE_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends node-typescript \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /bot
