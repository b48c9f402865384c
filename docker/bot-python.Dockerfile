# Runtime image for Python bots: Debian's python3 with the arena SDK, gRPC and protobuf.
# Build from the repository root:  docker build -f docker/bot-python.Dockerfile -t elfern-arena/bot-python .
# BASE_IMAGE: the public Debian image by default; the tests pass a local one (scripts/docker_engine.py).
ARG BASE_IMAGE=debian:12-slim
FROM ${BASE_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/*
# Only what a bot needs: the SDK and the generated protocol code, installed into a venv.
COPY arena/__init__.py /src/arena/__init__.py
# arena.sdk.sim (the search bots' sampler and solver) runs on the pure engine and analysis
COPY arena/engine /src/arena/engine
COPY arena/analysis /src/arena/analysis
COPY arena/sdk /src/arena/sdk
COPY arena/proto /src/arena/proto
# requirements-bot.lock: grpcio and protobuf (all the SDK imports), pinned with their hashes.
COPY requirements-bot.lock /src/
RUN python3 -m venv /opt/arena \
 && /opt/arena/bin/pip install --no-cache-dir --require-hashes -r /src/requirements-bot.lock \
 && cp -r /src/arena /opt/arena/lib/python3.11/site-packages/arena \
 && rm -rf /src
ENV PATH=/opt/arena/bin:/usr/bin:/bin PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
# The launcher passes --user UID:UID (one uid per bot), --read-only and --network none.
WORKDIR /bot
