# The arena itself (CLI, referee server, web, Celery worker), used by the server and worker services of
# docker-compose.yml (docs/deploy.md). Build from the repository root:
#   docker build -f docker/arena.Dockerfile -t elfern-arena/arena .
# BASE_IMAGE is the public Debian image; the tests pass a local one built by scripts/docker_engine.py
# (debootstrap, no registry). BOT_TOOLCHAINS are the Debian packages bundles need to build and run on a
# worker: node for Node bots, the C++ toolchain and Debian's gRPC for native bots ("" leaves them out).
ARG BASE_IMAGE=debian:12-slim
FROM ${BASE_IMAGE}
ARG BOT_TOOLCHAINS="g++ gcc make pkg-config libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc nodejs"
# bubblewrap + python3-seccomp + util-linux (prlimit, setpriv): the bwrap sandbox (docs/sandbox.md);
# gcc + libc6-dev: the sandbox's static launch helper, built below (whatever BOT_TOOLCHAINS holds).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      python3 python3-venv bubblewrap python3-seccomp util-linux ca-certificates gcc libc6-dev ${BOT_TOOLCHAINS} \
 && rm -rf /var/lib/apt/lists/*
# The venv is built from Debian's /usr/bin/python3 on purpose: sandboxed Python bots see the
# interpreter under /usr, which the sandbox binds read-only.
# requirements-server.lock: the runtime and the postgres, celery and web extras (and setuptools, the
# build backend), each pinned with its hashes (CONTRIBUTING.md). Copied alone, so this slow layer is
# rebuilt only when the lock changes; the project's own install then resolves nothing and needs no
# build isolation (setuptools is already there).
COPY requirements-server.lock /src/
RUN python3 -m venv /opt/arena \
 && /opt/arena/bin/pip install --no-cache-dir --require-hashes -r /src/requirements-server.lock
COPY pyproject.toml README.md /src/
COPY arena /src/arena
RUN /opt/arena/bin/pip install --no-cache-dir --no-deps --no-build-isolation /src \
 && rm -rf /src
# The bwrap launch chain's helper (docs/sandbox.md), built into the installed package: a worker then
# never compiles it at its first launch, nor falls back to setpriv, sh and prlimit.
RUN /opt/arena/bin/python -c "from arena.sandbox import launch_helper; launch_helper.build()"
ENV PATH=/opt/arena/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /var/lib/arena
CMD ["arena", "--help"]
