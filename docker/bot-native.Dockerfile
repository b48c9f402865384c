# Runtime image for compiled bots (C, C++): the Python bot image (its SDK holds the stdio bridge a
# C stdio bot runs behind) plus the toolchain for the bundle's `build` step and the shared libraries
# of Debian's gRPC, so a bot built inside this image also runs in it.
# Build from the repository root, after bot-python (PYTHON_IMAGE, not BASE_IMAGE: the test engine of
# scripts/docker_engine.py passes BASE_IMAGE to every Dockerfile, and this one needs the SDK):
#   docker build -f docker/bot-native.Dockerfile -t elfern-arena/bot-native .
ARG PYTHON_IMAGE=elfern-arena/bot-python:latest
FROM ${PYTHON_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends build-essential pkg-config make \
      libgrpc++-dev libprotobuf-dev protobuf-compiler-grpc protobuf-compiler \
 && rm -rf /var/lib/apt/lists/*
COPY protos /opt/arena/protos
ENV ARENA_PROTO_DIR=/opt/arena/protos
WORKDIR /bot
