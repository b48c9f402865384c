# Runtime image for compiled bots (C, C++): the toolchain for the bundle's `build` step and the
# shared libraries of Debian's gRPC, so a bot built inside this image also runs in it.
# Build from the repository root:  docker build -f docker/bot-native.Dockerfile -t elfern-arena/bot-native .
# BASE_IMAGE: the public Debian image by default (scripts/docker_engine.py builds a local one).
ARG BASE_IMAGE=debian:12-slim
FROM ${BASE_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential pkg-config make \
      libgrpc++-dev libprotobuf-dev protobuf-compiler-grpc protobuf-compiler \
 && rm -rf /var/lib/apt/lists/*
COPY protos /opt/arena/protos
ENV ARENA_PROTO_DIR=/opt/arena/protos
WORKDIR /bot
