# The arena itself (CLI, referee server, web, Celery worker), used by the server and worker services of
# docker-compose.yml (docs/deploy.md). Build from the repository root:
#   docker build -f docker/arena.Dockerfile -t elfern-arena/arena .
FROM debian:12-slim
# bubblewrap + python3-seccomp + util-linux (prlimit, setpriv): the bwrap sandbox (docs/sandbox.md).
# The rest is what bundles need to build and run on a worker, as on a development machine
# (scripts/setup.sh's DEB_PACKAGES without chromium): node for Node bots, the C++ toolchain and
# Debian's gRPC for native bots.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      python3 python3-venv bubblewrap python3-seccomp util-linux ca-certificates \
      g++ gcc make pkg-config libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc nodejs \
 && rm -rf /var/lib/apt/lists/*
# The venv is built from Debian's /usr/bin/python3 on purpose: sandboxed Python bots see the
# interpreter under /usr, which the sandbox binds read-only.
COPY pyproject.toml README.md /src/
COPY arena /src/arena
RUN python3 -m venv /opt/arena \
 && /opt/arena/bin/pip install --no-cache-dir /src \
 && rm -rf /src
ENV PATH=/opt/arena/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /var/lib/arena
CMD ["arena", "--help"]
